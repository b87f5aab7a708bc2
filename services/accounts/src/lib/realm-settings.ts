/**
 * The organization settings PATCH /realm changes: which only owners may change, which event
 * format each is announced in, and the value checks Zulip's update_realm view makes beyond a
 * parameter's type. Each setting is the accounts.realms column of the same name. Pure.
 */
import { ApiError, badRequest } from "@chat/platform";
import type { RealmRow } from "../store/realms";
import { LANGUAGES } from "./user-settings";
import { PG_INT_MAX } from "./validate";

export type RealmValue = boolean | number | string | null;

/** Settings only owners may change (Zulip's update_realm raises OrganizationOwnerRequiredError). */
export const OWNER_ONLY_REALM_SETTINGS = new Set(["invite_required", "invite_to_realm_policy", "message_retention_days"]);

/**
 * Announced as `realm` / `update_dict` with property "default" and `{name: value}` as data;
 * every other setting as `realm` / `update` (Zulip's message_edit_settings in do_set_realm_property).
 */
export const UPDATE_DICT_REALM_SETTINGS = new Set(["allow_message_editing", "edit_topic_policy", "message_content_edit_limit_seconds"]);

/** Time limits in seconds: `"unlimited"` is no limit (null), anything else a positive integer. */
const TIME_LIMITS = new Set([
  "message_content_delete_limit_seconds",
  "message_content_edit_limit_seconds",
  "move_messages_within_stream_limit_seconds",
  "move_messages_between_streams_limit_seconds",
  "message_retention_days",
]);

/**
 * Settings naming a channel for automated announcements: a channel id (which the administrator
 * must be able to access), or a negative number for none (stored as null, -1 to clients).
 */
export const ANNOUNCEMENT_CHANNEL_SETTINGS = new Set([
  "new_stream_announcements_stream_id",
  "signup_announcements_stream_id",
  "zulip_update_announcements_stream_id",
]);

/**
 * The organization's group settings (Zulip's REALM_PERMISSION_GROUP_SETTINGS) this server has:
 * each may be one of a few system groups only (require_system_group), so each is stored in a
 * column as a value standing for one of them. Zulip 9.0's channel creation groups (feature
 * levels 264, 266) replaced the two creation policies one to one: the policy is stored, both
 * forms are served, and a change through either is announced in both. The group for reusable
 * invitation links (feature level 209) and the one whose members access every user (feature
 * level 225) are stored as the group's name.
 */
export interface RealmGroupSetting {
  /** The realms column. */
  column: string;
  /** The column's values and the system group each stands for. */
  groups: ReadonlyArray<readonly [RealmValue, string]>;
}

const CREATION_POLICY_GROUPS = [
  [1, "role:members"],
  [2, "role:administrators"],
  [3, "role:fullmembers"],
  [4, "role:moderators"],
] as const;

export const REALM_GROUP_SETTINGS: Record<string, RealmGroupSetting> = {
  create_multiuse_invite_group: {
    column: "create_multiuse_invite_group",
    groups: ["role:administrators", "role:moderators", "role:fullmembers", "role:members", "role:nobody"].map((name) => [name, name] as const),
  },
  can_create_public_channel_group: { column: "create_public_stream_policy", groups: CREATION_POLICY_GROUPS },
  can_create_private_channel_group: { column: "create_private_stream_policy", groups: CREATION_POLICY_GROUPS },
  can_access_all_users_group: {
    column: "can_access_all_users_group",
    groups: ["role:everyone", "role:members"].map((name) => [name, name] as const),
  },
};

/** The group setting stored in a column, if any. */
export function groupSettingOfColumn(column: string): string | undefined {
  return Object.keys(REALM_GROUP_SETTINGS).find((name) => REALM_GROUP_SETTINGS[name].column === column);
}

/** The system group a group setting's stored value stands for. */
export function settingGroupName(setting: string, stored: RealmValue): string {
  const name = REALM_GROUP_SETTINGS[setting].groups.find(([value]) => value === stored)?.[1];
  if (!name) throw new Error(`no system group for ${setting} = ${String(stored)}`);
  return name;
}

/**
 * The column values for the group settings a request carried, as Zulip's
 * access_user_group_for_setting checks them: a group of the organization ("Invalid user group"),
 * a system group ("must be a system user group"), and one the setting allows. `newGroups` are
 * the requested group ids by setting; `groups` the organization's groups they name, by id.
 */
