import { describe, expect, it } from "vitest";
import { narrowConditions, postProcess, rangePlan } from "./narrow";

describe("narrow SQL", () => {
  it("binds values and negates", () => {
    const params: unknown[] = [7];
    const conds = narrowConditions(
      [
        { kind: "stream", streamId: 3, negated: false },
        { kind: "topic", topic: "Lunch", negated: true },
        { kind: "all" },
      ],
      7,
      params,
    );
    expect(conds).toEqual(["m.stream_id = $2", "NOT ((m.stream_id IS NOT NULL AND lower(m.topic) = lower($3)))"]);
    expect(params).toEqual([7, 3, "Lunch"]);
  });
  it("a direct conversation that never existed matches nothing", () => {
    expect(narrowConditions([{ kind: "dm", recipientId: null, negated: false }], 1, [])).toEqual(["false"]);
  });
});

describe("range", () => {
  const rows = [1, 2, 3, 4, 5].map((id) => ({ id }));
  it("reads both sides around an anchor", () => {
    expect(rangePlan(3, 1, 1, true, false, false)).toEqual({ beforeAnchor: 2, beforeLimit: 1, afterAnchor: 3, afterLimit: 2 });
    const r = postProcess(rows.filter((x) => x.id >= 2 && x.id <= 4), 1, 1, 3, false, false);
    expect(r.rows.map((x) => x.id)).toEqual([2, 3, 4]);
    expect([r.foundAnchor, r.foundOldest, r.foundNewest]).toEqual([true, false, false]);
  });
  it("newest: everything before, found_newest", () => {
    const r = postProcess(rows.slice().reverse().slice(0, 2).reverse(), 2, 0, 1e16, false, true);
    expect(r.rows.map((x) => x.id)).toEqual([4, 5]);
    expect([r.foundAnchor, r.foundOldest, r.foundNewest]).toEqual([false, false, true]);
  });
  it("oldest: found_oldest and the window after", () => {
    const r = postProcess(rows.slice(0, 3), 0, 3, 0, true, false);
    expect(r.rows.map((x) => x.id)).toEqual([1, 2, 3]);
    expect([r.foundOldest, r.foundNewest]).toEqual([true, false]);
  });
});
