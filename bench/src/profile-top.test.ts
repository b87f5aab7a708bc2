import { describe, expect, it } from "vitest";
import { busyTimeline, callersOf, topFunctions } from "./profile-top";

const frame = (functionName: string, url = "") => ({ functionName, url, lineNumber: 0 });

/**
 * A profile of two paths to `writev` (through the send route, 3 ms, and the relay, 1 ms),
 * 4 ms of other work in the route and 2 ms idle: samples are 1 ms apart.
 */
const profile = {
  nodes: [
    { id: 1, callFrame: frame("(root)"), children: [2, 3, 7] },
    { id: 2, callFrame: frame("(idle)") },
    { id: 3, callFrame: frame("route", "file:///repo/services/messaging/src/routes/messages.ts"), children: [4, 6] },
    { id: 4, callFrame: frame("send", "file:///repo/services/messaging/src/actions/messages.ts"), children: [5] },
    { id: 5, callFrame: frame("writev") },
    { id: 6, callFrame: frame("render", "file:///repo/services/messaging/src/lib/markdown.ts") },
    { id: 7, callFrame: frame("relay", "file:///repo/packages/platform/src/outbox.ts"), children: [8] },
    { id: 8, callFrame: frame("writev") },
  ],
  // Busy for the first 8 ms, then idle for 2.
  samples: [5, 5, 5, 6, 6, 6, 6, 8, 2, 2],
  timeDeltas: Array(10).fill(1000),
  startTime: 0,
  endTime: 10_000,
};

describe("profile-top", () => {
  it("groups a function's time by the chain of its callers, largest first", () => {
    const chains = callersOf(profile, "writev", 2);
    expect(chains.map((c) => [c.chain, c.ms, c.share])).toEqual([
      ["send services/messaging/src/actions/messages.ts:1 <- route services/messaging/src/routes/messages.ts:1", 3, 0.3],
      ["relay packages/platform/src/outbox.ts:1 <- (root)", 1, 0.1],
    ]);
    expect(callersOf(profile, "nothing like it")).toEqual([]);
  });

  it("shows in which part of the window the process was busy", () => {
    expect(busyTimeline(profile, 5)).toEqual([1, 0.6]);
  });

  it("ranks self time by function and package, and our functions by inclusive time", () => {
    const top = topFunctions(profile, 3);
    expect(top.functions.map((f) => [f.name.split(" ")[0], f.ms])).toEqual([["writev", 4], ["render", 4], ["(idle)", 2]]);
    expect(top.packages.map((p) => [p.name, p.ms])).toEqual([["(native/V8)", 6], ["services/messaging", 4]]);
    expect(top.inclusive.map((f) => [f.name.split(" ")[0], f.ms])).toEqual([["route", 7], ["send", 3], ["render", 4]].sort((a, b) => (b[1] as number) - (a[1] as number)));
  });
});
