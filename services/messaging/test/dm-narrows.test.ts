import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, userWithId, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * The direct-message narrows that find conversations by a participant (`dm-including`, the older
 * `group-pm-with`, negated too) answer GET /messages with exactly the viewer's messages whose
 * conversation holds that user: an id whose digits occur inside other ids matches only itself,
 * self conversations and group conversations count, and another organization's never do. The
 * expected answers are worked out here from the messages sent, for every viewer and operand.
 */

let m: Messaging;
let org: Org;
let other: Org;

/** A sent message: its id and its conversation's participants (null: a channel message, received by `to`). */
interface Sent {
  id: number;
  participants: number[] | null;
  to: number[];
}
const sent: Sent[] = [];
let people: TestUser[];
let a: TestUser;

async function direct(from: TestUser, to: TestUser[]): Promise<void> {
  const id = await m.send(from, { type: "direct", to: JSON.stringify(to.map((u) => u.user_id)), content: `from ${from.user_id}` });
  const participants = [...new Set([from, ...to].map((u) => u.user_id))];
  sent.push({ id, participants, to: participants });
}

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  a = org.member2;
  const n = String(a.user_id);
  // Users whose ids hold a's digits at their start, at their end and inside.
  const starts = await userWithId(m, org, (d) => d !== n && d.startsWith(n));
  const ends = await userWithId(m, org, (d) => d.endsWith(n) && !d.startsWith(n));
  const inside = await userWithId(m, org, (d) => d.includes(n) && !d.startsWith(n) && !d.endsWith(n));
  people = [org.owner, org.member, a, org.guest, org.bot, starts, ends, inside];

  await direct(a, [starts]);
  await direct(ends, [inside]);
  await direct(org.member, [starts, ends, org.bot]);
  await direct(inside, [a, org.member]);
  await direct(a, [a]);
  await direct(starts, [starts]);
  await direct(org.guest, [ends]);
  await direct(a, [starts]);
  await direct(org.owner, [org.member, org.guest, inside, starts]);
  const channelMembers = [org.owner, org.member, a, starts, inside];
  await m.createStream(org.owner, "general", channelMembers);
  const channelMessage = await m.send(a, { type: "stream", to: "general", topic: "t", content: "in the channel" });
  sent.push({ id: channelMessage, participants: null, to: channelMembers.map((u) => u.user_id) });
  // The other organization's conversations, sent between this one's and kept out of every answer here.
  await m.send(other.member, { type: "direct", to: JSON.stringify([other.guest.user_id]), content: "elsewhere" });
  await m.send(other.owner, { type: "direct", to: JSON.stringify([other.member.user_id, other.guest.user_id]), content: "elsewhere too" });
  await m.send(other.member, { type: "direct", to: JSON.stringify([other.member.user_id]), content: "own" });
  await direct(ends, [a, starts]);
});
afterAll(async () => m?.close());

type Op = "dm-including" | "group-pm-with";

async function narrowed(viewer: TestUser, operator: Op, operand: number, negated = false): Promise<number[]> {
  const res = await m.ok(
    await m.call("GET", "/messages", viewer, { anchor: "newest", num_before: 1000, num_after: 0, narrow: JSON.stringify([{ operator, operand, negated }]) }),
  );
  return res.messages.map((x: { id: number }) => x.id);
}

/** What the narrow must answer, from the messages sent. */
function expected(viewer: TestUser, operator: Op, operand: number, negated = false): number[] {
  const matches = (s: Sent) => s.participants !== null && s.participants.includes(operand) && (operator === "dm-including" || s.participants.length >= 3);
  return sent.filter((s) => s.to.includes(viewer.user_id) && matches(s) !== negated).map((s) => s.id).sort((x, y) => x - y);
}

describe("direct-message narrows by participant", () => {
  it("the ids chosen hold each other's digits", () => {
    const n = String(a.user_id);
    const others = people.filter((u) => u !== a).map((u) => String(u.user_id));
    expect(others.some((d) => d.startsWith(n))).toBe(true);
    expect(others.some((d) => d.endsWith(n) && !d.startsWith(n))).toBe(true);
    expect(others.some((d) => d.includes(n) && !d.startsWith(n) && !d.endsWith(n))).toBe(true);
  });

  it("dm-including: each viewer's messages whose conversation holds the user, self and group conversations included", async () => {
    for (const viewer of people) {
      for (const u of people) expect(await narrowed(viewer, "dm-including", u.user_id), `viewer ${viewer.user_id}, user ${u.user_id}`).toEqual(expected(viewer, "dm-including", u.user_id));
    }
    // Spot checks of the cases the model is for: a's own self conversation and its pair with the user whose id starts with a's.
    const self = sent.filter((s) => s.participants?.length === 1 && s.participants[0] === a.user_id).map((s) => s.id);
    expect(self).toHaveLength(1);
    expect(await narrowed(a, "dm-including", a.user_id)).toEqual(expect.arrayContaining(self));
    const starts = people[5];
    expect(await narrowed(starts, "dm-including", a.user_id)).toEqual(expected(starts, "dm-including", a.user_id));
    expect(await narrowed(starts, "dm-including", a.user_id)).not.toContain(sent.find((s) => s.participants?.length === 1 && s.participants[0] === starts.user_id)!.id);
  });

  it("group-pm-with: the same among conversations of three or more", async () => {
    for (const viewer of people) {
      for (const u of people) expect(await narrowed(viewer, "group-pm-with", u.user_id), `viewer ${viewer.user_id}, user ${u.user_id}`).toEqual(expected(viewer, "group-pm-with", u.user_id));
    }
  });

  it("negated: everything else the viewer received, channel messages included", async () => {
    for (const viewer of [a, org.member, people[5], people[6], people[7]]) {
      for (const u of people) {
        for (const op of ["dm-including", "group-pm-with"] as const) {
          expect(await narrowed(viewer, op, u.user_id, true), `${op} viewer ${viewer.user_id}, user ${u.user_id}`).toEqual(expected(viewer, op, u.user_id, true));
        }
      }
    }
  });

  it("another organization's users are unknown here, and its conversations are its own", async () => {
    for (const op of ["dm-including", "group-pm-with"] as const) {
      expectError(
        await m.call("GET", "/messages", a, { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: op, operand: other.member.user_id }]) }),
        400,
        "BAD_NARROW",
      );
    }
    const theirs = await narrowed(other.member, "dm-including", other.guest.user_id);
    expect(theirs).toHaveLength(2);
    expect(await narrowed(other.member, "dm-including", other.member.user_id)).toHaveLength(3);
    expect(await narrowed(other.guest, "group-pm-with", other.member.user_id)).toHaveLength(1);
    for (const id of theirs) expect(sent.map((s) => s.id)).not.toContain(id);
  });
});
