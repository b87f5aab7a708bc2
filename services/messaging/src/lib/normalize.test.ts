import { describe, expect, it } from "vitest";
import { normalizeBody, normalizeTopic, truncate } from "./normalize";

describe("normalize", () => {
  it("truncates content to 10000 with Zulip's suffix", () => {
    const body = normalizeBody("x".repeat(10050));
    expect(body.length).toBe(10000);
    expect(body.endsWith("\n[message truncated]")).toBe(true);
  });
  it("refuses empty content and trims trailing whitespace", () => {
    expect(() => normalizeBody("  \n ")).toThrow("Message must not be empty");
    expect(normalizeBody("\n\nhi  \n")).toBe("hi");
  });
  it("truncates topics to 60 with ...", () => {
    const t = normalizeTopic("t".repeat(70));
    expect(t).toBe("t".repeat(57) + "...");
    expect(() => normalizeTopic("   ")).toThrow("Topic can't be empty!");
    expect(() => normalizeTopic(undefined)).toThrow("Missing topic");
  });
  it("counts code points, not UTF-16 units", () => {
    expect(truncate("😀".repeat(5), 5, "...")).toBe("😀".repeat(5));
  });
});
