import { describe, expect, it } from "vitest";
import { quantileBetween } from "./metrics";

const reading = (counts: number[], les = [0.01, 0.05, 0.1, Infinity]) => les.map((le, i) => ({ le, count: counts[i] }));

describe("quantileBetween", () => {
  it("interpolates inside the bucket where the rank falls, over what was counted between the readings", () => {
    // 100 new observations: 50 under 10 ms, 40 more under 50 ms, 10 more under 100 ms.
    const before = reading([5, 5, 5, 5]);
    const after = reading([55, 95, 105, 105]);
    expect(quantileBetween(before, after, 0.5)).toBeCloseTo(0.01);
    expect(quantileBetween(before, after, 0.7)).toBeCloseTo(0.01 + 0.04 * (20 / 40));
    expect(quantileBetween(before, after, 0.99)).toBeCloseTo(0.05 + 0.05 * (9 / 10));
  });

  it("answers NaN when nothing was counted, and the top bound for the +Inf bucket", () => {
    expect(quantileBetween(reading([1, 2, 3, 3]), reading([1, 2, 3, 3]), 0.5)).toBeNaN();
    expect(quantileBetween(reading([0, 0, 0, 0]), reading([0, 0, 0, 4]), 0.5)).toBe(0.1);
  });
});
