import { describe, expect, it } from "vitest";
import { parseFormBody, parseUrlEncoded, repairQuery } from "./form";

describe("parseUrlEncoded", () => {
  it("collects repeated names, keeps blank values and names without `=`, skips empty pieces", () => {
    expect({ ...parseUrlEncoded("a=1&&b=&c&a=2&a=3") }).toEqual({ a: ["1", "2", "3"], b: "", c: "" });
  });

  it("takes any name as data, __proto__ included", () => {
    const out = parseUrlEncoded("__proto__=x&constructor=y");
    expect(out.__proto__).toBe("x");
    expect(out.constructor).toBe("y");
    expect(Object.getPrototypeOf(out)).toBeNull();
  });
});

describe("parseFormBody", () => {
  it("decodes a charset TextDecoder knows (windows-1251), escapes and raw bytes alike", () => {
    const body = Buffer.concat([Buffer.from("a=%EF%F0%E8&b="), Buffer.from([0xe2, 0xe5, 0xf2])]);
    expect({ ...parseFormBody(body, "application/x-www-form-urlencoded; charset=windows-1251") }).toEqual({ a: "при", b: "вет" });
  });

  it("keeps a byte order mark as data, as Python's decode does", () => {
    expect({ ...parseFormBody(Buffer.from("\uFEFFa=%EF%BB%BFx%E9", "utf8"), undefined) }).toEqual({ "\uFEFFa": "\uFEFFx\uFFFD" });
  });

  it("keeps UTF-8 for an unknown charset, as Django does", () => {
    expect({ ...parseFormBody(Buffer.from("a=%C3%A9"), "application/x-www-form-urlencoded; charset=no-such-thing") }).toEqual({ a: "é" });
  });
});

describe("repairQuery", () => {
  it("returns fastify's parse untouched unless a value still holds a `%`", () => {
    const parsed = { a: "é" };
    expect(repairQuery("/x?a=%C3%A9", parsed)).toBe(parsed);
    expect({ ...repairQuery("/x?a=%E9&b=1#frag", { a: "%E9", b: "1" }) }).toEqual({ a: "\uFFFD", b: "1" });
  });
});
