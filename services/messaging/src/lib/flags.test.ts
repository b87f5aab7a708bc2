import { describe, expect, it } from "vitest";
import { FLAG_BITS, flagsToList } from "./flags";

describe("flagsToList", () => {
  it("lists set flags in Zulip's order and hides is_private", () => {
    expect(flagsToList(FLAG_BITS.starred | FLAG_BITS.read | FLAG_BITS.is_private)).toEqual(["read", "starred"]);
  });
  it("derives wildcard_mentioned from either wildcard kind", () => {
    expect(flagsToList(FLAG_BITS.topic_wildcard_mentioned)).toEqual(["topic_wildcard_mentioned", "wildcard_mentioned"]);
    expect(flagsToList(FLAG_BITS.stream_wildcard_mentioned)).toEqual(["stream_wildcard_mentioned", "wildcard_mentioned"]);
    expect(flagsToList(0)).toEqual([]);
  });
});
