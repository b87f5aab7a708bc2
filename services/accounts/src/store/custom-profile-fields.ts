import type { Queryable } from "@chat/platform";

export interface ProfileFieldRow {
  id: number;
  realmId: number;
  name: string;
  hint: string;
  fieldType: number;
  fieldData: string;
  order: number;
  displayInProfileSummary: boolean;
  required: boolean;
}

function toField(r: any): ProfileFieldRow {
  return {
    id: Number(r.id),
    realmId: Number(r.realm_id),
    name: r.name,
    hint: r.hint,
    fieldType: r.field_type,
    fieldData: r.field_data,
    order: r.order,
    displayInProfileSummary: r.display_in_profile_summary,
    required: r.required,
  };
}

export async function listFields(db: Queryable, realmId: number): Promise<ProfileFieldRow[]> {
  const { rows } = await db.query('SELECT * FROM custom_profile_fields WHERE realm_id = $1 ORDER BY "order", id', [realmId]);
  return rows.map(toField);
}

export async function getField(db: Queryable, realmId: number, fieldId: number): Promise<ProfileFieldRow | null> {
  const { rows } = await db.query("SELECT * FROM custom_profile_fields WHERE realm_id = $1 AND id = $2", [realmId, fieldId]);
  return rows[0] ? toField(rows[0]) : null;
}

/** Serializes changes to a realm's field list (orders and the summary limit must stay consistent). */
export async function lockRealmFields(db: Queryable, realmId: number): Promise<void> {
  await db.query("SELECT 1 FROM realms WHERE id = $1 FOR NO KEY UPDATE", [realmId]);
}

export async function insertField(db: Queryable, f: Omit<ProfileFieldRow, "id" | "order">): Promise<ProfileFieldRow> {
  const { rows } = await db.query(
    `INSERT INTO custom_profile_fields (realm_id, name, hint, field_type, field_data, display_in_profile_summary, required, "order")
     VALUES ($1, $2, $3, $4, $5, $6, $7, (SELECT COALESCE(max("order"), 0) + 1 FROM custom_profile_fields WHERE realm_id = $1))
     RETURNING *`,
    [f.realmId, f.name, f.hint, f.fieldType, f.fieldData, f.displayInProfileSummary, f.required],
  );
  return toField(rows[0]);
}

export async function updateField(db: Queryable, f: ProfileFieldRow): Promise<void> {
  await db.query(
    `UPDATE custom_profile_fields SET name = $3, hint = $4, field_data = $5, display_in_profile_summary = $6, required = $7
      WHERE realm_id = $1 AND id = $2`,
    [f.realmId, f.id, f.name, f.hint, f.fieldData, f.displayInProfileSummary, f.required],
  );
}

export async function setFieldOrder(db: Queryable, realmId: number, orderedIds: number[]): Promise<void> {
  await db.query(
    `UPDATE custom_profile_fields f SET "order" = t.n FROM unnest($2::bigint[]) WITH ORDINALITY AS t(id, n)
      WHERE f.realm_id = $1 AND f.id = t.id`,
    [realmId, orderedIds],
  );
}

export async function deleteField(db: Queryable, realmId: number, fieldId: number): Promise<void> {
  await db.query("DELETE FROM custom_profile_fields WHERE realm_id = $1 AND id = $2", [realmId, fieldId]);
}

export interface FieldValueRow {
  userId: number;
  fieldId: number;
  value: string;
  renderedValue: string | null;
}

/** Values of the given users (all users of the realm when `userIds` is null). */
export async function listValues(db: Queryable, realmId: number, userIds: number[] | null): Promise<FieldValueRow[]> {
  const { rows } = await db.query(
    `SELECT user_id, field_id, value, rendered_value FROM custom_profile_field_values
      WHERE realm_id = $1 AND ($2::bigint[] IS NULL OR user_id = ANY($2::bigint[])) ORDER BY user_id, field_id`,
    [realmId, userIds],
  );
  return rows.map((r) => ({ userId: Number(r.user_id), fieldId: Number(r.field_id), value: r.value, renderedValue: r.rendered_value }));
}

/** Every user's value of one field. */
export async function listFieldValues(db: Queryable, realmId: number, fieldId: number): Promise<FieldValueRow[]> {
  const { rows } = await db.query(
    `SELECT user_id, field_id, value, rendered_value FROM custom_profile_field_values
      WHERE realm_id = $1 AND field_id = $2 ORDER BY user_id`,
    [realmId, fieldId],
  );
  return rows.map((r) => ({ userId: Number(r.user_id), fieldId: Number(r.field_id), value: r.value, renderedValue: r.rendered_value }));
}

export async function getValue(db: Queryable, realmId: number, userId: number, fieldId: number): Promise<FieldValueRow | null> {
  const rows = (await listValues(db, realmId, [userId])).filter((v) => v.fieldId === fieldId);
  return rows[0] ?? null;
}

export async function upsertValue(db: Queryable, realmId: number, v: FieldValueRow): Promise<void> {
  await db.query(
    `INSERT INTO custom_profile_field_values (realm_id, user_id, field_id, value, rendered_value) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (user_id, field_id) DO UPDATE SET value = EXCLUDED.value, rendered_value = EXCLUDED.rendered_value`,
    [realmId, v.userId, v.fieldId, v.value, v.renderedValue],
  );
}

export async function deleteValue(db: Queryable, realmId: number, userId: number, fieldId: number): Promise<boolean> {
  const { rowCount } = await db.query(
    "DELETE FROM custom_profile_field_values WHERE realm_id = $1 AND user_id = $2 AND field_id = $3",
    [realmId, userId, fieldId],
  );
  return (rowCount ?? 0) > 0;
}
