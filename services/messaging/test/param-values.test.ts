import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Parameter values of the channel and subscription routes against the allowed values Zulip's API
 * description names (enums, ranges, lengths, color formats): each allowed value is taken and
 * reads back; a value outside them is a 400 with Zulip's code and `msg`, and changes nothing.
 */

let m: Messaging;
let org: Org;
let general: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member]);
});
afterAll(async () => m?.close());

type Res = { status: number; body: any };
/** A refused value: the code (BAD_REQUEST unless said) and Zulip's msg. */
type Bad = [value: unknown, msg: string, code?: string];

const stream = async (id: number) => (await m.ok(await m.call("GET", `/streams/${id}`, org.owner))).stream;
const json = (v: unknown) => JSON.stringify(v);

/** The retention values: what is sent (JSON text) and what the channel then holds. */
const RETENTION_GOOD: Array<[sent: string, held: number | null]> = [
  [json("unlimited"), -1],
  [json(1), 1],
  [json(365), 365],
  [json("realm_default"), null],
];
const RETENTION_BAD: Bad[] = [
  [json(0), "Bad value for 'message_retention_days': 0", "REQUEST_VARIABLE_INVALID"],
  [json(-1), "Bad value for 'message_retention_days': -1", "REQUEST_VARIABLE_INVALID"],
  [json("forever"), "Bad value for 'message_retention_days': forever", "REQUEST_VARIABLE_INVALID"],
  [json(""), "Bad value for 'message_retention_days': ", "REQUEST_VARIABLE_INVALID"],
];
const POST_POLICY_BAD: Bad[] = [0, 5, -1].map((v) => [v, "Invalid stream_post_policy"]);

/** Checks refused values: the error, then no event and `unchanged` still true. */
async function refused(send: (value: unknown) => Promise<Res>, bad: Bad[], unchanged: () => Promise<void>) {
  await m.outbox();
  for (const [value, msg, code = "BAD_REQUEST"] of bad) {
    expectError(await send(value), 400, code, msg);
    await unchanged();
  }
  expect(await m.clientEvents()).toEqual([]);
}

describe("POST /users/me/subscriptions (a new channel's settings)", () => {
  let n = 0;
  const create = (params: Record<string, unknown>) => {
    const name = `new-${++n}`;
    return { name, res: m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: json([{ name }]), ...params }) };
  };
  const idOf = async (name: string) => (await m.ok(await m.call("GET", "/get_stream_id", org.owner, { stream: name }))).stream_id as number;
  const streamCount = () => m.count("streams");

  it("stream_post_policy 1 to 4", async () => {
    for (const policy of [1, 2, 3, 4]) {
      const { name, res } = create({ stream_post_policy: policy });
      await m.ok(await res);
      expect((await stream(await idOf(name))).stream_post_policy).toBe(policy);
    }
    const count = await streamCount();
    await refused(
      (v) => create({ stream_post_policy: v }).res,
      POST_POLICY_BAD,
      async () => expect(await streamCount()).toBe(count),
    );
  });

  it("message_retention_days: 'realm_default', 'unlimited' or a positive number of days", async () => {
    for (const [sent, held] of RETENTION_GOOD) {
      const { name, res } = create({ message_retention_days: sent });
      await m.ok(await res);
      expect((await stream(await idOf(name))).message_retention_days).toBe(held);
    }
    const count = await streamCount();
    await refused(
      (v) => create({ message_retention_days: v }).res,
      RETENTION_BAD,
      async () => expect(await streamCount()).toBe(count),
    );
    // The value is read first: a bad one is a bad value even from a non-owner, or for channels
    // that already exist; a good one other than realm_default needs an owner.
    const subs = await m.count("subscriptions");
    await refused(
      (who) => m.call("POST", "/users/me/subscriptions", who as Org["admin"], { subscriptions: json([{ name: "general" }, { name: "admins-new" }]), message_retention_days: json("forever") }),
      [
        [org.admin, "Bad value for 'message_retention_days': forever", "REQUEST_VARIABLE_INVALID"],
        [org.member2, "Bad value for 'message_retention_days': forever", "REQUEST_VARIABLE_INVALID"],
      ],
      async () => expect([await streamCount(), await m.count("subscriptions")]).toEqual([count, subs]),
    );
    expectError(
      await m.call("POST", "/users/me/subscriptions", org.admin, { subscriptions: json([{ name: "admins-new" }]), message_retention_days: json("unlimited") }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Must be an organization owner",
    );
  });

  it("a channel name of at most 60 characters", async () => {
    const name = "😀".repeat(60);
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: json([{ name }]) }));
    expect((await stream(await idOf(name))).name).toBe(name);
    const count = await streamCount();
    await refused(
      (v) => m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: json([{ name: v }]) }),
      [
        ["x".repeat(61), "Channel name too long (limit: 60 characters)."],
        ["😀".repeat(61), "Channel name too long (limit: 60 characters)."],
      ],
      async () => expect(await streamCount()).toBe(count),
    );
  });
});

