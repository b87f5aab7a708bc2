import { describe, expect, it } from "vitest";
import { readUploadToken, signUploadToken, TEMPORARY_URL_SECONDS } from "./upload-token";

const SECRET = "a-secret-of-sixteen-or-more";
const PATH = "2/ab/Xyz123/notes.pdf";
const t0 = new Date("2026-11-28T12:00:00Z");
const later = (s: number) => new Date(t0.getTime() + s * 1000);

describe("temporary upload tokens", () => {
  it("name their file for a minute", () => {
    const token = signUploadToken(SECRET, PATH, t0);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(readUploadToken(SECRET, token, later(TEMPORARY_URL_SECONDS - 1))).toBe(PATH);
    expect(readUploadToken(SECRET, token, later(TEMPORARY_URL_SECONDS))).toBeNull();
  });

  it("are refused when altered, signed with another secret, or malformed", () => {
    const token = signUploadToken(SECRET, PATH, t0);
    const [body, sig] = token.split(".");
    const forged = Buffer.from(JSON.stringify(["2/ab/Other/secret.pdf", Math.floor(t0.getTime() / 1000) + 600])).toString("base64url");
    expect(readUploadToken(SECRET, `${forged}.${sig}`, t0)).toBeNull();
    expect(readUploadToken("another-secret-of-sixteen", token, t0)).toBeNull();
    for (const bad of ["", body, `${body}.`, `${body}.${sig}.x`, "a.b"]) expect(readUploadToken(SECRET, bad, t0)).toBeNull();
  });
});
