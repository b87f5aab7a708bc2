import { describe, expect, it } from "vitest";
import { decodeJsonPayload, eventWanted, flatTopic, parseJsonBody, payloadReader } from "./payload";
import { errorOf } from "./errors.test-support";

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

describe("an integration's JSON payload, wherever the tool put it", () => {
  const body = (text: string) => Buffer.from(text);

  it("is the body, whatever its type says", () => {
    expect(decodeJsonPayload(body('{"a": 1}'), "application/json", undefined)).toEqual({ a: 1 });
    expect(decodeJsonPayload(body('{"a": 1}'), "text/plain", "ignored")).toEqual({ a: 1 });
    expect(decodeJsonPayload(body('{"a": 1}'), "application/x-www-form-urlencoded", '{"b": 2}')).toEqual({ a: 1 });
  });

  it("is a multipart form's `payload` field, and a urlencoded form's when the body itself is not JSON", () => {
    expect(decodeJsonPayload(undefined, "multipart/form-data; boundary=x", '{"m": 1}')).toEqual({ m: 1 });
    expect(decodeJsonPayload(body("payload=%7B%7D"), "application/x-www-form-urlencoded; charset=utf-8", '{"f": 1}')).toEqual({ f: 1 });
  });

  it("is Missing 'payload' for a multipart form without it, and Malformed JSON when it is not JSON", () => {
    expect(errorOf(() => decodeJsonPayload(undefined, "multipart/form-data; boundary=x", undefined))).toEqual({
      status: 400,
      code: "REQUEST_VARIABLE_MISSING",
      msg: "Missing 'payload' argument",
    });
    expect(errorOf(() => decodeJsonPayload(undefined, "multipart/form-data; boundary=x", "{"))).toMatchObject({ code: "INVALID_JSON" });
    expect(errorOf(() => decodeJsonPayload(body("a=b"), "application/x-www-form-urlencoded", undefined))).toMatchObject({ code: "INVALID_JSON" });
    expect(errorOf(() => decodeJsonPayload(body("payload=x"), "application/x-www-form-urlencoded", "x"))).toMatchObject({ code: "INVALID_JSON" });
    // Only forms carry fields: a JSON body that is not JSON is not saved by a query string's `payload`.
    expect(errorOf(() => decodeJsonPayload(body("{"), "application/json", "{}"))).toMatchObject({ code: "INVALID_JSON" });
  });
});

describe("payloadReader", () => {
  const read = payloadReader("Test");
  const payload = { a: { b: "x", n: 3, t: true, list: [1], nil: null }, arr: [{ c: "y" }] };

  it("reads fields by dotted path, with their types", () => {
    expect(read.str(payload, "a.b")).toBe("x");
    expect(read.num(payload, "a.n")).toBe(3);
    expect(read.optBool(payload, "a.t")).toBe(true);
    expect(read.optList(payload, "a.list")).toEqual([1]);
    expect(read.obj(payload, "a")).toBe(payload.a);
    expect(read.optStr(payload, "a.nil")).toBeUndefined();
    expect(read.optStr(payload, "a.missing.deeper")).toBeUndefined();
    // Only the payload's own keys: never what every object inherits.
    expect(read.optObj(payload, "constructor")).toBeUndefined();
    expect(read.optStr(payload, "arr.0.c")).toBeUndefined();
  });

  it("refuses a missing required field, or a field of another type, naming it", () => {
    const anomalous = (reason: string) => ({ status: 400, code: "ANOMALOUS_WEBHOOK_PAYLOAD", msg: `Unable to parse request: Did Test generate this event? ${reason}` });
    expect(errorOf(() => read.str(payload, "a.missing"))).toEqual(anomalous("'a.missing' is missing or not a string."));
    expect(errorOf(() => read.optStr(payload, "a.n"))).toEqual(anomalous("'a.n' is missing or not a string."));
    expect(errorOf(() => read.num(payload, "a.b"))).toEqual(anomalous("'a.b' is missing or not a number."));
    expect(errorOf(() => read.optList(payload, "a"))).toEqual(anomalous("'a' is missing or not a list."));
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

  it("matches in time linear in the pattern: runs of wildcards do not backtrack", () => {
    const started = Date.now();
    // As a regular expression, the first of these took minutes (the caller chooses the pattern).
    expect(eventWanted("pull_request_review_comment", ["*".repeat(40) + "Z", "*?".repeat(30) + "Z"], undefined)).toBe(false);
    expect(eventWanted("pull_request_review_comment", ["*?".repeat(27) + "*"], undefined)).toBe(true);
    expect(eventWanted("pull_request_review_comment", ["*?".repeat(28) + "*"], undefined)).toBe(false);
    expect(Date.now() - started).toBeLessThan(500);
    expect(eventWanted("firing", ["f**g", "[z-a]*"], undefined)).toBe(true);
    expect(eventWanted("firing", ["[z-a]*"], undefined)).toBe(false);
    expect(eventWanted("[x]", ["[[]x]"], undefined)).toBe(true);
  });
});

describe("an integration's topic", () => {
  it("is flattened: control characters and line breaks become spaces, runs of white space one, trimmed", () => {
    expect(flatTopic("chat / PR #3 Fix\r\nthe\tlogin\u0007 now  ")).toBe("chat / PR #3 Fix the login now");
    expect(flatTopic("\u0085a\u2028b\u2029c\u001b[0m\u007f")).toBe("a b c [0m");
    // A lone surrogate is no character either.
    expect(flatTopic("x\ud800y")).toBe("x y");
    expect(flatTopic("été 🚀 ok")).toBe("été 🚀 ok");
  });

  it("is (no topic) when nothing is left", () => {
    expect(flatTopic("\r\n\u0000 \t")).toBe("(no topic)");
    expect(flatTopic("")).toBe("(no topic)");
  });
});
