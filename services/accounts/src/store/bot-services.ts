import type { Queryable } from "@chat/platform";

export interface BotServiceRow {
  botId: number;
  realmId: number;
  name: string;
  baseUrl: string;
  interface: number;
  token: string;
}

const toRow = (r: any): BotServiceRow => ({
  botId: Number(r.bot_id),
  realmId: Number(r.realm_id),
  name: r.name,
  baseUrl: r.base_url,
  interface: r.interface,
  token: r.token,
});

export async function getBotService(db: Queryable, realmId: number, botId: number): Promise<BotServiceRow | null> {
  const { rows } = await db.query("SELECT * FROM bot_services WHERE realm_id = $1 AND bot_id = $2", [realmId, botId]);
  return rows[0] ? toRow(rows[0]) : null;
}

export async function listBotServices(db: Queryable, realmId: number, botIds: number[]): Promise<BotServiceRow[]> {
  const { rows } = await db.query("SELECT * FROM bot_services WHERE realm_id = $1 AND bot_id = ANY($2::bigint[])", [realmId, botIds]);
  return rows.map(toRow);
}

export async function insertBotService(db: Queryable, s: BotServiceRow): Promise<BotServiceRow> {
  const { rows } = await db.query(
    "INSERT INTO bot_services (bot_id, realm_id, name, base_url, interface, token) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
    [s.botId, s.realmId, s.name, s.baseUrl, s.interface, s.token],
  );
  return toRow(rows[0]);
}

/** The changed row, or null when the bot has no service. */
export async function updateBotService(
  db: Queryable,
  realmId: number,
  botId: number,
  s: Pick<BotServiceRow, "baseUrl" | "interface">,
): Promise<BotServiceRow | null> {
  const { rows } = await db.query(
    "UPDATE bot_services SET base_url = $3, interface = $4 WHERE realm_id = $1 AND bot_id = $2 RETURNING *",
    [realmId, botId, s.baseUrl, s.interface],
  );
  return rows[0] ? toRow(rows[0]) : null;
}
