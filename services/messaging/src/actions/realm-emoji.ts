import { emojiCodeByName, MessagingRealmEmojiUpdated } from "@chat/contracts";
import { ApiError, badRequest, emitEvent, resourceNotFound, withTx, type Identity, type Queryable } from "@chat/platform";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { AppDeps } from "../deps";
import { checkValidEmojiName, normalizeCustomEmojiName } from "../lib/emoji";
import { EMOJI_IMAGE_TYPES, IMAGE_EXTENSIONS, imageDimensions, sniffImage, stillImage } from "../lib/image";
import { isAdminRole, isGuestRole, passesCommonPolicy } from "../lib/permissions";
import { emojiImageKey, emojiStillKey, getRealmEmojiDict } from "../queries/realm-emoji";
import { getActiveRealmUsers, getUser } from "../queries/users";
import type { FileStorage } from "../storage";
import { deactivateRealmEmoji, insertRealmEmoji, lockRealmEmoji, selectActiveRealmEmojiByName } from "../store/realm-emoji";

/** Zulip's MAX_EMOJI_FILE_SIZE_MIB default. */
export const MAX_EMOJI_FILE_SIZE_MIB = 5;

/** Zulip's IMAGE_BOMB_TOTAL_PIXELS: images claiming more pixels are refused. */
const IMAGE_BOMB_TOTAL_PIXELS = 90_000_000;

const badImage = (msg: string) => new ApiError("BAD_IMAGE", msg);

export interface EmojiFile {
  bytes: Buffer;
  /** The file went past the size limit (its bytes are cut there). */
  truncated: boolean;
  /** The type the client declared for the file part. */
  contentType: string;
}

/**
 * The checks of Zulip's upload_emoji that come before the file is read, in its order: no guests
 * and no bots (require_member_or_admin), a valid name, the organization's
 * add_custom_emoji_policy, a name no active custom emoji has. Returns the normalized name.
 */
export async function checkCanUploadRealmEmoji(deps: AppDeps, who: Identity, rawName: string): Promise<string> {
  if (isGuestRole(who.role)) throw badRequest("Not allowed for guest users");
  if (who.isBot) throw badRequest("This endpoint does not accept bot requests.");
  const name = normalizeCustomEmojiName(rawName);
  checkValidEmojiName(name);
  const [realm, user] = await Promise.all([deps.accounts.getRealm(who.realmId), getUser(deps, who.realmId, who.userId)]);
  const policy = realm.settings.add_custom_emoji_policy ?? 1;
  const actor = { role: who.role, dateJoined: user?.dateJoined ?? "" };
  if (!passesCommonPolicy(policy, actor, realm.settings.waiting_period_threshold, deps.clock.now())) throw badRequest("Insufficient permission");
  if (await selectActiveRealmEmojiByName(deps.pool, who.realmId, name)) throw badRequest("A custom emoji with this name already exists.");
  return name;
}

/**
 * POST /realm/emoji/{name}, once the file is read: Zulip's remaining checks (overriding a Unicode
 * emoji's name is for administrators; size; an image of an accepted format), then the emoji, its
 * image (and a still one when it animates) and the whole dictionary to the organization.
 */
export async function doUploadRealmEmoji(deps: AppDeps, storage: FileStorage, who: Identity, name: string, file: EmojiFile, maxBytes: number): Promise<void> {
  if (emojiCodeByName(name) && !isAdminRole(who.role)) throw badRequest("Only administrators can override default emoji.");
  if (file.truncated || file.bytes.length > maxBytes) {
    throw badRequest(`Uploaded file is larger than the allowed limit of ${Number((maxBytes / 1024 / 1024).toPrecision(3))} MiB`);
  }
  if (!(EMOJI_IMAGE_TYPES as readonly string[]).includes(file.contentType.toLowerCase())) throw badImage("Invalid image format");
  const image = sniffImage(file.bytes);
  if (!image) throw badImage("Could not decode image; did you upload an image file?");
  const size = imageDimensions(file.bytes, image.type);
  if (size && size.width * size.height > IMAGE_BOMB_TOTAL_PIXELS) throw badImage("Image size exceeds limit.");
  const still = image.animated ? stillImage(file.bytes, image.type) : null;
  const written: string[] = [];
  try {
    await withTx(deps.pool, async (tx) => {
      await lockRealmEmoji(tx, who.realmId);
      // A concurrent upload of the same name got there first.
      if (await selectActiveRealmEmojiByName(tx, who.realmId, name)) throw badRequest("A custom emoji with this name already exists.");
      const row = await insertRealmEmoji(tx, {
        realmId: who.realmId,
        name,
        authorId: who.userId,
        token: randomBytes(12).toString("base64url"),
        extension: IMAGE_EXTENSIONS[image.type],
        contentType: image.type,
        // Without a still image clients are told nothing animates (still_url null).
        isAnimated: still !== null,
        dateCreated: deps.clock.now(),
      });
      const put = async (key: string, bytes: Buffer, contentType: string) => {
        written.push(key);
        await storage.put(key, Readable.from([bytes]), { contentType, maxBytes: bytes.length });
      };
      await put(emojiImageKey(row.realmId, row.fileName), file.bytes, image.type);
      if (still) await put(emojiStillKey(row.realmId, row.id), still, "image/png");
      await notifyRealmEmoji(deps, tx, who.realmId);
    });
  } catch (err) {
    for (const key of written) await storage.delete(key).catch(() => {});
    throw err;
  }
}

/**
 * DELETE /realm/emoji/{name}: Zulip's delete_emoji. The active emoji of that name is deactivated
 * (kept: old reactions still show it) by an administrator or its author.
 */
export async function doDeactivateRealmEmoji(deps: AppDeps, who: Identity, name: string): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    await lockRealmEmoji(tx, who.realmId);
    const emoji = await selectActiveRealmEmojiByName(tx, who.realmId, name);
    if (!emoji) throw resourceNotFound(`Emoji '${name}' does not exist`);
    if (!isAdminRole(who.role) && emoji.authorId !== who.userId) throw badRequest("Must be an organization administrator or emoji author");
    await deactivateRealmEmoji(tx, who.realmId, emoji.id);
    await notifyRealmEmoji(deps, tx, who.realmId);
  });
}

/** Zulip's notify_realm_emoji: the whole dictionary, deactivated emoji included, to every active user. */
async function notifyRealmEmoji(deps: AppDeps, tx: Queryable, realmId: number): Promise<void> {
  const realmEmoji = await getRealmEmojiDict(tx, realmId);
  const users = (await getActiveRealmUsers(deps, realmId)).map((u) => u.id);
  await emitEvent(tx, {
    type: "messaging.realm_emoji.updated",
    realmId,
    payload: MessagingRealmEmojiUpdated.parse({
      realm_emoji: realmEmoji,
      client: { event: { type: "realm_emoji", op: "update", realm_emoji: realmEmoji }, users },
    }),
  });
}
