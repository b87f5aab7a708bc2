import { describe, expect, it } from "vitest";
import { ApiError } from "@chat/platform";
import { eventWanted, parseJsonBody } from "./payload";

const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof ApiError ? { status: err.status, code: err.code, msg: err.message } : err;
  }
  throw new Error("no error");
};

describe("an integration URL's JSON body", () => {
  it("is read whatever it holds", () => {
    expect(parseJsonBody(Buffer.from('{"a": [1, "é"]}'))).toEqual({ a: [1, "é"] });
    expect(parseJsonBody(Buffer.from("42"))).toBe(42);
  });

  it("is Zulip's 400 INVALID_JSON when missing, not JSON, or not UTF-8", () => {
    const malformed = { status: 400, code: "INVALID_JSON", msg: "Malformed JSON" };
    for (const body of [undefined, Buffer.from(""), Buffer.from("{'a': 1}"), Buffer.from('{"a": 1'), Buffer.from([0x22, 0xff, 0x22])]) {
      expect(errorOf(() => parseJsonBody(body))).toEqual(malformed);
    }
  });

  it("nests at most 1024 levels, as Zulip's parser: deeper is Malformed JSON (it could not be printed)", () => {
    const nested = (n: number) => Buffer.from("[".repeat(n) + "]".repeat(n));
    expect(parseJsonBody(nested(1024))).toBeInstanceOf(Array);
    expect(errorOf(() => parseJsonBody(nested(1025)))).toMatchObject({ code: "INVALID_JSON" });
    expect(errorOf(() => parseJsonBody(nested(1_000_000)))).toMatchObject({ code: "INVALID_JSON" });
    // Brackets inside strings are text.
    expect(parseJsonBody(Buffer.from(JSON.stringify({ s: "[".repeat(5000) + '\\"{' })))).toEqual({ s: "[".repeat(5000) + '\\"{' });
  });
});

describe("only_events / exclude_events", () => {
  it("passes everything without filters", () => {
    expect(eventWanted("firing", undefined, undefined)).toBe(true);
  });

  it("keeps only matching types, then drops excluded ones, with shell-style patterns", () => {
    expect(eventWanted("firing", ["firing"], undefined)).toBe(true);
    expect(eventWanted("resolved", ["firing"], undefined)).toBe(false);
    expect(eventWanted("resolved", [], undefined)).toBe(false);
    expect(eventWanted("resolved", ["res*"], undefined)).toBe(true);
    expect(eventWanted("resolved", ["re?olved"], undefined)).toBe(true);
    expect(eventWanted("resolved", ["[rf]*"], undefined)).toBe(true);
    expect(eventWanted("resolved", ["[!r]*"], undefined)).toBe(false);
    expect(eventWanted("firing", undefined, ["fir*"])).toBe(false);
    expect(eventWanted("firing", ["*"], ["resolved"])).toBe(true);
    // Pattern characters are not regular expressions, and matching is whole and case-sensitive.
    expect(eventWanted("firing", ["fir.ng"], undefined)).toBe(false);
    expect(eventWanted("firing", ["fir"], undefined)).toBe(false);
    expect(eventWanted("firing", ["FIRING"], undefined)).toBe(false);
  });
});
