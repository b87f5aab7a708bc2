import type { Queryable } from "@chat/platform";

export interface RealmDomainRow {
  id: number;
  domain: string;
  allowSubdomains: boolean;
}

const toRow = (r: any): RealmDomainRow => ({ id: Number(r.id), domain: r.domain, allowSubdomains: r.allow_subdomains });

export async function listRealmDomains(db: Queryable, realmId: number): Promise<RealmDomainRow[]> {
  const { rows } = await db.query("SELECT * FROM realm_domains WHERE realm_id = $1 ORDER BY id", [realmId]);
  return rows.map(toRow);
}

export async function realmDomainTaken(db: Queryable, realmId: number, domain: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM realm_domains WHERE realm_id = $1 AND domain = $2", [realmId, domain]);
  return (rowCount ?? 0) > 0;
}

export async function insertRealmDomain(db: Queryable, realmId: number, domain: string, allowSubdomains: boolean): Promise<RealmDomainRow> {
  const { rows } = await db.query(
    "INSERT INTO realm_domains (realm_id, domain, allow_subdomains) VALUES ($1, $2, $3) RETURNING *",
    [realmId, domain, allowSubdomains],
  );
  return toRow(rows[0]);
}

/** The changed row, or null when the organization has no such domain. */
export async function setRealmDomainSubdomains(db: Queryable, realmId: number, domain: string, allowSubdomains: boolean): Promise<RealmDomainRow | null> {
  const { rows } = await db.query(
    "UPDATE realm_domains SET allow_subdomains = $3 WHERE realm_id = $1 AND domain = $2 RETURNING *",
    [realmId, domain, allowSubdomains],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

export async function deleteRealmDomain(db: Queryable, realmId: number, domain: string): Promise<boolean> {
  const { rowCount } = await db.query("DELETE FROM realm_domains WHERE realm_id = $1 AND domain = $2", [realmId, domain]);
  return (rowCount ?? 0) > 0;
}

export async function countRealmDomains(db: Queryable, realmId: number): Promise<number> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM realm_domains WHERE realm_id = $1", [realmId]);
  return rows[0].n;
}
