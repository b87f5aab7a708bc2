import { describe, expect, it } from "vitest";
import { ApiError } from "@chat/platform";
import { parseBasicAuth } from "./basic";

const KEY = "abcdefghijABCDEFGHIJ0123456789xy";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

function failure(header: string | undefined): { status: number; code: string | null; msg: string; www?: string } {
  try {
    parseBasicAuth(header);
  } catch (err) {
    const e = err as ApiError;
    return { status: e.status, code: e.code, msg: e.message, www: e.headers["WWW-Authenticate"] };
  }
  throw new Error("expected a failure");
}

describe("parseBasicAuth", () => {
  it("reads email and key, trimming spaces around both", () => {
    expect(parseBasicAuth("Basic " + b64(`iago@zulip.com:${KEY}`))).toEqual({ email: "iago@zulip.com", apiKey: KEY });
    expect(parseBasicAuth("basic " + b64(` iago@zulip.com :  ${KEY} `))).toEqual({ email: "iago@zulip.com", apiKey: KEY });
    expect(parseBasicAuth("  BASIC   " + b64(`é@x.org:${KEY}`) + " ")).toEqual({ email: "é@x.org", apiKey: KEY });
  });

  it("asks for credentials when there are none", () => {
    for (const h of [undefined, "", "   "]) {
      expect(failure(h)).toEqual({ status: 401, code: "UNAUTHORIZED", msg: "Not logged in: API authentication or user session required", www: 'Basic realm="zulip"' });
    }
  });

  it("refuses other schemes as unauthorized (our spec; Zulip answers 400), in Zulip's words", () => {
    expect(failure("Bearer " + KEY)).toEqual({ status: 401, code: "UNAUTHORIZED", msg: "This endpoint requires HTTP basic authentication.", www: 'Basic realm="zulip"' });
  });

  it("reads a header of one or three words as unreadable, whatever its scheme (Zulip splits it in two first)", () => {
    for (const h of ["Bearer", "Bearer a b", "Digest username=x realm=y"]) {
      expect(failure(h), h).toEqual({ status: 401, code: "UNAUTHORIZED", msg: "Invalid authorization header for basic auth", www: 'Basic realm="zulip"' });
    }
  });

  it("rejects headers that do not decode to exactly one email:key pair", () => {
    for (const h of ["Basic", "Basic ***", "Basic " + b64("nocolon"), "Basic " + b64(`a:b:${KEY}`), "Basic " + b64("x:y").slice(0, -1), "Basic " + Buffer.from([0xc3, 0x28, 0x3a, 0x61]).toString("base64"), "Basic a b"]) {
      expect(failure(h), h).toMatchObject({ status: 401, code: "UNAUTHORIZED", msg: "Invalid authorization header for basic auth", www: 'Basic realm="zulip"' });
    }
  });

  it("rejects keys that are not 32 letters and digits", () => {
    for (const key of ["", "short", KEY + "z", KEY.slice(0, 31) + "_", KEY.slice(0, 31) + "é"]) {
      expect(failure("Basic " + b64(`iago@zulip.com:${key}`)), key).toMatchObject({ status: 401, code: "UNAUTHORIZED", msg: "Malformed API key" });
    }
  });
});