describe("PATCH /streams/{stream_id}", () => {
  let id: number;
  beforeAll(async () => {
    id = await m.createStream(org.owner, "patched", [org.owner]);
  });
  const patch = (params: Record<string, unknown>) => m.call("PATCH", `/streams/${id}`, org.owner, params);

  it("stream_post_policy 1 to 4", async () => {
    for (const policy of [2, 3, 4, 1]) {
      await m.ok(await patch({ stream_post_policy: policy }));
      expect((await stream(id)).stream_post_policy).toBe(policy);
    }
    await refused(
      (v) => patch({ stream_post_policy: v }),
      POST_POLICY_BAD,
      async () => expect((await stream(id)).stream_post_policy).toBe(1),
    );
  });

  it("message_retention_days: 'realm_default', 'unlimited' or a positive number of days", async () => {
    for (const [sent, held] of RETENTION_GOOD) {
      await m.ok(await patch({ message_retention_days: sent }));
      expect((await stream(id)).message_retention_days).toBe(held);
    }
    await refused(
      (v) => patch({ message_retention_days: v }),
      RETENTION_BAD,
      async () => expect((await stream(id)).message_retention_days).toBe(null),
    );
  });

  it("a description of at most 1024 characters and a name of at most 60", async () => {
    await m.ok(await patch({ description: "😀".repeat(1024) }));
    expect((await stream(id)).description).toBe("😀".repeat(1024));
    await m.ok(await patch({ new_name: "n".repeat(60) }));
    expect((await stream(id)).name).toBe("n".repeat(60));
    await refused(
      (v) => patch(v as Record<string, unknown>),
      [
        [{ description: "d".repeat(1025) }, "description is too long (limit: 1024 characters)"],
        [{ description: "😀".repeat(1025) }, "description is too long (limit: 1024 characters)"],
        [{ new_name: "m".repeat(61) }, "Channel name too long (limit: 60 characters)."],
      ],
      async () => expect(await stream(id)).toMatchObject({ name: "n".repeat(60), description: "😀".repeat(1024) }),
    );
  });
});

describe("POST /users/me/subscriptions/properties", () => {
  const sub = async () => ((await m.ok(await m.call("GET", "/users/me/subscriptions", org.member))).subscriptions as any[]).find((s) => s.stream_id === general);
  const set = (property: string, value: unknown) => m.call("POST", "/users/me/subscriptions/properties", org.member, { subscription_data: json([{ stream_id: general, property, value }]) });

  it("color: '#' and 3 to 6 hex digits (Zulip's check_color)", async () => {
    for (const color of ["#abc", "#A1b2C3", "#abcd", "#00000", "#c2c2c2"]) {
      await m.ok(await set("color", color));
      expect((await sub()).color).toBe(color);
    }
    await refused(
      (v) => set("color", v),
      [
        ...["c2c2c2", "#ab", "#abcdef0", "#ggg", "red", "", "#abc "].map((v): Bad => [v, "color is not a valid hex color code"]),
        [true, "color is not a string"],
      ],
      async () => expect((await sub()).color).toBe("#c2c2c2"),
    );
  });

  it("every other property is a boolean; an unknown property is refused", async () => {
    const props = ["is_muted", "in_home_view", "pin_to_top", "desktop_notifications", "audible_notifications", "push_notifications", "email_notifications", "wildcard_mentions_notify"];
    for (const property of props) {
      for (const value of [true, false]) {
        await m.ok(await set(property, value));
        expect((await sub())[property], `${property} = ${value}`).toBe(value);
      }
      // Leave is_muted and in_home_view consistent for the next property.
      if (property === "in_home_view") await m.ok(await set(property, true));
      const kept = (await sub())[property];
      await refused(
        (v) => set(property, v),
        ["true", "yes", 1].map((v): Bad => [v, `${property} is not a boolean`]),
        async () => expect((await sub())[property]).toBe(kept),
      );
    }
    await refused(
      (v) => set(v as string, true),
      [
        ["volume", "Unknown subscription property: volume"],
        ["color ", "Unknown subscription property: color "],
      ],
      async () => undefined,
    );
  });
});

