import type { Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { getStatus, listStatuses, type UserStatusRow } from "../store/user-status";
import { accessUserForRead } from "./users";

/** The sparse form clients read: only non-default fields. */
export function formatStatus(s: UserStatusRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.away) out.away = true;
  if (s.statusText) out.status_text = s.statusText;
  if (s.emojiName) Object.assign(out, { emoji_name: s.emojiName, emoji_code: s.emojiCode, reaction_type: s.reactionType });
  return out;
}

/** GET /users/{id}/status: Zulip reads the user with access_user_by_id's defaults (no bots, no deactivated users). */
export async function getUserStatus(deps: AccountsDeps, who: Identity, userId: number) {
  await accessUserForRead(deps, who.realmId, userId);
  const s = await getStatus(deps.pool, who.realmId, userId);
  return s ? formatStatus(s) : {};
}

/** register's user_status: keyed by the user id as a string. */
export async function userStatusState(deps: AccountsDeps, realmId: number) {
  const rows = await listStatuses(deps.pool, realmId);
  return Object.fromEntries(rows.map((s) => [String(s.userId), formatStatus(s)]).filter(([, v]) => Object.keys(v as object).length));
}
