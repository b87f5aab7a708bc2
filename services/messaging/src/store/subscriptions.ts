import type { Queryable } from "@chat/platform";

export interface SubscriptionRow {
  userId: number;
  streamId: number;
  active: boolean;
  color: string;
  isMuted: boolean;
  pinToTop: boolean;
  desktopNotifications: boolean | null;
  audibleNotifications: boolean | null;
  pushNotifications: boolean | null;
  emailNotifications: boolean | null;
  wildcardMentionsNotify: boolean | null;
}

export const SUBSCRIPTION_COLUMNS = `user_id, stream_id, active, color, is_muted, pin_to_top, desktop_notifications, audible_notifications,
  push_notifications, email_notifications, wildcard_mentions_notify`;

export function toSub(r: any): SubscriptionRow {
  return {
    userId: Number(r.user_id),
    streamId: Number(r.stream_id),
    active: r.active,
    color: r.color,
    isMuted: r.is_muted,
    pinToTop: r.pin_to_top,
    desktopNotifications: r.desktop_notifications,
    audibleNotifications: r.audible_notifications,
    pushNotifications: r.push_notifications,
    emailNotifications: r.email_notifications,
    wildcardMentionsNotify: r.wildcard_mentions_notify,
  };
}

/** All of a user's subscription rows, active or not. */
export async function selectUserSubscriptions(db: Queryable, realmId: number, userId: number): Promise<SubscriptionRow[]> {
  const { rows } = await db.query(`SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE realm_id = $1 AND user_id = $2 ORDER BY stream_id`, [realmId, userId]);
  return rows.map(toSub);
}

export async function selectSubscription(db: Queryable, realmId: number, userId: number, streamId: number): Promise<SubscriptionRow | null> {
  const { rows } = await db.query(`SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE realm_id = $1 AND user_id = $2 AND stream_id = $3`, [realmId, userId, streamId]);
  return rows[0] ? toSub(rows[0]) : null;
}

/** Rows of these (user, stream) pairs, locked for update. */
export async function selectSubscriptionsForUpdate(db: Queryable, realmId: number, userIds: number[], streamIds: number[]): Promise<SubscriptionRow[]> {
  if (userIds.length === 0 || streamIds.length === 0) return [];
  const { rows } = await db.query(
    `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE realm_id = $1 AND user_id = ANY($2::bigint[]) AND stream_id = ANY($3::bigint[]) FOR UPDATE`,
    [realmId, userIds, streamIds],
  );
  return rows.map(toSub);
}

/** Active subscribers who are active users, per channel. */
export async function selectSubscriberIds(db: Queryable, realmId: number, streamIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(streamIds.map((id) => [id, []]));
  if (streamIds.length === 0) return out;
  const { rows } = await db.query(
    `SELECT s.stream_id, s.user_id FROM subscriptions s JOIN users u ON u.user_id = s.user_id AND u.is_active
      WHERE s.realm_id = $1 AND s.stream_id = ANY($2::bigint[]) AND s.active ORDER BY s.user_id`,
    [realmId, streamIds],
  );
  for (const r of rows) out.get(Number(r.stream_id))?.push(Number(r.user_id));
  return out;
}

/** Subscription rows (with is_muted) of a channel's active subscribers. */
export async function selectStreamSubscriptions(db: Queryable, realmId: number, streamId: number): Promise<SubscriptionRow[]> {
  const { rows } = await db.query(
    `SELECT ${SUBSCRIPTION_COLUMNS.split(",").map((c) => "s." + c.trim()).join(", ")} FROM subscriptions s
       JOIN users u ON u.user_id = s.user_id AND u.is_active
      WHERE s.realm_id = $1 AND s.stream_id = $2 AND s.active`,
    [realmId, streamId],
  );
  return rows.map(toSub);
}

export async function countUserSubscriptions(db: Queryable, realmId: number, userId: number): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM subscriptions WHERE realm_id = $1 AND user_id = $2", [realmId, userId]);
  return rows[0].n;
}

/**
 * Subscribes (a new row, or an inactive one made active; its personal settings kept); false when
 * the subscription was active already. A lock taken before cannot cover a row that does not
 * exist yet: of two subscribes at once, the second waits here for the first's row and then finds
 * it active.
 */
export async function upsertActiveSubscription(db: Queryable, realmId: number, userId: number, streamId: number, color: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO subscriptions (realm_id, user_id, stream_id, active, color) VALUES ($1, $2, $3, true, $4)
     ON CONFLICT (user_id, stream_id) DO UPDATE SET active = true WHERE NOT subscriptions.active`,
    [realmId, userId, streamId, color],
  );
  return (rowCount ?? 0) > 0;
}

export async function deactivateSubscription(db: Queryable, realmId: number, userId: number, streamId: number): Promise<void> {
  await db.query("UPDATE subscriptions SET active = false WHERE realm_id = $1 AND user_id = $2 AND stream_id = $3", [realmId, userId, streamId]);
}

const PROPERTY_COLUMNS: Record<string, string> = {
  color: "color",
  is_muted: "is_muted",
  pin_to_top: "pin_to_top",
  desktop_notifications: "desktop_notifications",
  audible_notifications: "audible_notifications",
  push_notifications: "push_notifications",
  email_notifications: "email_notifications",
  wildcard_mentions_notify: "wildcard_mentions_notify",
};

export async function updateSubscriptionProperty(
  db: Queryable,
  realmId: number,
  userId: number,
  streamId: number,
  property: string,
  value: string | boolean,
): Promise<void> {
  const column = PROPERTY_COLUMNS[property];
  if (!column) throw new Error(`unknown subscription column for ${property}`);
  await db.query(`UPDATE subscriptions SET ${column} = $4 WHERE realm_id = $1 AND user_id = $2 AND stream_id = $3`, [realmId, userId, streamId, value]);
}

/** A channel's active subscriptions with the subscriber's role and whether their account is active. */
export async function selectSubscribersWithRoles(db: Queryable, realmId: number, streamId: number): Promise<Array<{ userId: number; role: number; isActive: boolean }>> {
  const { rows } = await db.query(
    `SELECT s.user_id, u.role, u.is_active FROM subscriptions s JOIN users u ON u.user_id = s.user_id
      WHERE s.realm_id = $1 AND s.stream_id = $2 AND s.active ORDER BY s.user_id`,
    [realmId, streamId],
  );
  return rows.map((r) => ({ userId: Number(r.user_id), role: r.role as number, isActive: r.is_active as boolean }));
}
