import { describe, expect, it } from "vitest";
import { sanitizeFileName, uploadContentType, uploadedFileName, uploadUrl } from "./upload-names";

describe("an upload's shown name", () => {
  it("is the name given, unprintable characters dropped and escapes decoded", () => {
    expect(uploadedFileName("Q3 report (final).pdf")).toBe("Q3 report (final).pdf");
    expect(uploadedFileName("a\u0000b\u200b.txt")).toBe("ab.txt");
    expect(uploadedFileName("caf%C3%A9%20menu.txt")).toBe("café menu.txt");
    expect(uploadedFileName("100%.txt")).toBe("100%.txt");
  });

  it("is none for a part that names no file", () => {
    for (const given of [undefined, "", ".", "..", "\u0000"]) expect(uploadedFileName(given)).toBeNull();
  });

  it("keeps its extension when cut to 255 characters", () => {
    const name = uploadedFileName(`${"é".repeat(300)}.jpeg`)!;
    expect([...name]).toHaveLength(255);
    expect(name.endsWith("é.jpeg")).toBe(true);
  });
});

describe("an upload's path segment", () => {
  it("keeps letters, digits, _ . -, and fits 200 bytes of UTF-8 with its end", () => {
    expect(sanitizeFileName("a b  c.txt")).toBe("a-b-c.txt");
    const long = sanitizeFileName(`${"é".repeat(300)}.png`);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(200);
    expect(long.endsWith(".png")).toBe(true);
  });

  it("is percent-encoded in the upload's URL", () => {
    expect(uploadUrl("2/ab/xyz/café.png")).toBe("/user_uploads/2/ab/xyz/caf%C3%A9.png");
  });
});

describe("an upload's stored type", () => {
  it("is the declared one, or a guess from the name where none was declared", () => {
    expect(uploadContentType("image/gif", "x.png")).toBe("image/gif");
    expect(uploadContentType(undefined, "x.png")).toBe("image/png");
    expect(uploadContentType("", "x.unknown")).toBe("application/octet-stream");
  });

  it("gives way from text/plain (the parser's word for no type) only to a media type", () => {
    expect(uploadContentType("text/plain", "photo.JPG")).toBe("image/jpeg");
    expect(uploadContentType("text/plain", "talk.pdf")).toBe("application/pdf");
    expect(uploadContentType("text/plain", "page.html")).toBe("text/plain");
    expect(uploadContentType("text/plain", "data.json")).toBe("text/plain");
  });
});
