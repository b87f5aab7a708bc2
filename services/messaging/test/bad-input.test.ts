import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/** Wrong types, malformed JSON and out-of-range values for the parameters other files do not cover. */

let m: Messaging;
let org: Org;
let general: number;
let msg: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
  msg = await m.send(org.owner, { type: "stream", to: "general", topic: "t", content: "x" });
});
afterAll(async () => m?.close());

describe("bad input never reaches a 500", () => {
  it("boolean parameters", async () => {
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ["GET", "/users/me/subscriptions", { include_subscribers: "maybe" }, "include_subscribers"],
      ["GET", "/streams", { include_public: "1" }, "include_public"],
      ["GET", "/streams", { include_all_active: "True" }, "include_all_active"],
      ["GET", `/messages/${msg}`, { apply_markdown: "no" }, "apply_markdown"],
      ["GET", "/messages", { anchor: "newest", include_anchor: "nope" }, "include_anchor"],
      ["GET", "/messages", { anchor: "newest", client_gravatar: "0" }, "client_gravatar"],
      ["POST", "/users/me/subscriptions", { subscriptions: '[{"name":"x"}]', invite_only: "yes" }, "invite_only"],
      ["POST", "/users/me/subscriptions", { subscriptions: '[{"name":"x"}]', authorization_errors_fatal: "nah" }, "authorization_errors_fatal"],
    ];
    for (const [method, path, params, name] of cases) {
      const res = await m.call(method as "GET", path, org.member, params);
      expectError(res, 400, "BAD_REQUEST", new RegExp(`^${name} is not`));
    }
  });

  it("integer parameters and path ids", async () => {
    expectError(await m.call("POST", "/user_topics", org.member, { stream_id: "general", topic: "t", visibility_policy: 1 }), 400, "BAD_REQUEST", /^stream_id is not/);
    expectError(await m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "t", visibility_policy: "1.5" }), 400, "BAD_REQUEST");
    expectError(await m.call("POST", "/users/me/subscriptions", org.member, { subscriptions: '[{"name":"x"}]', stream_post_policy: "two" }), 400, "BAD_REQUEST");
    expectError(await m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: '[{"name":"x"}]', message_retention_days: "forever" }), 400, "BAD_REQUEST");
    for (const path of ["/messages/1.5", "/drafts/x", "/streams/abc"]) {
      const res = await m.call(path.startsWith("/drafts") ? "DELETE" : "GET", path, org.member);
      expect(res.status, path).toBe(404);
      expect(res.body.result).toBe("error");
    }
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", message_ids: "[1," }), 400, "BAD_REQUEST", "message_ids is not valid JSON");
  });

  it("list-of-objects parameters with the wrong inner shape", async () => {
    const props = (data: string) => m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: data });
    expectError(await props('[{"stream_id":"x","property":"pin_to_top","value":true}]'), 400, "BAD_REQUEST", /subscription_data\[0\]\["stream_id"\]/);
    expectError(await props('{"stream_id":1}'), 400, "BAD_REQUEST");
    expectError(await m.call("POST", "/messages/flags", org.member, { messages: '"1"', op: "add", flag: "read" }), 400, "BAD_REQUEST");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", narrow: '[{"operand":"x"}]' }), 400, "BAD_REQUEST");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", narrow: '[["stream"]]' }), 400, "BAD_REQUEST");
    expectError(await m.call("DELETE", "/users/me/subscriptions", org.member, { subscriptions: "[1]" }), 400, "BAD_REQUEST");
  });

  it("a NUL inside a direct message's JSON recipient list is an unknown address", async () => {
    // `to` is a plain string parameter, so only its JSON decoding brings the NUL to light.
    for (const to of ['["\\u0000"]', '"\\u0000"', `["${org.member.email}", "a\\u0000b@example.com"]`]) {
      const res = await m.call("POST", "/messages", org.owner, { type: "direct", to, content: "x" });
      expectError(res, 400, "BAD_REQUEST", /^Invalid email '/);
    }
  });

  it("unknown parameters are ignored and reported", async () => {
    const res = await m.ok(await m.call("GET", "/users/me/subscriptions", org.member, { colour: "blue", zzz: "1" }));
    expect(res.ignored_parameters_unsupported).toEqual(["colour", "zzz"]);
  });
});
