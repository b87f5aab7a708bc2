import type { Queryable } from "@chat/platform";

export interface UserRow {
  id: number;
  realmId: number;
  email: string;
  deliveryEmail: string;
  fullName: string;
  role: number;
  isActive: boolean;
  isBot: boolean;
  botType: number | null;
  botOwnerId: number | null;
  isSystemBot: boolean;
  dateJoined: Date;
  timezone: string;
  passwordHash: string | null;
  avatarVersion: number;
  presenceEnabled: boolean;
  /** Avatar and billing role (issue 10's columns). */
  avatarSource: "G" | "U";
  avatarToken: string | null;
  isBillingAdmin: boolean;
}

export function toUser(r: any): UserRow {
  return {
    id: r.id,
    realmId: r.realm_id,
    email: r.email,
    deliveryEmail: r.delivery_email,
    fullName: r.full_name,
    role: r.role,
    isActive: r.is_active,
    isBot: r.is_bot,
    botType: r.bot_type,
    botOwnerId: r.bot_owner_id,
    isSystemBot: r.is_system_bot,
    dateJoined: r.date_joined,
    timezone: r.timezone,
    passwordHash: r.password_hash,
    avatarVersion: r.avatar_version,
    presenceEnabled: r.presence_enabled,
    avatarSource: r.avatar_source ?? "G",
    avatarToken: r.avatar_token ?? null,
    isBillingAdmin: r.is_billing_admin ?? false,
  };
}

export interface NewUser {
  realmId: number;
  email: string;
  fullName: string;
  role: number;
  isBot: boolean;
  botType: number | null;
  botOwnerId: number | null;
  isSystemBot?: boolean;
  passwordHash: string | null;
  timezone?: string;
  dateJoined: Date;
}

