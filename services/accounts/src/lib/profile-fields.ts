import { CUSTOM_PROFILE_FIELD_TYPES as T } from "@chat/contracts";
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

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });
/** Rendered like a channel description: Markdown without raw HTML. */
export function renderProfileValue(value: string): string {
  return md.render(value).trim();
}

/** Validates and normalises `field_data` for a field type; returns the JSON text to store. Throws the message. */
export function checkFieldData(type: number, data: Record<string, unknown>): string {
  if (type === T.SELECT.id) {
    const entries = Object.entries(data);
    if (entries.length === 0) throw new Error("Field must have at least one choice.");
    const texts = new Set<string>();
    for (const [key, option] of entries) {
      if (!key.trim()) throw new Error("'value' cannot be blank.");
      const o = option as Record<string, unknown> | null;
      if (!o || typeof o !== "object" || Array.isArray(o)) throw new Error(`field_data["${key}"] is not a dict`);
      for (const k of Object.keys(o)) if (k !== "text" && k !== "order") throw new Error(`Unexpected argument "${k}" in field_data["${key}"]`);
      for (const k of ["text", "order"]) {
        if (typeof o[k] !== "string") throw new Error(`field_data["${key}"]["${k}"] is not a string`);
        if (!(o[k] as string).trim()) throw new Error(`field_data["${key}"]["${k}"] cannot be blank.`);
      }
      texts.add(o.text as string);
    }
    if (texts.size !== entries.length) throw new Error("Field must not have duplicate choices.");
    return JSON.stringify(data);
  }
  if (type === T.EXTERNAL_ACCOUNT.id) {
    const subtype = data.subtype;
    if (typeof subtype !== "string" || !subtype) throw new Error("field_data[\"subtype\"] is missing");
    if (subtype === "custom") {
      const pattern = data.url_pattern;
      if (typeof pattern !== "string" || !/^https?:\/\/.+%\(username\)s/.test(pattern)) throw new Error("Malformed URL pattern.");
      return JSON.stringify({ subtype, url_pattern: pattern });
    }
    if (!EXTERNAL_ACCOUNT_SUBTYPES[subtype]) throw new Error("Invalid external account type");
    return JSON.stringify({ subtype });
  }
  return "";
}

/**
 * Checks a user's value for a field with Zulip's messages (`var` is the field's name). Returns
 * the text to store (person picker: a JSON list of user ids). `userExists` checks those ids.
 */
export function checkFieldValue(
  field: { name: string; fieldType: number; fieldData: string },
  value: string | number[],
  userExists: (id: number) => boolean,
): string {
  const name = field.name;
  if (field.fieldType === T.USER.id) {
    if (!Array.isArray(value)) throw new Error(`${name} is not a list`);
    for (const id of value) if (!userExists(id)) throw new Error(`Invalid user ID: ${id}`);
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
    case T.DATE.id: {
      const ok = /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
      if (!ok) throw new Error(`${name} is not a date`);
      return value;
    }
    case T.URL.id: {
      let ok = false;
      try {
        const u = new URL(value);
        ok = (u.protocol === "http:" || u.protocol === "https:") && !!u.hostname;
      } catch {
        ok = false;
      }
      if (!ok) throw new Error(`${name} is not a URL`);
      return value;
    }
    case T.SELECT.id: {
      const options = field.fieldData ? (JSON.parse(field.fieldData) as Record<string, unknown>) : {};
      if (!Object.hasOwn(options, value)) throw new Error(`'${value}' is not a valid choice for '${name}'.`);
      return value;
    }
    default:
      return value;
  }
}
