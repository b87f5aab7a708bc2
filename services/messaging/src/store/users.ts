import type { UserSummary } from "@chat/contracts";
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
}

export const USER_COLUMNS = "user_id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, bot_type, bot_owner_id, date_joined";

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
  };
}

export async function upsertUsers(db: Queryable, users: UserSummary[]): Promise<void> {
  if (users.length === 0) return;
  await db.query(
    `INSERT INTO users (${USER_COLUMNS}, timezone, synced_at)
     SELECT * , now() FROM jsonb_to_recordset($1::jsonb) AS x(user_id bigint, realm_id bigint, email text,
       delivery_email text, full_name text, role int, is_active boolean, is_bot boolean, bot_type int,
       bot_owner_id bigint, date_joined text, timezone text)
     ON CONFLICT (user_id) DO UPDATE SET realm_id = EXCLUDED.realm_id, email = EXCLUDED.email,
       delivery_email = EXCLUDED.delivery_email, full_name = EXCLUDED.full_name, role = EXCLUDED.role,
       is_active = EXCLUDED.is_active, is_bot = EXCLUDED.is_bot, bot_type = EXCLUDED.bot_type,
       bot_owner_id = EXCLUDED.bot_owner_id, date_joined = EXCLUDED.date_joined,
       timezone = EXCLUDED.timezone, synced_at = now()`,
    [JSON.stringify(users)],
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
