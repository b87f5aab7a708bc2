import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let g: number[];
let secretMsg: number;
let dm: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
  await m.createStream(org.owner, "secret", [org.owner], { invite_only: true });
  await m.createStream(other.owner, "theirs", [other.owner]);
  g = [];
  for (const content of ["one", "two", "three", "four"]) g.push(await m.send(org.owner, { type: "stream", to: "general", topic: "t", content }));
  secretMsg = await m.send(org.owner, { type: "stream", to: "secret", topic: "t", content: "hidden" });
  dm = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id]), content: "hi" });
  await m.send(other.owner, { type: "stream", to: "theirs", topic: "t", content: "x" });
});
afterAll(async () => m?.close());
beforeEach(async () => {
  await m.outbox();
});

const byNarrow = (who: Org["member"], params: Record<string, unknown>) =>
  m.call("POST", "/messages/flags/narrow", who, { anchor: "oldest", num_before: "0", num_after: "1000", narrow: "[]", ...params });
const channel = (name: string) => JSON.stringify([{ operator: "channel", operand: name }]);

describe("POST /messages/flags/narrow", () => {
  it("changes the flag over the narrow's range and reports counts, ids and ends, with one event", async () => {
    const res = await m.ok(await byNarrow(org.member, { narrow: channel("general"), anchor: String(g[1]), num_before: "1", num_after: "1", op: "add", flag: "read" }));
    expect(res).toEqual({
      result: "success",
      msg: "",
      processed_count: 3,
      updated_count: 3,
      first_processed_id: g[0],
      last_processed_id: g[2],
      found_oldest: false,
      found_newest: false,
    });
    const [ev] = await m.clientEvents();
    expect(ev.event).toEqual({ type: "update_message_flags", op: "add", operation: "add", flag: "read", messages: [g[0], g[1], g[2]], all: false });
    expect(ev.users).toEqual([org.member.user_id]);

    const again = await m.ok(await byNarrow(org.member, { narrow: channel("general"), op: "add", flag: "read" }));
    expect(again).toMatchObject({ processed_count: 4, updated_count: 1, first_processed_id: g[0], last_processed_id: g[3], found_oldest: true, found_newest: true });
    expect((await m.clientEvents()).map((e) => e.event.messages)).toEqual([[g[3]]]);
  });

  it("with a search narrow, only the messages that match", async () => {
    const res = await m.ok(await byNarrow(org.owner, { narrow: JSON.stringify([{ operator: "search", operand: "three" }]), op: "add", flag: "starred" }));
    expect(res).toMatchObject({ processed_count: 1, updated_count: 1, first_processed_id: g[2], last_processed_id: g[2] });
    expect((await m.clientEvents()).map((e) => e.event.messages)).toEqual([[g[2]]]);
  });

  it("marks everything the user can read, and nothing of a channel they cannot or of another organization", async () => {
    const res = await m.ok(await byNarrow(org.member, { anchor: "newest", num_before: "1000", num_after: "0", op: "add", flag: "starred" }));
    expect(res.processed_count).toBe(5);
    expect(res.last_processed_id).toBe(dm);
    const [ev] = await m.clientEvents();
    expect(ev.event.messages).toEqual([...g, dm]);
    expect(ev.event.messages).not.toContain(secretMsg);
    const none = await m.ok(await byNarrow(other.member, { op: "add", flag: "starred" }));
    expect(none).toMatchObject({ processed_count: 0, updated_count: 0, first_processed_id: null, last_processed_id: null });
    expect(await m.clientEvents()).toEqual([]);
  });

  it("refuses bad input with Zulip's errors and changes nothing", async () => {
    const cases: Array<[Record<string, unknown>, number, string, string | RegExp]> = [
      [{ flag: "bogus", op: "add" }, 400, "BAD_REQUEST", "Invalid flag: 'bogus'"],
      [{ flag: "mentioned", op: "add" }, 400, "BAD_REQUEST", "Flag not editable: 'mentioned'"],
      [{ flag: "read", op: "toggle" }, 400, "BAD_REQUEST", "Invalid message flag operation: 'toggle'"],
      [{ flag: "read", op: "add", anchor: "sometime" }, 400, "BAD_REQUEST", "Invalid anchor"],
      [{ flag: "read", op: "add", num_before: "-1" }, 400, "BAD_REQUEST", /num_before/],
      [{ flag: "read", op: "add", narrow: "[{" }, 400, "BAD_REQUEST", "narrow is not valid JSON"],
      [{ flag: "read", op: "add", anchor: String(g[1]), num_before: "1", num_after: "1", include_anchor: "false" }, 400, "BAD_REQUEST", "The anchor can only be excluded at an end of the range"],
      [{ flag: "read", op: "add", narrow: JSON.stringify([{ operator: "bogus", operand: "x" }]) }, 400, "BAD_NARROW", /Invalid narrow operator/],
    ];
    for (const [params, status, code, msg] of cases) expectError(await byNarrow(org.member2, params), status, code, msg);
    expectError(await m.call("POST", "/messages/flags/narrow", org.member2, { op: "add", flag: "read", num_before: "0", num_after: "0", narrow: "[]" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'anchor' argument");
    expect(await m.clientEvents()).toEqual([]);
  });

  it("cuts counts past 5000 down instead of refusing them", async () => {
    const res = await m.ok(await byNarrow(org.member, { narrow: channel("general"), anchor: "newest", num_before: "100000", num_after: "100000", op: "add", flag: "collapsed" }));
    expect(res).toMatchObject({ processed_count: 4, updated_count: 4, first_processed_id: g[0], last_processed_id: g[3], found_oldest: true, found_newest: true });
  });
});
