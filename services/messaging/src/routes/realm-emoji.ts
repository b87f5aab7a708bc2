import type { FastifyReply, FastifyRequest } from "fastify";
import { pipeline } from "node:stream/promises";
import { DeactivateRealmEmoji, GetRealmEmoji, GetRealmEmojiImage, GetRealmEmojiStillImage, InternalGetRealmEmoji, UploadRealmEmoji } from "@chat/contracts";
import { ApiError, badRequest, INTERNAL_HEADERS, registerRoute } from "@chat/platform";
import { checkCanUploadRealmEmoji, doDeactivateRealmEmoji, doUploadRealmEmoji, MAX_EMOJI_FILE_SIZE_MIB, type EmojiFile } from "../actions/realm-emoji";
import type { AppDeps, RoutePlugin } from "../deps";
import { accessRealmEmojiImage, getRealmEmojiDict } from "../queries/realm-emoji";
import type { FileStorage } from "../storage";

/** Reads the one file part of the upload into memory (it is at most a few MiB). */
async function receiveEmojiFile(req: FastifyRequest, maxBytes: number): Promise<EmojiFile> {
  let count = 0;
  let file: EmojiFile | null = null;
  if (req.isMultipart()) {
    try {
      // A file past the limit, or a third file, ends the loop with an error.
      for await (const part of req.parts({ limits: { fileSize: maxBytes, files: 2 } })) {
        if (part.type !== "file") continue;
        if (++count > 1) {
          part.file.resume();
          continue;
        }
        const chunks: Buffer[] = [];
        for await (const chunk of part.file) chunks.push(chunk as Buffer);
        file = { bytes: Buffer.concat(chunks), truncated: part.file.truncated, contentType: part.mimetype || "application/octet-stream" };
      }
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "FST_FILES_LIMIT") count = Infinity;
      // The first file went past the limit: its bytes are not needed to say so.
      else if (code !== "FST_REQ_FILE_TOO_LARGE") throw err;
      else if (count === 1) file = { bytes: Buffer.alloc(0), truncated: true, contentType: "" };
    }
  }
  if (count !== 1 || !file) throw badRequest("You must upload exactly one file.");
  return file;
}

const notFound = () => new ApiError("BAD_REQUEST", "File not found", { status: 404 });

async function sendImage(reply: FastifyReply, req: FastifyRequest, storage: FileStorage, key: string, contentType: string) {
  const file = await storage.get(key);
  if (!file) {
    req.log.error({ key }, "custom emoji without a stored image");
    throw notFound();
  }
  reply.hijack();
  reply.raw.writeHead(200, {
    "content-type": contentType,
    "content-length": String(file.size),
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    // An emoji's file never changes (a new upload is a new file name).
    "cache-control": "public, max-age=31536000",
    [INTERNAL_HEADERS.requestId]: req.id,
  });
  await pipeline(file.stream, reply.raw).catch((err) => req.log.warn({ err: (err as Error).message }, "emoji download interrupted"));
}

/** Custom emoji: the list, upload, deactivation and the images; uploads go to `storage`. */
export function realmEmojiRoutes(storage: FileStorage, opts: { maxBytes?: number } = {}): RoutePlugin {
  const maxBytes = opts.maxBytes ?? MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024;
  return (app, deps: AppDeps) => {
    registerRoute(app, GetRealmEmoji, async ({ identity }) => ({ emoji: await getRealmEmojiDict(deps.pool, identity.realmId) }));
    // Accounts' replica reads through on a miss (status emoji).
    registerRoute(app, InternalGetRealmEmoji, async ({ params }) => ({ emoji: await getRealmEmojiDict(deps.pool, params.realm_id) }));

    registerRoute(app, UploadRealmEmoji, async ({ params, identity, req }) => {
      const name = await checkCanUploadRealmEmoji(deps, identity, params.emoji_name);
      const file = await receiveEmojiFile(req, maxBytes);
      await doUploadRealmEmoji(deps, storage, identity, name, file, maxBytes);
      return {};
    });

    registerRoute(app, DeactivateRealmEmoji, async ({ params, identity }) => {
      await doDeactivateRealmEmoji(deps, identity, params.emoji_name);
      return {};
    });

    registerRoute(app, GetRealmEmojiImage, async ({ params, req, reply }) => {
      const image = await accessRealmEmojiImage(deps.pool, params.realm_id_str, params.filename, false);
      if (!image) throw notFound();
      await sendImage(reply, req, storage, image.key, image.contentType);
      return {};
    });

    registerRoute(app, GetRealmEmojiStillImage, async ({ params, req, reply }) => {
      const image = await accessRealmEmojiImage(deps.pool, params.realm_id_str, params.filename, true);
      if (!image) throw notFound();
      await sendImage(reply, req, storage, image.key, image.contentType);
      return {};
    });
  };
}