describe("PATCH /users/me/subscriptions", () => {
  it("add: a new subscription's color is a hex color", async () => {
    await m.ok(await m.call("PATCH", "/users/me/subscriptions", org.member2, { add: json([{ name: "general", color: "#123" }]) }));
    const subs = (await m.ok(await m.call("GET", "/users/me/subscriptions", org.member2))).subscriptions as any[];
    expect(subs.find((s) => s.stream_id === general).color).toBe("#123");
    const count = await m.count("subscriptions");
    await refused(
      (v) => m.call("PATCH", "/users/me/subscriptions", org.member2, { add: json([{ name: "colored", color: v }]) }),
      [
        ["123456", "color is not a valid hex color code"],
        ["#12", "color is not a valid hex color code"],
      ],
      async () => expect(await m.count("subscriptions")).toBe(count),
    );
  });
});

describe("DELETE /users/me/subscriptions", () => {
  it("subscriptions are names of existing channels; one unknown name removes nothing", async () => {
    const id = await m.createStream(org.owner, "leave-me", [org.owner, org.member]);
    const subscribed = async () => (await m.ok(await m.call("GET", `/users/${org.member.user_id}/subscriptions/${id}`, org.member))).is_subscribed;
    await refused(
      (v) => m.call("DELETE", "/users/me/subscriptions", org.member, { subscriptions: json(v) }),
      [
        [["leave-me", "nowhere"], "Channel 'nowhere' does not exist", "STREAM_DOES_NOT_EXIST"],
        [[""], "Channel '' does not exist", "STREAM_DOES_NOT_EXIST"],
      ],
      async () => expect(await subscribed()).toBe(true),
    );
    expect(await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member, { subscriptions: json([" leave-me "]) }))).toMatchObject({ removed: ["leave-me"] });
    expect(await subscribed()).toBe(false);
  });
});

describe("topic visibility", () => {
  const policies = async () =>
    (await m.ok(await m.call("POST", "/internal/register_state/messaging", org.member, { fetch_event_types: json(["user_topic"]) }))).user_topics.filter(
      (t: any) => t.stream_id === general && t.topic_name === "values",
    );

  it("POST /user_topics: visibility_policy 0 none, 1 muted, 2 unmuted, 3 followed", async () => {
    for (const policy of [1, 2, 3]) {
      await m.ok(await m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "values", visibility_policy: policy }));
      expect((await policies()).map((t: any) => t.visibility_policy)).toEqual([policy]);
    }
    await refused(
      (v) => m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "values", visibility_policy: v }),
      [4, -1, 99].map((v): Bad => [v, "Invalid visibility_policy"]),
      async () => expect((await policies()).map((t: any) => t.visibility_policy)).toEqual([3]),
    );
    await m.ok(await m.call("POST", "/user_topics", org.member, { stream_id: general, topic: "values", visibility_policy: 0 }));
    expect(await policies()).toEqual([]);
  });

  it("PATCH /users/me/subscriptions/muted_topics: op 'add' or 'remove'", async () => {
    const mute = (op: unknown) => m.call("PATCH", "/users/me/subscriptions/muted_topics", org.member, { stream_id: general, topic: "values", op });
    await m.ok(await mute("add"));
    expect((await policies()).map((t: any) => t.visibility_policy)).toEqual([1]);
    await refused(
      mute,
      ["toggle", "Add", ""].map((v): Bad => [v, "Invalid op"]),
      async () => expect((await policies()).map((t: any) => t.visibility_policy)).toEqual([1]),
    );
    await m.ok(await mute("remove"));
    expect(await policies()).toEqual([]);
  });
});
