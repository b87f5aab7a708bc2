import { createRequire } from "node:module";
import { badRequest } from "@chat/platform";

interface EmojiEntry {
  unified: string;
  non_qualified: string | null;
  short_names: string[];
}

let tables: { nameToCode: Map<string, string>; codes: Set<string> } | null = null;

/**
 * Zulip names some emoji its own way (its emoji_names.py), and its clients send those names:
 * the popular reactions and the "Busy" status among them. They win over iamcal's, so `smile`
 * is 1f642 as in Zulip (iamcal's `smile` is Zulip's `big_smile`). Only names known for sure
 * are listed; the rest of the table is iamcal's.
 */
const ZULIP_NAMES: Record<string, string[]> = {
  "1f44d": ["+1", "thumbs_up", "like"],
  "1f44e": ["-1", "thumbs_down"],
  "1f642": ["smile"],
  "1f604": ["big_smile"],
  "1f6e0": ["working_on_it", "hammer_and_wrench", "tools"],
};

/**
 * Unicode emoji names and codes from iamcal's emoji-datasource (the data Zulip's own emoji
 * table derives from). A code is the dash-separated lowercase hex of the code points, without
 * the variation selector when an unqualified form exists, as Zulip spells them.
 */
function emojiTables() {
  if (tables) return tables;
  const require = createRequire(import.meta.url);
  const data = require("emoji-datasource/emoji.json") as EmojiEntry[];
  const nameToCode = new Map<string, string>();
  const codes = new Set<string>();
  for (const e of data) {
    const code = (e.non_qualified ?? e.unified).toLowerCase();
    codes.add(code);
    codes.add(e.unified.toLowerCase());
    for (const name of e.short_names) {
      nameToCode.set(name, code);
      // Zulip spells multi-word names with underscores; iamcal mostly does too, but not always.
      nameToCode.set(name.replace(/-/g, "_"), code);
    }
  }
  for (const [code, names] of Object.entries(ZULIP_NAMES)) for (const name of names) nameToCode.set(name, code);
  tables = { nameToCode, codes };
  return tables;
}

export const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] as const;
export type ReactionType = (typeof REACTION_TYPES)[number];

/** Realm custom emoji known to this server (none can be uploaded yet). */
export type RealmEmojiLookup = (id: string) => { name: string; deactivated: boolean } | null;
const noRealmEmoji: RealmEmojiLookup = () => null;

/** Zulip's lookup of an emoji given by name only: custom, then Unicode, then the Zulip logo. */
export function emojiNameToCode(name: string): { code: string; type: ReactionType } {
  const code = emojiTables().nameToCode.get(name);
  if (code) return { code, type: "unicode_emoji" };
  if (name === "zulip") return { code: "zulip", type: "zulip_extra_emoji" };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/** Zulip's `check_emoji_request`: the code must exist in the namespace and match the name. */
export function checkEmoji(name: string, code: string, type: string, realmEmoji: RealmEmojiLookup = noRealmEmoji): void {
  if (type === "realm_emoji") {
    const e = realmEmoji(code);
    if (!e) throw badRequest("Invalid custom emoji.");
    if (e.name !== name) throw badRequest("Invalid custom emoji name.");
    if (e.deactivated) throw badRequest("This custom emoji has been deactivated.");
    return;
  }
  if (type === "zulip_extra_emoji") {
    if (code !== "zulip") throw badRequest("Invalid emoji code.");
    if (name !== code) throw badRequest("Invalid emoji name.");
    return;
  }
  if (type === "unicode_emoji") {
    const t = emojiTables();
    if (!t.codes.has(code)) throw badRequest("Invalid emoji code.");
    if (t.nameToCode.get(name) !== code) throw badRequest("Invalid emoji name.");
    return;
  }
  throw badRequest("Invalid emoji type.");
}
