import { emojiCodeByName, isEmojiCode, type ReactionType } from "@chat/contracts";
import { badRequest } from "@chat/platform";

/** What a custom emoji lookup needs to know of one. */
export interface CustomEmoji {
  id: number;
  name: string;
  deactivated: boolean;
}

export interface EmojiData {
  emojiCode: string;
  reactionType: ReactionType;
}

/**
 * Zulip's get_emoji_data: an emoji given by name only. The organization's active custom emoji
 * come first (one may shadow a Unicode name), then the Zulip logo, then the Unicode names.
 */
export function emojiDataByName(name: string, activeCustom: ReadonlyMap<string, CustomEmoji>): EmojiData {
  const custom = activeCustom.get(name);
  if (custom) return { emojiCode: String(custom.id), reactionType: "realm_emoji" };
  if (name === "zulip") return { emojiCode: "zulip", reactionType: "zulip_extra_emoji" };
  const code = emojiCodeByName(name);
  if (code) return { emojiCode: code, reactionType: "unicode_emoji" };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/**
 * Zulip's check_emoji_request: the code exists in the type's namespace and the name is that
 * emoji's (a new reaction must name a usable emoji; voting for an existing one skips this).
 */
export function checkEmojiRequest(name: string, code: string, type: string, customById: (id: string) => CustomEmoji | undefined): void {
  if (type === "realm_emoji") {
    const custom = customById(code);
    if (!custom) throw badRequest("Invalid custom emoji.");
    if (custom.name !== name) throw badRequest("Invalid custom emoji name.");
    if (custom.deactivated) throw badRequest("This custom emoji has been deactivated.");
  } else if (type === "zulip_extra_emoji") {
    if (code !== "zulip") throw badRequest("Invalid emoji code.");
    if (name !== code) throw badRequest("Invalid emoji name.");
  } else if (type === "unicode_emoji") {
    if (!isEmojiCode(code)) throw badRequest("Invalid emoji code.");
    if (emojiCodeByName(name) !== code) throw badRequest("Invalid emoji name.");
  } else {
    throw badRequest("Invalid emoji type.");
  }
}

/**
 * A custom emoji's name as uploaded: surrounding space dropped, inner spaces as underscores
 * (Zulip's upload_emoji), upper case as lower (the API documentation: "treated the same").
 */
export function normalizeCustomEmojiName(raw: string): string {
  return raw.trim().replace(/ /g, "_").toLowerCase();
}

/** Zulip's check_valid_emoji_name: lower-case letters, digits, `-` and `_`, ending in a letter or digit. */
export function checkValidEmojiName(name: string): void {
  if (name === "") throw badRequest("Emoji name is missing");
  if (/^[0-9a-z_-]+$/.test(name)) {
    if (/[_-]$/.test(name)) throw badRequest("Emoji names must end with either a letter or digit.");
    return;
  }
  throw badRequest("Invalid characters in emoji name");
}
