import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { checkEmoji, emojiNameToCode, realmEmojiLookups } from "../lib/emoji";
import { doLoadRealmEmoji } from "./realm-emoji";
import { upsertStatus } from "../store/user-status";
import { getUser, setPresenceEnabled } from "../store/users";
import { activeUsersAccessing } from "../queries/user-access";
import { doForcePresenceUpdateInTx } from "./presence";
import { notifySettingChanged } from "./settings";

export const MAX_STATUS_TEXT = 60;

export interface StatusInput {
  statusText?: string;
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
  away?: boolean;
}

/** POST /users/me/status (spec 4.7): only passed fields change; the event carries only those. */
export async function doUpdateOwnStatus(deps: AccountsDeps, who: Identity, p: StatusInput): Promise<void> {
  if (who.isBot) throw badRequest("This endpoint does not accept bot requests.");
  const statusText = p.statusText?.trim();
  if (p.away === undefined && statusText === undefined && p.emojiName === undefined) {
    throw badRequest("Client did not pass any new values.");
  }
  if (statusText !== undefined && [...statusText].length > MAX_STATUS_TEXT) {
    throw badRequest(`status_text is too long (limit: ${MAX_STATUS_TEXT} characters)`);
  }
  let emoji: { name: string; code: string; type: string } | undefined;
  if (p.emojiName === "") {
    emoji = { name: "", code: "", type: "unicode_emoji" };
  } else if (p.emojiName !== undefined) {
    const name = p.emojiName;
    const byName = p.emojiCode === undefined || p.reactionType === undefined;
    // Custom emoji live in messaging; the replica is read only when they can matter.
    const custom = realmEmojiLookups(
      byName || p.reactionType === "realm_emoji"
        ? await doLoadRealmEmoji(deps, who.realmId, (all) => all.some((e) => (byName ? e.name === name && !e.deactivated : String(e.id) === p.emojiCode)))
        : [],
    );
    const found = byName ? emojiNameToCode(name, custom.activeIdByName) : undefined;
    const code = p.emojiCode ?? found!.code;
    const type = p.reactionType ?? found!.type;
    checkEmoji(name, code, type, custom.byId);
    emoji = { name: p.emojiName, code, type };
  } else if (p.emojiCode !== undefined || p.reactionType !== undefined) {
    throw badRequest("Client must pass emoji_name if they pass either emoji_code or reaction_type.");
  }

  await withTx(deps.pool, async (tx) => {
    // Guests an organization keeps from the user do not hear of their status (Zulip's do_update_user_status).
    const users = await activeUsersAccessing(tx, deps, who.realmId, { id: who.userId, isBot: false });
    if (p.away !== undefined) {
      // `away` is stored as the inverse of presence_enabled, a user setting with its own events
      // (and the legacy update_global_notifications), as Zulip's do_change_user_setting sends.
      await setPresenceEnabled(tx, who.realmId, who.userId, !p.away);
      const user = await getUser(tx, who.realmId, who.userId);
      if (user) await notifySettingChanged(tx, user, "presence_enabled", !p.away);
      await doForcePresenceUpdateInTx(tx, deps, who.realmId, who.userId, !p.away, deps.clock.now());
    }
    await upsertStatus(tx, who.realmId, who.userId, { statusText, emojiName: emoji?.name, emojiCode: emoji?.code, reactionType: emoji?.type }, deps.clock.now());
    const event: Record<string, unknown> = { type: "user_status", user_id: who.userId };
    if (p.away !== undefined) event.away = p.away;
    if (statusText !== undefined) event.status_text = statusText;
    if (emoji) Object.assign(event, { emoji_name: emoji.name, emoji_code: emoji.code, reaction_type: emoji.type });
    await emitEvent(tx, { type: "accounts.user_status.updated", realmId: who.realmId, payload: { user_id: who.userId, client: { event, users } } });
  });
}