export async function insertUser(db: Queryable, u: NewUser): Promise<UserRow> {
  const { rows } = await db.query(
    `INSERT INTO users (realm_id, email, delivery_email, full_name, role, is_bot, bot_type, bot_owner_id,
                        is_system_bot, password_hash, timezone, date_joined)
     VALUES ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [u.realmId, u.email, u.fullName, u.role, u.isBot, u.botType, u.botOwnerId, u.isSystemBot ?? false, u.passwordHash, u.timezone ?? "", u.dateJoined],
  );
  return toUser(rows[0]);
}

export async function getUser(db: Queryable, realmId: number, userId: number): Promise<UserRow | null> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND id = $2", [realmId, userId]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function lockUser(db: Queryable, realmId: number, userId: number): Promise<UserRow | null> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND id = $2 FOR UPDATE", [realmId, userId]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function getUserByDeliveryEmail(db: Queryable, realmId: number, email: string): Promise<UserRow | null> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND lower(delivery_email) = lower($2) ORDER BY id LIMIT 1", [realmId, email]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function getUserByEmail(db: Queryable, realmId: number, email: string): Promise<UserRow | null> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND lower(email) = lower($2)", [realmId, email]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function getUsersByIds(db: Queryable, realmId: number, ids: number[]): Promise<UserRow[]> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND id = ANY($2::bigint[]) ORDER BY id", [realmId, ids]);
  return rows.map(toUser);
}

export async function getUsersByEmails(db: Queryable, realmId: number, emails: string[]): Promise<UserRow[]> {
  const { rows } = await db.query(
    "SELECT * FROM users WHERE realm_id = $1 AND lower(email) = ANY($2::text[]) ORDER BY id",
    [realmId, emails.map((e) => e.toLowerCase())],
  );
  return rows.map(toUser);
}

/**
 * Users holding one of `emails` (without case) as their API email or their delivery email: a
 * user whose address is hidden has a stand-in API email, yet their real address is taken.
 */
export async function getUsersByAddresses(db: Queryable, realmId: number, emails: string[]): Promise<UserRow[]> {
  const { rows } = await db.query(
    "SELECT * FROM users WHERE realm_id = $1 AND (lower(email) = ANY($2::text[]) OR lower(delivery_email) = ANY($2::text[])) ORDER BY id",
    [realmId, emails.map((e) => e.toLowerCase())],
  );
  return rows.map(toUser);
}

/** Users of a realm whose full name matches one of `names` without case (system bots excluded). */
export async function getUsersByFullNames(db: Queryable, realmId: number, names: string[]): Promise<UserRow[]> {
  const { rows } = await db.query(
    "SELECT * FROM users WHERE realm_id = $1 AND NOT is_system_bot AND lower(full_name) = ANY($2::text[]) ORDER BY id",
    [realmId, names.map((n) => n.toLowerCase())],
  );
  return rows.map(toUser);
}

/** Every account with this email in any organization (login by email across realms). */
export async function findUsersByLoginEmail(db: Queryable, email: string): Promise<UserRow[]> {
  const { rows } = await db.query(
    "SELECT * FROM users WHERE lower(email) = lower($1) OR lower(delivery_email) = lower($1) ORDER BY id",
    [email],
  );
  return rows.map(toUser);
}

/** Users of a realm as GET /users lists them: everyone but system bots. */
export async function listRealmUsers(db: Queryable, realmId: number): Promise<UserRow[]> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND NOT is_system_bot ORDER BY id", [realmId]);
  return rows.map(toUser);
}

/**
 * The organization's user list version (see user-list.ts and the user_list_versions migration);
 * "0" before anything moved it.
 */
export async function userListVersion(db: Queryable, realmId: number): Promise<string> {
  const { rows } = await db.query("SELECT version FROM user_list_versions WHERE realm_id = $1", [realmId]);
  return rows.length ? String(rows[0].version) : "0";
}

export async function listSystemBots(db: Queryable, realmId: number): Promise<UserRow[]> {
  const { rows } = await db.query("SELECT * FROM users WHERE realm_id = $1 AND is_system_bot ORDER BY id", [realmId]);
  return rows.map(toUser);
}

/** Ids of the active users of a realm: the audience of realm-wide client events. */
export async function activeUserIds(db: Queryable, realmId: number): Promise<number[]> {
  const { rows } = await db.query("SELECT id FROM users WHERE realm_id = $1 AND is_active AND NOT is_system_bot ORDER BY id", [realmId]);
  return rows.map((r) => r.id);
}

/**
 * The audience of realm-wide client events (as activeUserIds), the guests among them, and the
 * organization's can_access_all_users_group, read in one statement: who may hear about a user
 * where the organization limits guests, at no extra cost where it does not.
 */
export async function activeAudience(db: Queryable, realmId: number): Promise<{ userIds: number[]; guestIds: number[]; canAccessAllUsersGroup: string }> {
  const { rows } = await db.query(
    `SELECT r.can_access_all_users_group, u.id, u.role
       FROM realms r LEFT JOIN users u ON u.realm_id = r.id AND u.is_active AND NOT u.is_system_bot
      WHERE r.id = $1 ORDER BY u.id`,
    [realmId],
  );
  const users = rows.filter((r) => r.id !== null);
  return {
    userIds: users.map((r) => Number(r.id)),
    guestIds: users.filter((r) => r.role === 600).map((r) => Number(r.id)),
    canAccessAllUsersGroup: rows[0]?.can_access_all_users_group ?? "role:everyone",
  };
}

/** Ids of the organization's active guests (whose access to users the organization may limit). */
export async function activeGuestIds(db: Queryable, realmId: number): Promise<number[]> {
  const { rows } = await db.query("SELECT id FROM users WHERE realm_id = $1 AND is_active AND role = 600 ORDER BY id", [realmId]);
  return rows.map((r) => Number(r.id));
}

/** Ids of the organization's active human owners and administrators. */
export async function activeHumanAdminIds(db: Queryable, realmId: number): Promise<number[]> {
  const { rows } = await db.query("SELECT id FROM users WHERE realm_id = $1 AND is_active AND NOT is_bot AND role <= 200 ORDER BY id", [realmId]);
  return rows.map((r) => Number(r.id));
}

/** Active accounts of a realm, its users' bots included (the system bots are not its own in Zulip). */
export async function countActiveUsers(db: Queryable, realmId: number): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM users WHERE realm_id = $1 AND is_active AND NOT is_system_bot", [realmId]);
  return rows[0].n;
}

export async function countActiveOwners(db: Queryable, realmId: number): Promise<number> {
  const { rows } = await db.query(
    "SELECT count(*)::int AS n FROM users WHERE realm_id = $1 AND is_active AND NOT is_bot AND role = 100",
    [realmId],
  );
  return rows[0].n;
}

export async function setUserActive(db: Queryable, realmId: number, userId: number, active: boolean): Promise<UserRow> {
  const { rows } = await db.query("UPDATE users SET is_active = $3 WHERE realm_id = $1 AND id = $2 RETURNING *", [realmId, userId, active]);
  return toUser(rows[0]);
}

export async function activeBotsOwnedBy(db: Queryable, realmId: number, ownerId: number): Promise<UserRow[]> {
  const { rows } = await db.query(
    "SELECT * FROM users WHERE realm_id = $1 AND bot_owner_id = $2 AND is_bot AND is_active ORDER BY id",
    [realmId, ownerId],
  );
  return rows.map(toUser);
}

/** Whether an active account of the organization other than `exceptId` has exactly this name (Zulip's bot-name check). */
export async function activeUserHasFullName(db: Queryable, realmId: number, fullName: string, exceptId: number | null): Promise<boolean> {
  const { rowCount } = await db.query(
    "SELECT 1 FROM users WHERE realm_id = $1 AND is_active AND full_name = $2 AND ($3::bigint IS NULL OR id <> $3)",
    [realmId, fullName, exceptId],
  );
  return (rowCount ?? 0) > 0;
}

export async function setPresenceEnabled(db: Queryable, realmId: number, userId: number, enabled: boolean): Promise<void> {
  await db.query("UPDATE users SET presence_enabled = $3 WHERE realm_id = $1 AND id = $2", [realmId, userId, enabled]);
}

/** Full names of the organization's users, deactivated ones and bots too (not system bots), but one. */
export async function realmFullNames(db: Queryable, realmId: number, exceptUserId: number | null): Promise<string[]> {
  const { rows } = await db.query("SELECT full_name FROM users WHERE realm_id = $1 AND NOT is_system_bot AND id IS DISTINCT FROM $2", [realmId, exceptUserId]);
  return rows.map((r) => r.full_name as string);
}

/**
 * Of these users, those whose email address has an active human account in another active
 * organization too (Zulip's rule for naming the organization in notification mails' subjects).
 */
export async function selectUsersWithAccountsInOtherRealms(db: Queryable, realmId: number, userIds: number[]): Promise<Set<number>> {
  if (userIds.length === 0) return new Set();
  const { rows } = await db.query(
    `SELECT u.id FROM users u
      WHERE u.realm_id = $1 AND u.id = ANY($2::bigint[])
        AND EXISTS (SELECT 1 FROM users o JOIN realms r ON r.id = o.realm_id
                     WHERE lower(o.delivery_email) = lower(u.delivery_email) AND o.realm_id <> u.realm_id
                       AND o.is_active AND NOT o.is_bot AND NOT r.deactivated)`,
    [realmId, userIds],
  );
  return new Set(rows.map((r) => Number(r.id)));
}
