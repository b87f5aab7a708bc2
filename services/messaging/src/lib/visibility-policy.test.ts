import { describe, expect, it } from "vitest";
import { AUTO_POLICY, followsWhenMentioned, policyAfterMerge, policyAfterParticipation, policyAfterSend, VISIBILITY, type SendContext } from "./visibility-policy";

const { onParticipation, onSend, onInitiation, never } = AUTO_POLICY;
const base: SendContext = { followPolicy: onInitiation, unmutePolicy: onSend, current: VISIBILITY.inherit, streamMuted: false, startsTopic: false };
const after = (over: Partial<SendContext>) => policyAfterSend({ ...base, ...over });

describe("policyAfterSend", () => {
  it("with Zulip's defaults: follows a topic the sender starts, unmutes in a muted channel", () => {
    expect(after({ startsTopic: true })).toBe(VISIBILITY.followed);
    expect(after({})).toBeUndefined();
    expect(after({ streamMuted: true })).toBe(VISIBILITY.unmuted);
    // Starting a topic in a muted channel: following wins.
    expect(after({ streamMuted: true, startsTopic: true })).toBe(VISIBILITY.followed);
    // An explicitly muted topic of a muted channel is unmuted by sending to it.
    expect(after({ streamMuted: true, current: VISIBILITY.muted })).toBe(VISIBILITY.unmuted);
    // A muted topic of an unmuted channel stays muted.
    expect(after({ current: VISIBILITY.muted })).toBeUndefined();
    expect(after({ streamMuted: true, current: VISIBILITY.unmuted })).toBeUndefined();
  });

  it("follows on every message with the participation or send policies, never lowering a followed topic", () => {
    for (const followPolicy of [onParticipation, onSend]) {
      expect(after({ followPolicy })).toBe(VISIBILITY.followed);
      expect(after({ followPolicy, current: VISIBILITY.muted })).toBe(VISIBILITY.followed);
      expect(after({ followPolicy, current: VISIBILITY.unmuted, streamMuted: true })).toBe(VISIBILITY.followed);
    }
    expect(after({ followPolicy: onSend, current: VISIBILITY.followed })).toBeUndefined();
    expect(after({ current: VISIBILITY.followed, streamMuted: true })).toBeUndefined();
  });

  it("changes nothing with both policies at never", () => {
    for (const ctx of [{ startsTopic: true }, { streamMuted: true }, { streamMuted: true, startsTopic: true, current: VISIBILITY.muted }]) {
      expect(after({ followPolicy: never, unmutePolicy: never, ...ctx })).toBeUndefined();
    }
  });

  it("unmutes on initiation only for a topic the sender starts in a muted channel", () => {
    expect(after({ followPolicy: never, unmutePolicy: onInitiation, streamMuted: true, startsTopic: true })).toBe(VISIBILITY.unmuted);
    expect(after({ followPolicy: never, unmutePolicy: onInitiation, streamMuted: true })).toBeUndefined();
    expect(after({ followPolicy: never, unmutePolicy: onInitiation, startsTopic: true })).toBeUndefined();
    expect(after({ followPolicy: never, unmutePolicy: onParticipation, streamMuted: true })).toBe(VISIBILITY.unmuted);
  });
});

describe("followsWhenMentioned", () => {
  it("follows unless disabled, already followed or explicitly muted", () => {
    expect(followsWhenMentioned(true, VISIBILITY.inherit)).toBe(true);
    expect(followsWhenMentioned(true, VISIBILITY.unmuted)).toBe(true);
    expect(followsWhenMentioned(true, VISIBILITY.muted)).toBe(false);
    expect(followsWhenMentioned(true, VISIBILITY.followed)).toBe(false);
    expect(followsWhenMentioned(false, VISIBILITY.inherit)).toBe(false);
  });
});

describe("policyAfterParticipation (reactions)", () => {
  const react = (over: Partial<SendContext>) => policyAfterParticipation({ ...base, ...over });
  it("changes nothing with Zulip's defaults", () => {
    expect(react({})).toBeUndefined();
    expect(react({ streamMuted: true })).toBeUndefined();
  });
  it("follows or unmutes on participation, only raising visibility", () => {
    expect(react({ followPolicy: onParticipation })).toBe(VISIBILITY.followed);
    expect(react({ followPolicy: onParticipation, current: VISIBILITY.muted })).toBe(VISIBILITY.followed);
    expect(react({ unmutePolicy: onParticipation, streamMuted: true })).toBe(VISIBILITY.unmuted);
    expect(react({ unmutePolicy: onParticipation, streamMuted: true, current: VISIBILITY.muted })).toBe(VISIBILITY.unmuted);
    expect(react({ unmutePolicy: onParticipation, streamMuted: false })).toBeUndefined();
    expect(react({ unmutePolicy: onParticipation, streamMuted: true, current: VISIBILITY.followed })).toBeUndefined();
    expect(react({ followPolicy: onParticipation, current: VISIBILITY.followed })).toBeUndefined();
    expect(react({ followPolicy: never, unmutePolicy: never, streamMuted: true })).toBeUndefined();
  });
});

describe("policyAfterMerge (messages moved into a topic that has messages)", () => {
  const { inherit, muted, unmuted, followed } = VISIBILITY;
  it("keeps a shared policy, prefers the more visible one, and keeps a mute only when both were muted", () => {
    const table: Array<[number, number, number]> = [
      [inherit, inherit, inherit],
      [inherit, muted, inherit],
      [inherit, unmuted, unmuted],
      [inherit, followed, followed],
      [muted, inherit, inherit],
      [muted, muted, muted],
      [muted, unmuted, unmuted],
      [muted, followed, followed],
      [unmuted, inherit, unmuted],
      [unmuted, muted, unmuted],
      [unmuted, followed, followed],
      [followed, inherit, followed],
      [followed, muted, followed],
      [followed, unmuted, followed],
      [followed, followed, followed],
    ];
    for (const [moved, target, after] of table) expect(policyAfterMerge(moved, target), `${moved} into ${target}`).toBe(after);
  });
});
