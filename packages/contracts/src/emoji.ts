import { createRequire } from "node:module";

interface EmojiEntry {
  unified: string;
  non_qualified: string | null;
  short_names: string[];
}

/**
 * Zulip names some emoji its own way (its emoji_names.py), and its clients send those names:
 * the popular reactions and the "Busy" status among them. They win over iamcal's, so `smile`
 * is 1f642 as in Zulip (iamcal's `smile` is Zulip's `big_smile`); the first name is the one
 * Zulip shows for the character. Only names known for sure are listed; the rest are iamcal's.
 */
const ZULIP_NAMES: Record<string, string[]> = {
  "1f44d": ["+1", "thumbs_up", "like"],
  "1f44e": ["-1", "thumbs_down"],
  "1f642": ["smile"],
  "1f604": ["big_smile"],
  "1f6e0": ["working_on_it", "hammer_and_wrench", "tools"],
};

interface EmojiTables {
  nameToCode: Map<string, string>;
  codeToName: Map<string, string>;
  codes: Set<string>;
}

let tables: EmojiTables | null = null;

/**
 * Unicode emoji names and codes from iamcal's emoji-datasource (the data Zulip's own emoji
 * table derives from), read on first use. A code is the dash-separated lowercase hex of the
 * code points, without the variation selector when an unqualified form exists, as Zulip spells
 * them (the qualified spelling is a known code too).
 */
function emojiTables(): EmojiTables {
  if (tables) return tables;
  const data = createRequire(import.meta.url)("emoji-datasource/emoji.json") as EmojiEntry[];
  const nameToCode = new Map<string, string>();
  const codeToName = new Map<string, string>();
  const codes = new Set<string>();
  for (const e of data) {
    const code = (e.non_qualified ?? e.unified).toLowerCase();
    codes.add(code);
    codes.add(e.unified.toLowerCase());
    if (e.short_names.length > 0) codeToName.set(code, e.short_names[0].replace(/-/g, "_"));
    for (const name of e.short_names) {
      nameToCode.set(name, code);
      // Zulip spells multi-word names with underscores; iamcal mostly does too, but not always.
      nameToCode.set(name.replace(/-/g, "_"), code);
    }
  }
  for (const [code, names] of Object.entries(ZULIP_NAMES)) {
    codeToName.set(code, names[0]);
    for (const name of names) nameToCode.set(name, code);
  }
  tables = { nameToCode, codeToName, codes };
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

/** Whether this is the code of a Unicode emoji (qualified or not). */
export function isEmojiCode(code: string): boolean {
  return emojiTables().codes.has(code);
}

/**
 * Every Unicode emoji's names by code, the name Zulip shows first: what a client reads from
 * `server_emoji_data_url` (`{"code_to_names": ...}`) to offer emoji by name.
 */
export function emojiCodeToNames(): Record<string, string[]> {
  const { nameToCode, codeToName } = emojiTables();
  const out: Record<string, string[]> = {};
  for (const [code, name] of codeToName) out[code] = [name];
  for (const [name, code] of nameToCode) {
    const names = (out[code] ??= []);
    if (!names.includes(name)) names.push(name);
  }
  return out;
}
