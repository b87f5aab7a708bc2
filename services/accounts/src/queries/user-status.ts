import type { Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { getStatus, listStatuses, type UserStatusRow } from "../store/user-status";
import { accessUserForRead } from "./users";
import { checkCanAccessUser } from "./user-access";

/** The sparse form clients read: only non-default fields. */
export function formatStatus(s: UserStatusRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.away) out.away = true;
  if (s.statusText) out.status_text = s.statusText;
  if (s.emojiName) Object.assign(out, { emoji_name: s.emojiName, emoji_code: s.emojiCode, reaction_type: s.reactionType });
  return out;
}

/**
 * GET /users/{id}/status: Zulip reads the user with access_user_by_id's defaults (no bots, no
 * deactivated users, none a limited guest does not access).
 */
export async function getUserStatus(deps: AccountsDeps, who: Identity, userId: number) {
  const target = await accessUserForRead(deps, who.realmId, userId);
  await checkCanAccessUser(deps, who, target, "Insufficient permission");
  const s = await getStatus(deps.pool, who.realmId, userId);
  return s ? formatStatus(s) : {};
}

/**
 * register's user_status: keyed by the user id as a string. A guest the organization limits
 * (`accessible` not null) gets only the statuses of the users they access, as Zulip's
 * get_all_users_status_dict.
 */
export async function userStatusState(deps: AccountsDeps, realmId: number, accessible: Set<number> | null) {
  const rows = (await listStatuses(deps.pool, realmId)).filter((s) => accessible?.has(s.userId) ?? true);
  return Object.fromEntries(rows.map((s) => [String(s.userId), formatStatus(s)]).filter(([, v]) => Object.keys(v as object).length));
}
