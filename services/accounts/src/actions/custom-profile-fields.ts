import { CUSTOM_PROFILE_FIELD_TYPES as T } from "@chat/contracts";
import { ApiError, badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import {
  canBeInSummary,
  checkFieldData,
  checkFieldValue,
  EXTERNAL_ACCOUNT_SUBTYPES,
  FIELD_HINT_MAX,
  FIELD_NAME_MAX,
  FIELD_TYPE_IDS,
  isDefaultExternalAccount,
  isRenderable,
  MAX_SUMMARY_FIELDS,
  type PickedUser,
  renderProfileValue,
} from "../lib/profile-fields";
import { fieldObject } from "../queries/custom-profile-fields";
import {
  deleteField,
  deleteValue,
  getField,
  getValue,
  insertField,
  listFieldValues,
  listFields,
  lockRealmFields,
  setFieldOrder,
  updateField,
  upsertValue,
  type ProfileFieldRow,
} from "../store/custom-profile-fields";
import { getProfileUser, type ProfileUser } from "../store/profile";
import { activeUserIds, getUsersByIds } from "../store/users";
import { notifyRealmUserUpdate, requireAdmin } from "./profile";

/** Runs a pure check that throws a plain Error, as Zulip's BAD_REQUEST. */
function check<R>(fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw badRequest((err as Error).message);
  }
}

/** Zulip's order: a blank label, then the hint's length, then the label's. */
function checkNameAndHint(name: string, hint: string) {
  if (!name.trim()) throw badRequest("Label cannot be blank.");
  if ([...hint].length > FIELD_HINT_MAX) throw badRequest(`hint is too long (limit: ${FIELD_HINT_MAX} characters)`);
  if ([...name].length > FIELD_NAME_MAX) throw badRequest(`name is too long (limit: ${FIELD_NAME_MAX} characters)`);
}

