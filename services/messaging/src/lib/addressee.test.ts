import { describe, expect, it } from "vitest";
import { extractPrivateRecipients, extractStreamIndicator, messageKind } from "./addressee";

describe("addressee parsing", () => {
  it("reads channel indicators in every legacy form", () => {
    expect(extractStreamIndicator("general")).toBe("general");
    expect(extractStreamIndicator('"general"')).toBe("general");
    expect(extractStreamIndicator("7")).toBe(7);
    expect(extractStreamIndicator('["general"]')).toBe("general");
    expect(() => extractStreamIndicator('["a","b"]')).toThrow("Expected exactly one channel");
    expect(() => extractStreamIndicator("{}")).toThrow("Invalid data type for channel");
    for (const float of ["7.0", "7e0", "[7.0]", "7E+0"]) expect(() => extractStreamIndicator(float)).toThrow("Invalid data type for channel");
    expect(extractStreamIndicator("v1.0")).toBe("v1.0");
  });
  it("reads direct recipients as ids or emails", () => {
    expect(extractPrivateRecipients("[1,2,2]")).toEqual([1, 2]);
    expect(extractPrivateRecipients('["a@x", "b@x"]')).toEqual(["a@x", "b@x"]);
    expect(extractPrivateRecipients("a@x, b@x,a@x")).toEqual(["a@x", "b@x"]);
    expect(extractPrivateRecipients("[]")).toEqual([]);
    expect(() => extractPrivateRecipients('[1,"a@x"]')).toThrow("Recipient lists may contain emails or user IDs, but not both.");
    expect(() => extractPrivateRecipients("5")).toThrow("Invalid data type for recipients");
    expect(() => extractPrivateRecipients("[true]")).toThrow("Invalid data type for recipients");
    for (const float of ["[6.0]", "[1, 6e0]", "[6E2]"]) expect(() => extractPrivateRecipients(float)).toThrow("Invalid data type for recipients");
    expect(extractPrivateRecipients('["a.1e5@x"]')).toEqual(["a.1e5@x"]);
  });
  it("maps message types", () => {
    expect(messageKind("channel")).toBe("stream");
    expect(messageKind("direct")).toBe("private");
    expect(() => messageKind("group")).toThrow("Invalid message type");
  });
});
