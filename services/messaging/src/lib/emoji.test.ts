import { describe, expect, it } from "vitest";
import { checkEmojiRequest, checkValidEmojiName, emojiDataByName, normalizeCustomEmojiName, type CustomEmoji } from "./emoji";

const party: CustomEmoji = { id: 7, name: "party_parrot", deactivated: false };
const old: CustomEmoji = { id: 8, name: "old", deactivated: true };
const byId = (id: string) => [party, old].find((e) => String(e.id) === id);
const msg = (f: () => void) => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  return null;
};

describe("emojiDataByName", () => {
  it("takes the organization's custom emoji first, then zulip, then Unicode names", () => {
    const active = new Map([["party_parrot", party], ["smile", { id: 9, name: "smile", deactivated: false }]]);
    expect(emojiDataByName("party_parrot", active)).toEqual({ emojiCode: "7", reactionType: "realm_emoji" });
    expect(emojiDataByName("smile", active)).toEqual({ emojiCode: "9", reactionType: "realm_emoji" });
    expect(emojiDataByName("smile", new Map())).toEqual({ emojiCode: "1f642", reactionType: "unicode_emoji" });
    expect(emojiDataByName("zulip", new Map())).toEqual({ emojiCode: "zulip", reactionType: "zulip_extra_emoji" });
    expect(emojiDataByName("octopus", new Map())).toEqual({ emojiCode: "1f419", reactionType: "unicode_emoji" });
    expect(msg(() => emojiDataByName("no_such_emoji", new Map()))).toBe("Emoji 'no_such_emoji' does not exist");
  });
});

describe("checkEmojiRequest", () => {
  it("accepts a matching name and code in each namespace", () => {
    expect(msg(() => checkEmojiRequest("octopus", "1f419", "unicode_emoji", byId))).toBeNull();
    expect(msg(() => checkEmojiRequest("zulip", "zulip", "zulip_extra_emoji", byId))).toBeNull();
    expect(msg(() => checkEmojiRequest("party_parrot", "7", "realm_emoji", byId))).toBeNull();
  });
  it("answers Zulip's messages otherwise", () => {
    expect(msg(() => checkEmojiRequest("octopus", "zzz", "unicode_emoji", byId))).toBe("Invalid emoji code.");
    expect(msg(() => checkEmojiRequest("smile", "1f419", "unicode_emoji", byId))).toBe("Invalid emoji name.");
    expect(msg(() => checkEmojiRequest("zulip", "1f419", "zulip_extra_emoji", byId))).toBe("Invalid emoji code.");
    expect(msg(() => checkEmojiRequest("logo", "zulip", "zulip_extra_emoji", byId))).toBe("Invalid emoji name.");
    expect(msg(() => checkEmojiRequest("x", "99", "realm_emoji", byId))).toBe("Invalid custom emoji.");
    expect(msg(() => checkEmojiRequest("parrot", "7", "realm_emoji", byId))).toBe("Invalid custom emoji name.");
    expect(msg(() => checkEmojiRequest("old", "8", "realm_emoji", byId))).toBe("This custom emoji has been deactivated.");
    expect(msg(() => checkEmojiRequest("octopus", "1f419", "emoji", byId))).toBe("Invalid emoji type.");
  });
});

describe("custom emoji names", () => {
  it("normalizes spaces and case, then checks the characters and the end", () => {
    expect(normalizeCustomEmojiName("  Party Parrot ")).toBe("party_parrot");
    expect(msg(() => checkValidEmojiName("party_parrot"))).toBeNull();
    expect(msg(() => checkValidEmojiName("green-tick2"))).toBeNull();
    expect(msg(() => checkValidEmojiName(""))).toBe("Emoji name is missing");
    expect(msg(() => checkValidEmojiName("parrot_"))).toBe("Emoji names must end with either a letter or digit.");
    expect(msg(() => checkValidEmojiName("par.rot"))).toBe("Invalid characters in emoji name");
    expect(msg(() => checkValidEmojiName("pärrot"))).toBe("Invalid characters in emoji name");
  });
});
