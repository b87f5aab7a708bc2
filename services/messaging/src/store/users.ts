import type { UserAvatarSummary, UserSummary } from "@chat/contracts";
import type { Queryable } from "@chat/platform";

/** A user as messaging's replica holds it. */
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
  dateJoined: string;
  avatarSource: "G" | "U";
  avatarVersion: number;
  avatarToken: string | null;
  /** Whether everyone may see the delivery email; null: the replica does not know (read it again). */
  emailPublic: boolean | null;
}

/** A user as accounts gives it: the summary, and what the avatar URL is built from when known. */
export type ReplicaUser = UserSummary & { avatar?: Partial<UserAvatarSummary> };

export const USER_COLUMNS =
  "user_id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, bot_type, bot_owner_id, date_joined, " +
  "avatar_source, avatar_version, avatar_token, email_public, synced_at, avatar_synced_at";

const time = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).getTime());

export function toUser(r: any): UserRow {
  return {
    id: Number(r.user_id),
    realmId: Number(r.realm_id),
    email: r.email,
    deliveryEmail: r.delivery_email,
    fullName: r.full_name,
    role: r.role,
    isActive: r.is_active,
    isBot: r.is_bot,
    botType: r.bot_type,
    botOwnerId: r.bot_owner_id === null ? null : Number(r.bot_owner_id),
    dateJoined: r.date_joined,
    avatarSource: r.avatar_source,
    avatarVersion: r.avatar_version,
    avatarToken: r.avatar_token,
    // Written by a previous release since (see the migration), the avatar fields may be stale.
    emailPublic: time(r.avatar_synced_at) === time(r.synced_at) ? r.email_public : null,
  };
}

export async function upsertUsers(db: Queryable, users: ReplicaUser[]): Promise<void> {
  if (users.length === 0) return;
  const records = users.map(({ avatar, ...u }) => ({ ...u, ...avatar }));
  // Without avatar data (a previous release's accounts) the row keeps its avatar columns, and
  // email_public null has it read again.
  await db.query(
    `INSERT INTO users (user_id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, bot_type, bot_owner_id,
       date_joined, timezone, avatar_source, avatar_version, avatar_token, email_public, synced_at, avatar_synced_at)
     SELECT user_id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, bot_type, bot_owner_id, date_joined,
       timezone, coalesce(avatar_source, 'G'), coalesce(avatar_version, 1), avatar_token, email_public, now(), now()
     FROM jsonb_to_recordset($1::jsonb) AS x(user_id bigint, realm_id bigint, email text,
       delivery_email text, full_name text, role int, is_active boolean, is_bot boolean, bot_type int,
       bot_owner_id bigint, date_joined text, timezone text, avatar_source text, avatar_version int,
       avatar_token text, email_public boolean)
     ON CONFLICT (user_id) DO UPDATE SET realm_id = EXCLUDED.realm_id, email = EXCLUDED.email,
       delivery_email = EXCLUDED.delivery_email, full_name = EXCLUDED.full_name, role = EXCLUDED.role,
       is_active = EXCLUDED.is_active, is_bot = EXCLUDED.is_bot, bot_type = EXCLUDED.bot_type,
       bot_owner_id = EXCLUDED.bot_owner_id, date_joined = EXCLUDED.date_joined,
       timezone = EXCLUDED.timezone,
       avatar_source = CASE WHEN EXCLUDED.email_public IS NULL THEN users.avatar_source ELSE EXCLUDED.avatar_source END,
       avatar_version = CASE WHEN EXCLUDED.email_public IS NULL THEN users.avatar_version ELSE EXCLUDED.avatar_version END,
       avatar_token = CASE WHEN EXCLUDED.email_public IS NULL THEN users.avatar_token ELSE EXCLUDED.avatar_token END,
       email_public = EXCLUDED.email_public, synced_at = now(), avatar_synced_at = now()`,
    [JSON.stringify(records)],
  );
}

export async function selectUsersByIds(db: Queryable, realmId: number, ids: number[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(`SELECT ${USER_COLUMNS} FROM users WHERE realm_id = $1 AND user_id = ANY($2::bigint[])`, [realmId, ids]);
  return rows.map(toUser);
}

export async function selectUsersByEmails(db: Queryable, realmId: number, emails: string[]): Promise<UserRow[]> {
  if (emails.length === 0) return [];
  const { rows } = await db.query(
    `SELECT ${USER_COLUMNS} FROM users WHERE realm_id = $1 AND lower(email) = ANY($2::text[])`,
    [realmId, emails.map((e) => e.toLowerCase())],
  );
  return rows.map(toUser);
}

export async function selectActiveUsersByNames(db: Queryable, realmId: number, lowerNames: string[]): Promise<UserRow[]> {
  if (lowerNames.length === 0) return [];
  const { rows } = await db.query(
    `SELECT ${USER_COLUMNS} FROM users WHERE realm_id = $1 AND is_active AND lower(full_name) = ANY($2::text[])`,
    [realmId, lowerNames],
  );
  return rows.map(toUser);
}

export async function selectActiveRealmUsers(db: Queryable, realmId: number): Promise<UserRow[]> {
  const { rows } = await db.query(`SELECT ${USER_COLUMNS} FROM users WHERE realm_id = $1 AND is_active ORDER BY user_id`, [realmId]);
  return rows.map(toUser);
}

export async function isRealmReplicated(db: Queryable, realmId: number): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM replica_realms WHERE realm_id = $1", [realmId]);
  return (rowCount ?? 0) > 0;
}

export async function markRealmReplicated(db: Queryable, realmId: number): Promise<void> {
  await db.query("INSERT INTO replica_realms (realm_id) VALUES ($1) ON CONFLICT DO NOTHING", [realmId]);
}
