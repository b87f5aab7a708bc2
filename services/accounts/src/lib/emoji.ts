import { emojiCodeByName, isEmojiCode } from "@chat/contracts";
import { badRequest } from "@chat/platform";

export const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] as const;
export type ReactionType = (typeof REACTION_TYPES)[number];

/** The organization's custom emoji, by id (deactivated ones too). */
export type RealmEmojiLookup = (id: string) => { name: string; deactivated: boolean } | null;
const noRealmEmoji: RealmEmojiLookup = () => null;

type CustomEmoji = { id: number; name: string; deactivated: boolean };

/** Lookups over a list of the organization's custom emoji. */
export function realmEmojiLookups(emoji: CustomEmoji[]): { byId: RealmEmojiLookup; activeIdByName: (name: string) => string | null } {
  const byId = new Map(emoji.map((e) => [String(e.id), e]));
  const active = new Map(emoji.filter((e) => !e.deactivated).map((e) => [e.name, String(e.id)]));
  return { byId: (id) => byId.get(id) ?? null, activeIdByName: (name) => active.get(name) ?? null };
}

/** Zulip's lookup of an emoji given by name only: an active custom one, then Unicode, then the Zulip logo. */
export function emojiNameToCode(name: string, activeIdByName: (name: string) => string | null = () => null): { code: string; type: ReactionType } {
  const id = activeIdByName(name);
  if (id !== null) return { code: id, type: "realm_emoji" };
  const code = emojiCodeByName(name);
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
    if (!isEmojiCode(code)) throw badRequest("Invalid emoji code.");
    if (emojiCodeByName(name) !== code) throw badRequest("Invalid emoji name.");
    return;
  }
  throw badRequest("Invalid emoji type.");
}
