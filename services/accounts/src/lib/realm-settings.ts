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
 * Zulip 9.0's group settings for channel creation (feature levels 264 and 266), which replaced
 * the two creation policies. Both forms are served: the policy is stored, the group is the
 * system group of the same people (Zulip's migration mapped them one to one), and a change
 * through either is announced in both.
 */
export const CHANNEL_CREATION_GROUP_SETTINGS: Record<string, string> = {
  can_create_public_channel_group: "create_public_stream_policy",
  can_create_private_channel_group: "create_private_stream_policy",
};

/** A creation policy's system group: 1 members, 2 administrators, 3 full members, 4 moderators. */
const POLICY_GROUP: Record<number, string> = { 1: "role:members", 2: "role:administrators", 3: "role:fullmembers", 4: "role:moderators" };

/** The system group name a creation policy stands for. */
export function policyGroupName(policy: number): string {
  const name = POLICY_GROUP[policy];
  if (!name) throw new Error(`no system group for creation policy ${policy}`);
  return name;
}

/**
 * The creation policies for the group settings a request carried, as Zulip's
 * access_user_group_for_setting checks them: a group of the organization ("Invalid user group"),
 * a system group ("must be a system user group"), and one of the four the setting allows.
 * `groups` are the organization's groups the request named, by id.
 */
export function channelCreationPolicies(given: Record<string, unknown>, groups: Map<number, { name: string | null; isSystemGroup: boolean }>): Map<string, number> {
  const policies = new Map<string, number>();
  for (const [setting, policyName] of Object.entries(CHANNEL_CREATION_GROUP_SETTINGS)) {
    const id = given[setting];
    if (id === undefined) continue;
    const group = groups.get(id as number);
    if (!group) throw badRequest("Invalid user group");
    if (!group.isSystemGroup) throw badRequest(`'${setting}' must be a system user group.`);
    const policy = Object.entries(POLICY_GROUP).find(([, name]) => name === group.name)?.[0];
    if (policy === undefined) throw badRequest(`'${setting}' setting cannot be set to '${group.name}' group.`);
    policies.set(policyName, Number(policy));
  }
  return policies;
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
    else values.set(name, raw as RealmValue);
  }
  return values;
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
