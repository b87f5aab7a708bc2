import type { LegacyPresence, ModernPresence } from "@chat/contracts";
import { badRequest, type Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { legacyClientPresence, legacyPresence, modernPresence, OFFLINE_THRESHOLD_SECS, PRESENCE_HISTORY_LIMIT_DAYS, unixSeconds } from "../lib/presence";
import { getUserPresence, listRealmPresence, type PresenceRow } from "../store/presence";
import { getRealm, type RealmRow } from "../store/realms";
import { getUser, getUserByEmail } from "../store/users";
import { accessibleUserIds, checkCanAccessUser } from "./user-access";

export interface PresenceQuery {
  /** Modern format, keyed by user id (else legacy, keyed by API email). */
  slim: boolean;
  /** Only what changed after this id; -1 (or 0) for everything. */
  lastUpdateId?: number;
  /** How far back a first fetch goes; 0 fetches nothing. */
  historyLimitDays?: number;
}

export interface RealmPresences<P = ModernPresence | LegacyPresence> {
  presences: Record<string, P>;
  /** The newest update id among them; else the client's own, or -1. */
  presence_last_update_id: number;
  server_timestamp: number;
}

const DAY_MS = 86_400_000;
/** Beyond any presence row; keeps the date in PostgreSQL's range. */
const MAX_HISTORY_DAYS = 100_000;

/**
 * Presence of the organization's active human users (Zulip's get_presence_response), as `who`
 * may see it. The first fetch is limited to those connected in the last `historyLimitDays` (14);
 * once the client has data (lastUpdateId > 0) the update id alone limits it.
 */
export async function getRealmPresences(deps: AccountsDeps, who: Identity, q: PresenceQuery & { slim: false }): Promise<RealmPresences<LegacyPresence>>;
export async function getRealmPresences(deps: AccountsDeps, who: Identity, q: PresenceQuery, accessible?: AccessibleUsers): Promise<RealmPresences>;
export async function getRealmPresences(deps: AccountsDeps, who: Identity, q: PresenceQuery, accessible?: AccessibleUsers): Promise<RealmPresences> {
  const now = deps.clock.now();
  let rows: PresenceRow[] = [];
  const realm = q.historyLimitDays !== 0 ? await getRealm(deps.pool, who.realmId) : null;
  // An organization with presence disabled shows nobody's (Zulip's get_presences_for_realm).
  if (realm && !realm.presenceDisabled) {
    const filter: { afterUpdateId?: number; connectedSince?: Date } = {};
    if (q.lastUpdateId !== undefined) filter.afterUpdateId = q.lastUpdateId;
    if (q.lastUpdateId === undefined || q.lastUpdateId <= 0) {
      const days = Math.max(-MAX_HISTORY_DAYS, Math.min(q.historyLimitDays ?? PRESENCE_HISTORY_LIMIT_DAYS, MAX_HISTORY_DAYS));
      filter.connectedSince = new Date(now.getTime() - days * DAY_MS);
    }
    const [all, seen] = await Promise.all([listRealmPresence(deps.pool, who.realmId, filter), presenceLimitOf(deps, realm, who, accessible)]);
    rows = seen ? all.filter((r) => seen.has(r.userId)) : all;
  }
  const lastUpdateId = rows.length ? rows.reduce((max, r) => Math.max(max, r.lastUpdateId), 0) : (q.lastUpdateId ?? -1);
  const presences = q.slim
    ? Object.fromEntries(rows.map((r) => [String(r.userId), modernPresence(r)]))
    : Object.fromEntries(rows.map((r) => [r.email, legacyPresence(r)]));
  return { presences, presence_last_update_id: lastUpdateId, server_timestamp: now.getTime() / 1000 };
}

/** The humans a limited guest accesses, or null for every user (register shares its answer). */
type AccessibleUsers = () => Promise<Set<number> | null>;

/**
 * Whose presence `who` may see where the server limits presence with user access
 * (CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE): a guest of an organization that limits guests
 * sees only the users they access; null (everyone) otherwise, at no cost.
 */
async function presenceLimitOf(deps: AccountsDeps, realm: RealmRow, who: Identity, accessible?: AccessibleUsers): Promise<Set<number> | null> {
  if (!deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE) return null;
  return accessible ? accessible() : accessibleUserIds(deps, realm, { id: who.userId, role: who.role });
}

/** Register's presence state (Zulip's fetch_initial_state_data): a first fetch. */
export function presenceRegisterState(deps: AccountsDeps, who: Identity, p: { slim_presence?: boolean; presence_history_limit_days?: number }, accessible: AccessibleUsers) {
  return getRealmPresences(deps, who, { slim: p.slim_presence ?? false, historyLimitDays: p.presence_history_limit_days }, accessible);
}

/**
 * GET /users/{user_id_or_email}/presence (Zulip's get_presence_backend): any user of the
 * organization, deactivated ones included, by id or API email; bots have no presence.
 * `aggregated` reads "offline" once the last report is older than the offline threshold.
 */
export async function getOneUserPresence(deps: AccountsDeps, who: Identity, userIdOrEmail: string) {
  const trimmed = userIdOrEmail.trim();
  const target = /^[+-]?\d+$/.test(trimmed)
    ? Number.isSafeInteger(Number(trimmed)) ? await getUser(deps.pool, who.realmId, Number(trimmed)) : null
    : await getUserByEmail(deps.pool, who.realmId, trimmed);
  if (!target) throw badRequest("No such user");
  if (target.isBot) throw badRequest("Presence is not supported for bot users.");
  if (deps.config.CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE) await checkCanAccessUser(deps, who, target, "Insufficient permission");
  const row = await getUserPresence(deps.pool, who.realmId, target.id);
  if (!row) throw badRequest(`No presence data for ${userIdOrEmail}`);
  const { status, timestamp } = legacyClientPresence(row);
  const offline = unixSeconds(deps.clock.now()) - timestamp > OFFLINE_THRESHOLD_SECS;
  return { presence: { aggregated: { status: offline ? ("offline" as const) : status, timestamp }, website: { status, timestamp } } };
}