/** Whether two `field_data` objects hold the same keys with the same values (in any order). */
function sameFieldData(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

async function checkSummary(tx: Queryable, realmId: number, type: number, exceptId: number | null) {
  if (!canBeInSummary(type)) throw badRequest("Field type not supported for display in profile summary.");
  const others = (await listFields(tx, realmId)).filter((f) => f.displayInProfileSummary && f.id !== exceptId);
  if (others.length >= MAX_SUMMARY_FIELDS) throw badRequest(`Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`);
}

/** The whole field list to every active user (`custom_profile_fields` event). */
async function notifyFields(tx: Queryable, realmId: number) {
  const fields = (await listFields(tx, realmId)).map(fieldObject);
  const users = await activeUserIds(tx, realmId);
  await emitEvent(tx, {
    type: "accounts.custom_profile_fields.changed",
    realmId,
    payload: { client: { event: { type: "custom_profile_fields", fields }, users } },
  });
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === "23505";
const labelTaken = () => badRequest("A field with that label already exists.");

export interface FieldInput {
  name: string;
  hint: string;
  fieldType: number;
  fieldData: Record<string, unknown>;
  displayInProfileSummary: boolean;
  required: boolean;
}

/**
 * POST /realm/profile_fields, checked in Zulip's order: the field data, the label (surrounding
 * spaces dropped) and hint, the type, then the profile summary.
 */
export async function doCreateCustomProfileField(deps: AccountsDeps, who: Identity, p: FieldInput): Promise<number> {
  requireAdmin(who);
  let name = p.name.trim();
  let hint = p.hint;
  const fieldData = check(() => checkFieldData(p.fieldType, p.fieldData));
  const subtype = p.fieldType === T.EXTERNAL_ACCOUNT.id ? p.fieldData.subtype : undefined;
  if (isDefaultExternalAccount(subtype)) {
    // Built-in external accounts carry their own label and hint.
    ({ name, hint } = EXTERNAL_ACCOUNT_SUBTYPES[subtype]);
  } else {
    checkNameAndHint(name, hint);
  }
  if (!FIELD_TYPE_IDS.includes(p.fieldType)) throw badRequest("Invalid field type.");
  try {
    return await withTx(deps.pool, async (tx) => {
      await lockRealmFields(tx, who.realmId);
      if (p.displayInProfileSummary) await checkSummary(tx, who.realmId, p.fieldType, null);
      const field = await insertField(tx, {
        realmId: who.realmId,
        name,
        hint,
        fieldType: p.fieldType,
        fieldData,
        displayInProfileSummary: p.displayInProfileSummary,
        required: p.required,
      });
      await notifyFields(tx, who.realmId);
      return field.id;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw labelTaken();
    throw err;
  }
}

async function accessField(tx: Queryable, realmId: number, fieldId: number): Promise<ProfileFieldRow> {
  const field = await getField(tx, realmId, fieldId);
  if (!field) throw badRequest(`Field id ${fieldId} not found.`);
  return field;
}

export interface FieldUpdate {
  name?: string;
  hint?: string;
  fieldData?: Record<string, unknown>;
  displayInProfileSummary?: boolean;
  required?: boolean;
}

export async function doUpdateCustomProfileField(deps: AccountsDeps, who: Identity, fieldId: number, p: FieldUpdate): Promise<void> {
  requireAdmin(who);
  try {
    await withTx(deps.pool, async (tx) => {
      await lockRealmFields(tx, who.realmId);
      const field = await accessField(tx, who.realmId, fieldId);
      const next: ProfileFieldRow = { ...field, name: p.name?.trim() ?? field.name, hint: p.hint ?? field.hint };
      const current = JSON.parse(field.fieldData || "{}") as Record<string, unknown>;
      if (field.fieldType === T.EXTERNAL_ACCOUNT.id && isDefaultExternalAccount(current.subtype)) {
        // A built-in account keeps its label, hint and kind; the summary and required flags may change.
        const unchanged = next.name === field.name && next.hint === field.hint && (p.fieldData === undefined || sameFieldData(p.fieldData, current));
        if (!unchanged) throw badRequest("Default custom field cannot be updated.");
      }
      checkNameAndHint(next.name, next.hint);
      if (p.fieldData !== undefined) next.fieldData = check(() => checkFieldData(field.fieldType, p.fieldData!));
      if (p.displayInProfileSummary !== undefined) {
        if (p.displayInProfileSummary) await checkSummary(tx, who.realmId, field.fieldType, field.id);
        next.displayInProfileSummary = p.displayInProfileSummary;
      }
      if (p.required !== undefined) next.required = p.required;
      await updateField(tx, next);
      if (field.fieldType === T.SELECT.id && p.fieldData !== undefined) await dropRemovedChoicesInTx(tx, deps, field, next.fieldData);
      await notifyFields(tx, who.realmId);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw labelTaken();
    throw err;
  }
}

/**
 * A list-of-options field that loses choices loses the values holding them, as in Zulip
 * (`remove_custom_profile_field_value_if_required`); each removal is announced like a user's
 * own, so clients and later registers agree.
 */
async function dropRemovedChoicesInTx(tx: Queryable, deps: AccountsDeps, field: ProfileFieldRow, newFieldData: string): Promise<void> {
  const kept = new Set(Object.keys(JSON.parse(newFieldData || "{}") as Record<string, unknown>));
  for (const v of await listFieldValues(tx, field.realmId, field.id)) {
    if (kept.has(v.value)) continue;
    await deleteValue(tx, field.realmId, v.userId, field.id);
    await notifyRealmUserUpdate(tx, deps, field.realmId, v.userId, { user_id: v.userId, custom_profile_field: { id: field.id, value: null } });
  }
}

/** Deletes a field and every user's value for it (clients drop those with the new field list). */
export async function doDeleteCustomProfileField(deps: AccountsDeps, who: Identity, fieldId: number): Promise<void> {
  requireAdmin(who);
  await withTx(deps.pool, async (tx) => {
    await lockRealmFields(tx, who.realmId);
    await accessField(tx, who.realmId, fieldId);
    await deleteField(tx, who.realmId, fieldId);
    await notifyFields(tx, who.realmId);
  });
}

export async function doReorderCustomProfileFields(deps: AccountsDeps, who: Identity, order: number[]): Promise<void> {
  requireAdmin(who);
  await withTx(deps.pool, async (tx) => {
    await lockRealmFields(tx, who.realmId);
    const ids = (await listFields(tx, who.realmId)).map((f) => f.id);
    const given = new Set(order);
    if (given.size !== order.length || given.size !== ids.length || ids.some((id) => !given.has(id))) {
      throw badRequest("Invalid order mapping.");
    }
    await setFieldOrder(tx, who.realmId, order);
    await notifyFields(tx, who.realmId);
  });
}

/**
 * The users that person-picker values name, as a value may hold them: an active human of the
 * organization, or why not (Zulip's check_valid_user_ids). System bots are not the
 * organization's users there.
 */
async function pickableUsers(tx: Queryable, realmId: number, data: Array<{ value: string | number[] | null }>): Promise<Map<number, PickedUser>> {
  const ids = [...new Set(data.flatMap((d) => (Array.isArray(d.value) ? d.value : [])))];
  const users = ids.length ? await getUsersByIds(tx, realmId, ids) : [];
  return new Map(users.filter((u) => !u.isSystemBot).map((u) => [Number(u.id), !u.isActive ? "deactivated" : u.isBot ? "bot" : "ok"]));
}

/**
 * Sets (or, for an empty value, removes) a user's values. Every value is checked before any is
 * written; each actual change emits `realm_user` update with `custom_profile_field`.
 */
export async function applyProfileDataInTx(
  tx: Queryable,
  deps: AccountsDeps,
  user: ProfileUser,
  data: Array<{ id: number; value: string | number[] | null }>,
): Promise<void> {
  const fields = new Map((await listFields(tx, user.realmId)).map((f) => [f.id, f]));
  const picked = await pickableUsers(tx, user.realmId, data);
  const planned: Array<{ field: ProfileFieldRow; value: string | null }> = [];
  for (const item of data) {
    const field = fields.get(item.id);
    if (!field) throw badRequest(`Field id ${item.id} not found.`);
    const empty = item.value === null || item.value === "" || (Array.isArray(item.value) && item.value.length === 0);
    const value = empty ? null : check(() => checkFieldValue(field, item.value!, (id) => picked.get(id) ?? "missing"));
    planned.push({ field, value });
  }
  for (const { field, value } of planned) {
    const current = await getValue(tx, user.realmId, user.id, field.id);
    if (value === null) {
      if (!current) continue;
      await deleteValue(tx, user.realmId, user.id, field.id);
      await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, { user_id: user.id, custom_profile_field: { id: field.id, value: null } });
      continue;
    }
    if (current?.value === value) continue;
    const rendered = isRenderable(field.fieldType) ? renderProfileValue(value) : null;
    await upsertValue(tx, user.realmId, { userId: user.id, fieldId: field.id, value, renderedValue: rendered });
    await notifyRealmUserUpdate(tx, deps, user.realmId, user.id, {
      user_id: user.id,
      custom_profile_field: { id: field.id, value, ...(rendered !== null ? { rendered_value: rendered } : {}) },
    });
  }
}

async function accessOwnProfile(tx: Queryable, who: Identity): Promise<ProfileUser> {
  const user = await getProfileUser(tx, who.realmId, who.userId, { lock: true });
  if (!user) throw badRequest("No such user");
  if (user.isBot) throw badRequest("This endpoint does not accept bot requests.");
  return user;
}

/** PATCH /users/me/profile_data. */
export async function doUpdateOwnProfileData(deps: AccountsDeps, who: Identity, data: Array<{ id: number; value: string | number[] | null }>) {
  await withTx(deps.pool, async (tx) => applyProfileDataInTx(tx, deps, await accessOwnProfile(tx, who), data));
}

/** DELETE /users/me/profile_data: removes the values of the given fields. */
export async function doRemoveOwnProfileData(deps: AccountsDeps, who: Identity, fieldIds: number[]) {
  await withTx(deps.pool, async (tx) => {
    const user = await accessOwnProfile(tx, who);
    await applyProfileDataInTx(tx, deps, user, fieldIds.map((id) => ({ id, value: null })));
  });
}
