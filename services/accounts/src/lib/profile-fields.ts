import { isUrl, CUSTOM_PROFILE_FIELD_TYPES as T } from "@chat/contracts";
import MarkdownIt from "markdown-it";

/** Zulip's limits for custom profile fields and their values. */
export const FIELD_NAME_MAX = 40;
export const FIELD_HINT_MAX = 80;
export const SHORT_VALUE_MAX = 50;
export const LONG_VALUE_MAX = 500;
/** At most this many fields may be shown in the profile summary. */
export const MAX_SUMMARY_FIELDS = 2;

export const FIELD_TYPE_IDS: number[] = Object.values(T).map((t) => t.id);

/** Long text and person pickers cannot be summary fields. */
export const canBeInSummary = (type: number) => type !== T.LONG_TEXT.id && type !== T.USER.id;

/** Text fields keep Markdown and get a `rendered_value`. */
export const isRenderable = (type: number) => type === T.SHORT_TEXT.id || type === T.LONG_TEXT.id;

/** External account subtypes with their built-in name, hint and URL pattern. */
export const EXTERNAL_ACCOUNT_SUBTYPES: Record<string, { name: string; hint: string; url_pattern: string }> = {
  github: { name: "GitHub", hint: "Enter your GitHub username", url_pattern: "https://github.com/%(username)s" },
  twitter: { name: "Twitter", hint: "Enter your Twitter username", url_pattern: "https://twitter.com/%(username)s" },
};

/** Whether `subtype` names a built-in external account (not an inherited property name). */
export const isDefaultExternalAccount = (subtype: unknown): subtype is string =>
  typeof subtype === "string" && Object.hasOwn(EXTERNAL_ACCOUNT_SUBTYPES, subtype);

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
/** Rendered like a channel description: Markdown without raw HTML. */
export function renderProfileValue(value: string): string {
  return md.render(value).trim();
}

/**
 * Checks one object of `field_data` as Zulip's check_dict_only does (its messages name the
 * whole `field_data`, not the option): the required keys in order (missing, not a string or
 * blank), the optional ones when present, then any key it does not know.
 */
function checkDataDict(
  value: unknown,
  required: string[],
  optional: Record<string, (name: string, v: unknown) => void> = {},
): Record<string, unknown> {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("field_data is not a dict");
  const o = value as Record<string, unknown>;
  for (const key of required) {
    if (!Object.hasOwn(o, key)) throw new Error(`${key} key is missing from field_data`);
    const name = `field_data["${key}"]`;
    if (typeof o[key] !== "string") throw new Error(`${name} is not a string`);
    if (!(o[key] as string).trim()) throw new Error(`${name} cannot be blank.`);
  }
  for (const [key, check] of Object.entries(optional)) if (Object.hasOwn(o, key)) check(`field_data["${key}"]`, o[key]);
  const unexpected = Object.keys(o).filter((k) => !required.includes(k) && !Object.hasOwn(optional, k));
  if (unexpected.length) throw new Error(`Unexpected arguments: ${unexpected.join(", ")}`);
  return o;
}

/** A custom account's URL: exactly one `%(username)s`, the rest a URL once a name stands in for it. */
function checkUrlPattern(name: string, value: unknown): void {
  if (typeof value !== "string") throw new Error(`${name} is not a string`);
  if (value.split("%(username)s").length !== 2) throw new Error("Malformed URL pattern.");
  if (!isUrl(value.replace("%(username)s", "username"))) throw new Error(`${name} is not a URL`);
}

/** Validates and normalises `field_data` for a field type; returns the JSON text to store. Throws the message. */
export function checkFieldData(type: number, data: Record<string, unknown>): string {
  if (type === T.SELECT.id) {
    const entries = Object.entries(data);
    if (entries.length === 0) throw new Error("Field must have at least one choice.");
    const texts = new Set<string>();
    for (const [key, option] of entries) {
      if (!key.trim()) throw new Error("'value' cannot be blank.");
      texts.add(checkDataDict(option, ["text", "order"]).text as string);
    }
    if (texts.size !== entries.length) throw new Error("Field must not have duplicate choices.");
    return JSON.stringify(data);
  }
  if (type === T.EXTERNAL_ACCOUNT.id) {
    const { subtype, url_pattern: pattern } = checkDataDict(data, ["subtype"], { url_pattern: checkUrlPattern });
    if (isDefaultExternalAccount(subtype)) return JSON.stringify({ subtype });
    if (subtype !== "custom") throw new Error("Invalid external account type");
    if (pattern === undefined) throw new Error("Custom external account must define URL pattern");
    return JSON.stringify({ subtype, url_pattern: pattern });
  }
  return "";
}

/** A calendar date as Zulip reads one (`%Y-%m-%d` written back unchanged, so years from 1000). */
function isDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m || Number(m[1]) < 1000) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** What a person-picker value may name: one of the organization's active humans. */
export type PickedUser = "ok" | "missing" | "deactivated" | "bot";

/**
 * Checks a user's value for a field with Zulip's messages (`var` is the field's name). Returns
 * the text to store (person picker: a JSON list of user ids, each judged by `pickedUser`).
 */
export function checkFieldValue(
  field: { name: string; fieldType: number; fieldData: string },
  value: string | number[],
  pickedUser: (id: number) => PickedUser,
): string {
  const name = field.name;
  if (field.fieldType === T.USER.id) {
    if (!Array.isArray(value)) throw new Error("User IDs is not a list");
    for (const id of value) {
      const state = pickedUser(id);
      if (state === "missing") throw new Error(`Invalid user ID: ${id}`);
      if (state === "deactivated") throw new Error(`User with ID ${id} is deactivated`);
      if (state === "bot") throw new Error(`User with ID ${id} is a bot`);
    }
    if (new Set(value).size !== value.length) throw new Error("Duplicate user IDs");
    return JSON.stringify(value);
  }
  if (typeof value !== "string") throw new Error(`${name} is not a string`);
  switch (field.fieldType) {
    case T.SHORT_TEXT.id:
    case T.EXTERNAL_ACCOUNT.id:
    case T.PRONOUNS.id:
      if ([...value].length > SHORT_VALUE_MAX) throw new Error(`${name} is too long (limit: ${SHORT_VALUE_MAX} characters)`);
      return value;
    case T.LONG_TEXT.id:
      if ([...value].length > LONG_VALUE_MAX) throw new Error(`${name} is too long (limit: ${LONG_VALUE_MAX} characters)`);
      return value;
    case T.DATE.id:
      if (!isDate(value)) throw new Error(`${name} is not a date`);
      return value;
    case T.URL.id:
      // Django's URL check, as Zulip's: ftp too, a host with a top-level domain, no spaces.
      if (!isUrl(value)) throw new Error(`${name} is not a URL`);
      return value;
    case T.SELECT.id: {
      const options = field.fieldData ? (JSON.parse(field.fieldData) as Record<string, unknown>) : {};
      if (!Object.hasOwn(options, value)) throw new Error(`'${value}' is not a valid choice for '${name}'.`);
      return value;
    }
    default:
      return value;
  }
}
