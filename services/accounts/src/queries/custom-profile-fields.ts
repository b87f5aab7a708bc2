import { CUSTOM_PROFILE_FIELD_TYPES, type CustomProfileField } from "@chat/contracts";
import type { Identity, Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { isRenderable } from "../lib/profile-fields";
import { listFields, listValues, type ProfileFieldRow } from "../store/custom-profile-fields";

export function fieldObject(f: ProfileFieldRow): CustomProfileField {
  return {
    id: f.id,
    type: f.fieldType,
    order: f.order,
    name: f.name,
    hint: f.hint,
    field_data: f.fieldData,
    ...(f.displayInProfileSummary ? { display_in_profile_summary: true as const } : {}),
    required: f.required,
  };
}

/** GET /realm/profile_fields: every field, in display order (any user may read them). */
export async function getCustomProfileFields(deps: AccountsDeps, who: Identity): Promise<CustomProfileField[]> {
  return (await listFields(deps.pool, who.realmId)).map(fieldObject);
}

export type ProfileDataMap = Record<string, { value: string; rendered_value?: string }>;

/**
 * `profile_data` of users (all of the realm when `userIds` is null): field id -> value, with
 * `rendered_value` for the text types. Users without values map to {} when asked for by id.
 */
export async function profileDataOf(db: Queryable, realmId: number, userIds: number[] | null): Promise<Map<number, ProfileDataMap>> {
  const [fields, values] = await Promise.all([listFields(db, realmId), listValues(db, realmId, userIds)]);
  const types = new Map(fields.map((f) => [f.id, f.fieldType]));
  const out = new Map<number, ProfileDataMap>((userIds ?? []).map((id) => [id, {}]));
  for (const v of values) {
    const type = types.get(v.fieldId);
    if (type === undefined) continue;
    const data = out.get(v.userId) ?? {};
    data[String(v.fieldId)] = isRenderable(type) && v.renderedValue !== null ? { value: v.value, rendered_value: v.renderedValue } : { value: v.value };
    out.set(v.userId, data);
  }
  return out;
}

/** register: `custom_profile_fields` and the table of field types. */
export async function customProfileFieldsState(db: Queryable, realmId: number) {
  return {
    custom_profile_fields: (await listFields(db, realmId)).map(fieldObject),
    custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES,
  };
}
