import type { Queryable } from "@chat/platform";

/** Rows of `mail_requests_by_ip`: when a client address (an IPv6 client's /64) had a mail sent. */

/** When `ip` had mails sent since `since`, newest first. */
export async function mailRequestTimesSince(db: Queryable, ip: string, since: Date): Promise<Date[]> {
  const { rows } = await db.query("SELECT requested_at FROM mail_requests_by_ip WHERE ip = $1 AND requested_at > $2 ORDER BY requested_at DESC", [ip, since]);
  return rows.map((r) => r.requested_at as Date);
}

export async function insertMailRequest(db: Queryable, ip: string, at: Date): Promise<void> {
  await db.query("INSERT INTO mail_requests_by_ip (ip, requested_at) VALUES ($1, $2)", [ip, at]);
}

/** Deletes up to `limit` rows from before `before`; how many went. */
export async function deleteMailRequestsBefore(db: Queryable, before: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM mail_requests_by_ip WHERE id IN (
       SELECT id FROM mail_requests_by_ip WHERE requested_at <= $1 ORDER BY requested_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [before, limit],
  );
  return rowCount ?? 0;
}
