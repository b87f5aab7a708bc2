import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import {
  OFFLINE_THRESHOLD_SECS,
  PRESENCE_STATUSES,
  presenceChange,
  presenceEvent,
  USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS,
  type PresenceStatus,
} from "../lib/presence";
import { deletePresence, getPresenceSubject, lockPresence, nextPresenceUpdateId, savePresence, type PresenceRow } from "../store/presence";
import { getRealm } from "../store/realms";
import { activeUserIds } from "../store/users";
import { activeUsersAccessing } from "../queries/user-access";

const isStatus = (s: string): s is PresenceStatus => (PRESENCE_STATUSES as readonly string[]).includes(s);

/**
 * POST /users/me/presence, the report (Zulip's update_active_status_backend and
 * do_update_user_presence). Every client sends one a minute, so the usual one, which changes
 * nothing, costs one read and no transaction. While the user does not share their presence
 * (presence_enabled off, "invisible mode") nothing is recorded, as in Zulip.
 */
export async function doUpdateUserPresence(deps: AccountsDeps, who: Identity, status: string): Promise<void> {
  if (who.isBot) throw badRequest("This endpoint does not accept bot requests.");
  if (!isStatus(status)) throw badRequest(`Invalid status: ${status}`);
  const me = await getPresenceSubject(deps.pool, who.realmId, who.userId);
  if (!me) throw badRequest("No such user");
  if (!me.presenceEnabled) return;
  const now = deps.clock.now();
  // Decided again under the locks: a concurrent report only makes the stored times newer.
  if (!presenceChange(me.hasRow ? me : null, status, now).changed) return;
  await withTx(deps.pool, (tx) => writePresenceInTx(tx, deps, me, status, now, now, { force: false, startOver: false }));
}

/**
 * presence_enabled changed (PATCH /settings, or `away` of POST /users/me/status): everyone is
 * told at once, so the user's presence matches the setting (Zulip's do_change_user_setting).
 * Turned off, the row starts over as active a little more than the offline threshold ago: the
 * user shows as offline since about when they turned it off.
 */
export async function doForcePresenceUpdateInTx(tx: Queryable, deps: AccountsDeps, realmId: number, userId: number, enabled: boolean, now: Date): Promise<void> {
  const user = await getPresenceSubject(tx, realmId, userId);
  if (!user) return;
  const logTime = enabled ? now : new Date(now.getTime() - (OFFLINE_THRESHOLD_SECS + 120) * 1000);
  await writePresenceInTx(tx, deps, user, "active", logTime, now, { force: true, startOver: !enabled });
}

/**
 * Stores a report under the organization's presence sequence lock (update ids become visible in
 * order), then tells everyone when the user first appears or comes back online; not for reports
 * others will learn by polling. Large organizations are told only of forced updates.
 */
async function writePresenceInTx(
  tx: Queryable,
  deps: AccountsDeps,
  user: PresenceRow,
  status: PresenceStatus,
  logTime: Date,
  now: Date,
  opts: { force: boolean; startOver: boolean },
): Promise<void> {
  // Every writer locks the sequence before the user's row: no two can wait on each other.
  const updateId = await nextPresenceUpdateId(tx, user.realmId);
  if (opts.startOver) await deletePresence(tx, user.realmId, user.userId);
  const row = opts.startOver ? null : await lockPresence(tx, user.realmId, user.userId);
  const change = presenceChange(row, status, logTime);
  if (change.changed) await savePresence(tx, user.realmId, user.userId, change.times, updateId);
  if (!opts.force && row !== null && !change.becameOnline) return;
  // Nobody is told of reports in an organization with presence disabled; forced updates still go (Zulip's).
  if (!opts.force && (await getRealm(tx, user.realmId))?.presenceDisabled) return;
  // Guests an organization keeps from the user do not hear of them where presence follows user access.
  const users = deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE
    ? await activeUsersAccessing(tx, deps, user.realmId, { id: user.userId, isBot: false })
    : await activeUserIds(tx, user.realmId);
  if (!opts.force && users.length > USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS) return;
  await emitEvent(tx, {
    type: "accounts.presence.changed",
    realmId: user.realmId,
    payload: { user_id: user.userId, client: { event: presenceEvent({ ...user, ...change.times }, now), users } },
  });
}