export function groupSettingColumns(
  newGroups: Record<string, number>,
  groups: Map<number, { name: string | null; isSystemGroup: boolean }>,
): Map<string, RealmValue> {
  const columns = new Map<string, RealmValue>();
  for (const [setting, id] of Object.entries(newGroups)) {
    const group = groups.get(id);
    if (!group) throw badRequest("Invalid user group");
    if (!group.isSystemGroup) throw badRequest(`'${setting}' must be a system user group.`);
    const { column, groups: allowed } = REALM_GROUP_SETTINGS[setting];
    const stored = allowed.find(([, name]) => name === group.name)?.[0];
    if (stored === undefined) throw badRequest(`'${setting}' setting cannot be set to '${group.name}' group.`);
    columns.set(column, stored);
  }
  return columns;
}

/** The providers register offers (realm_available_video_chat_providers): none and Jitsi Meet. */
export const VIDEO_CHAT_PROVIDER_IDS = [0, 1];
/** Zulip's GIPHY_RATING_OPTIONS: disabled, Y, G, PG, PG-13, R. */
export const GIPHY_RATING_IDS = [0, 1, 2, 3, 4, 5];

/**
 * Zulip's parse_message_time_limit_setting (and parse_message_retention_days): `"unlimited"`
 * is null; a string or a number not positive is "Bad value"; beyond a PostgreSQL integer too.
 */
function parseTimeLimit(name: string, raw: unknown): number | null {
  if (raw === "unlimited") return null;
  if (typeof raw === "number" && Number.isInteger(raw) && raw > 0 && raw <= PG_INT_MAX) return raw;
  throw new ApiError("REQUEST_VARIABLE_INVALID", `Bad value for '${name}': ${String(raw)}`);
}

/**
 * The values to store for the settings a request carried, in Zulip's order of checks: language,
 * video call provider, GIPHY rating, retention (owners), other owner-only settings, time limits.
 * Throws Zulip's error for the first problem; nothing is changed then.
 */
export function checkRealmSettingValues(given: Record<string, unknown>, isOwner: boolean): Map<string, RealmValue> {
  const language = given.default_language;
  if (language !== undefined && !Object.hasOwn(LANGUAGES, language as string)) throw badRequest(`Invalid language '${language}'`);
  const provider = given.video_chat_provider;
  if (provider !== undefined && !VIDEO_CHAT_PROVIDER_IDS.includes(provider as number)) throw badRequest(`Invalid video_chat_provider ${provider}`);
  const rating = given.giphy_rating;
  if (rating !== undefined && !GIPHY_RATING_IDS.includes(rating as number)) throw badRequest(`Invalid giphy_rating ${rating}`);
  const ownerOnly = (name: string) => OWNER_ONLY_REALM_SETTINGS.has(name) && given[name] !== undefined;
  if (ownerOnly("message_retention_days") && !isOwner) throw ownerRequired();
  const retention = given.message_retention_days === undefined ? undefined : parseTimeLimit("message_retention_days", given.message_retention_days);
  if (!isOwner && [...OWNER_ONLY_REALM_SETTINGS].some(ownerOnly)) throw ownerRequired();
  const values = new Map<string, RealmValue>();
  for (const [name, raw] of Object.entries(given)) {
    if (raw === undefined) continue;
    if (name === "message_retention_days") values.set(name, retention!);
    else if (TIME_LIMITS.has(name)) values.set(name, parseTimeLimit(name, raw));
    else if (ANNOUNCEMENT_CHANNEL_SETTINGS.has(name)) values.set(name, (raw as number) < 0 ? null : (raw as number));
    else if (name === "jitsi_server_url") values.set(name, parseJitsiServerUrl(raw as string));
    else values.set(name, raw as RealmValue);
  }
  return values;
}

/** Zulip's update_realm: `"default"` is the server's Jitsi (null); anything else must be an http(s) URL. */
function parseJitsiServerUrl(raw: string): string | null {
  if (raw === "default") return null;
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (!url || !["http:", "https:"].includes(url.protocol) || !url.hostname || raw.length > 200) throw badRequest("jitsi_server_url is not a URL");
  return raw;
}

const ownerRequired = () => new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");

/** The stored value of a setting (the row field of the column's name). */
export function realmRowValue(realm: RealmRow, name: string): RealmValue {
  const field = name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()) as keyof RealmRow;
  if (!(field in realm)) throw new Error(`no realm column for ${name}`);
  return realm[field] as RealmValue;
}

/** A setting's value as clients see it: messages kept forever and no announcement channel are -1 there (stored as null). */
export function clientRealmValue(name: string, value: RealmValue): RealmValue {
  return (name === "message_retention_days" || ANNOUNCEMENT_CHANNEL_SETTINGS.has(name)) && value === null ? -1 : value;
}

/** What Zulip's update_realm answers for a changed setting: strings are just "updated". */
export function answeredRealmValue(name: string, value: RealmValue): RealmValue {
  const shown = clientRealmValue(name, value);
  return typeof shown === "string" ? "updated" : shown;
}
