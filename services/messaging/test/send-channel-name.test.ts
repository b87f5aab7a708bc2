import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let general: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
});
afterAll(async () => m?.close());

describe("POST /messages: the channel name in `to`", () => {
  it("is trimmed before the lookup, as Zulip does", async () => {
    for (const to of ["  general ", '" general"', '["general  "]']) {
      const id = await m.send(org.member, { type: "stream", to, topic: "spaces", content: `to ${to}` });
      const res = await m.ok(await m.call("GET", `/messages/${id}`, org.member));
      expect(res.message).toMatchObject({ stream_id: general, display_recipient: "general" });
    }
  });

  it("must be a channel name: not empty, not too long", async () => {
    const before = await m.count("messages");
    expectError(await m.call("POST", "/messages", org.member, { type: "stream", to: "  ", topic: "t", content: "x" }), 400, "BAD_REQUEST", "Channel name can't be empty.");
    expectError(await m.call("POST", "/messages", org.member, { type: "stream", to: '""', topic: "t", content: "x" }), 400, "BAD_REQUEST", "Channel name can't be empty.");
    expectError(
      await m.call("POST", "/messages", org.member, { type: "stream", to: "n".repeat(61), topic: "t", content: "x" }),
      400,
      "BAD_REQUEST",
      "Channel name too long (limit: 60 characters).",
    );
    // A well-formed name that names no channel is still STREAM_DOES_NOT_EXIST, trimmed.
    const missing = await m.call("POST", "/messages", org.member, { type: "stream", to: " nowhere ", topic: "t", content: "x" });
    expectError(missing, 400, "STREAM_DOES_NOT_EXIST");
    expect(missing.body.stream).toBe("nowhere");
    expect(await m.count("messages")).toBe(before);
  });
});
