import { createRequire } from "node:module";

interface EmojiEntry {
  unified: string;
  non_qualified: string | null;
  short_names: string[];
}

/**
 * Zulip names some emoji its own way (its emoji_names.py): these win over iamcal's, so `smile`
 * is 1f642 as in Zulip (iamcal's `smile` is Zulip's `big_smile`). The first name is the one
 * Zulip shows for the character. Only names known for sure are listed; the rest are iamcal's.
 */
const ZULIP_NAMES: Record<string, string[]> = {
  "1f44d": ["+1", "thumbs_up", "like"],
  "1f44e": ["-1", "thumbs_down"],
  "1f642": ["smile"],
  "1f604": ["big_smile"],
  "1f6e0": ["working_on_it", "hammer_and_wrench", "tools"],
};

let tables: { nameToCode: Map<string, string>; codeToName: Map<string, string> } | null = null;

/**
 * Unicode emoji names and codes from iamcal's emoji-datasource (the data Zulip's own table
 * derives from), read on first use. A code is the dash-separated lowercase hex of the code
 * points, without the variation selector when an unqualified form exists, as Zulip spells them.
 */
function emojiTables() {
  if (tables) return tables;
  const data = createRequire(import.meta.url)("emoji-datasource/emoji.json") as EmojiEntry[];
  const nameToCode = new Map<string, string>();
  const codeToName = new Map<string, string>();
  for (const e of data) {
    const code = (e.non_qualified ?? e.unified).toLowerCase();
    if (e.short_names.length > 0) codeToName.set(code, e.short_names[0].replace(/-/g, "_"));
    for (const name of e.short_names) {
      nameToCode.set(name, code);
      nameToCode.set(name.replace(/-/g, "_"), code);
    }
  }
  for (const [code, names] of Object.entries(ZULIP_NAMES)) {
    codeToName.set(code, names[0]);
    for (const name of names) nameToCode.set(name, code);
  }
  tables = { nameToCode, codeToName };
  return tables;
}

/** The code of a Unicode emoji by name, as `:name:` writes it. */
export function emojiCodeByName(name: string): string | undefined {
  return emojiTables().nameToCode.get(name);
}

/** Zulip's name for the emoji with this code, as the `:name:` text of a rendered emoji. */
export function emojiNameByCode(code: string): string | undefined {
  return emojiTables().codeToName.get(code);
}
