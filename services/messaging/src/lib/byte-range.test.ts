import { describe, expect, it } from "vitest";
import { requestedRange } from "./byte-range";

describe("requestedRange", () => {
  it("reads the three forms of one byte range", () => {
    expect(requestedRange("bytes=0-9", undefined, 100)).toEqual({ start: 0, end: 9 });
    expect(requestedRange("bytes=90-", undefined, 100)).toEqual({ start: 90, end: 99 });
    expect(requestedRange("bytes=-10", undefined, 100)).toEqual({ start: 90, end: 99 });
    // An end past the file, or a suffix longer than it, is cut to the file.
    expect(requestedRange("bytes=50-1000", undefined, 100)).toEqual({ start: 50, end: 99 });
    expect(requestedRange("bytes=-1000", undefined, 100)).toEqual({ start: 0, end: 99 });
  });

  it("starting past the end cannot be satisfied", () => {
    expect(requestedRange("bytes=100-", undefined, 100)).toBe("unsatisfiable");
    expect(requestedRange("bytes=100-200", undefined, 100)).toBe("unsatisfiable");
    expect(requestedRange("bytes=-0", undefined, 100)).toBe("unsatisfiable");
    expect(requestedRange("bytes=-5", undefined, 0)).toBe("unsatisfiable");
  });

  it("serves the whole file for anything else", () => {
    for (const header of [undefined, "bytes=5-1", "bytes=-", "bytes=0-1,5-9", "items=0-9", "bytes=a-b", "bytes=1.5-2"]) {
      expect(requestedRange(header, undefined, 100), String(header)).toBeNull();
    }
    expect(requestedRange("bytes=0-9", '"some-etag"', 100)).toBeNull();
  });
});
