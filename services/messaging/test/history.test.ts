import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, startMessaging, type Messaging, type Org } from "./helpers";

let m: Messaging;
let org: Org;
let other: Org;
let general: number;
let secret: number;
const ids: Record<string, number> = {};

const fetch = async (who: Org["member"], params: Record<string, unknown>) => m.ok(await m.call("GET", "/messages", who, params));
const idsOf = (res: { messages: Array<{ id: number }> }) => res.messages.map((x) => x.id);

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.member2]);
  secret = await m.createStream(org.owner, "secret", [org.owner, org.member], { invite_only: true });
  await m.createStream(other.owner, "general", [other.owner]);
  ids.g1 = await m.send(org.owner, { type: "stream", to: "general", topic: "lunch", content: "pizza today?" });
  ids.g2 = await m.send(org.member, { type: "stream", to: "general", topic: "lunch", content: "sushi please, see https://example.com" });
  ids.g3 = await m.send(org.member2, { type: "stream", to: "general", topic: "Deploys", content: "deploying the **rocket** service" });
  ids.dm1 = await m.send(org.member, { type: "direct", to: JSON.stringify([org.member2.user_id]), content: "psst" });
  ids.s1 = await m.send(org.owner, { type: "stream", to: "secret", topic: "plans", content: "the rocket launch" });
  ids.g4 = await m.send(org.owner, { type: "stream", to: "general", topic: "lunch", content: "@**Mel Member** pizza it is" });
  ids.gdm = await m.send(org.member2, { type: "direct", to: JSON.stringify([org.member.user_id, org.owner.user_id]), content: "group chat" });
  await m.send(other.owner, { type: "stream", to: "general", topic: "lunch", content: "other org pizza" });
});
afterAll(async () => m?.close());

describe("GET /messages anchors", () => {
  it("newest with num_before returns the latest, found_newest", async () => {
    const res = await fetch(org.member, { anchor: "newest", num_before: 3, num_after: 0 });
    expect(idsOf(res)).toEqual([ids.s1, ids.g4, ids.gdm]);
    expect(res).toMatchObject({ found_newest: true, found_oldest: false, found_anchor: false, history_limited: false, anchor: 10000000000000000 });
  });

  it("oldest with num_after, found_oldest", async () => {
    const res = await fetch(org.member, { anchor: "oldest", num_after: 2 });
    expect(idsOf(res)).toEqual([ids.g1, ids.g2]);
    expect(res).toMatchObject({ found_oldest: true, found_newest: false, anchor: 0 });
  });

  it("an id anchor with both sides, include_anchor", async () => {
    const res = await fetch(org.member, { anchor: String(ids.g3), num_before: 1, num_after: 1 });
    expect(idsOf(res)).toEqual([ids.g2, ids.g3, ids.dm1]);
    expect(res).toMatchObject({ found_anchor: true, anchor: ids.g3 });
    const excl = await fetch(org.member, { anchor: String(ids.g3), num_before: 0, num_after: 2, include_anchor: false });
    expect(idsOf(excl)).toEqual([ids.dm1, ids.s1]);
    expect(excl.found_anchor).toBe(false);
  });

  it("first_unread anchors at the first unread message", async () => {
    // member sent g2 and dm1 from an API client: unread for them too; the first unread is g1.
    const res = await fetch(org.member, { anchor: "first_unread", num_before: 0, num_after: 1 });
    expect(res.anchor).toBe(ids.g1);
    await m.ok(await m.call("POST", "/messages/flags", org.member2, { messages: JSON.stringify([ids.g1, ids.g2, ids.g3, ids.dm1, ids.g4, ids.gdm]), op: "add", flag: "read" }));
    const none = await fetch(org.member2, { anchor: "first_unread", num_before: 2, num_after: 2 });
    expect(none.anchor).toBe(10000000000000000);
    expect(idsOf(none)).toEqual([ids.g4, ids.gdm]);
  });

  it("flags are the viewer's own", async () => {
    const res = await fetch(org.member, { anchor: String(ids.g4), num_before: 0, num_after: 0 });
    expect(res.messages[0].flags).toEqual(["mentioned"]);
    const owner = await fetch(org.owner, { anchor: String(ids.g4), num_before: 0, num_after: 0 });
    expect(owner.messages[0].flags).toEqual([]);
  });

  it("refuses bad anchors and sizes", async () => {
    expectError(await m.call("GET", "/messages", org.member, { num_before: 1 }), 400, "BAD_REQUEST", "Missing 'anchor' argument.");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "middle", num_before: 1 }), 400, "BAD_REQUEST", "Invalid anchor");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 4000, num_after: 1001 }), 400, "BAD_REQUEST", "Too many messages requested (maximum 5000).");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: -1 }), 400, "BAD_REQUEST");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: "ten" }), 400, "BAD_REQUEST", /num_before is not/);
    expectError(
      await m.call("GET", "/messages", org.member, { anchor: String(ids.g3), num_before: 1, num_after: 1, include_anchor: false }),
      400,
      "BAD_REQUEST",
      "The anchor can only be excluded at an end of the range",
    );
    const negative = await fetch(org.member, { anchor: "-5", num_after: 1 });
    expect(negative.anchor).toBe(0);
  });

  it("the anchor and counts are checked before the narrow's names are looked up, as Zulip checks them", async () => {
    const narrow = JSON.stringify([{ operator: "channel", operand: "no-such-channel" }]);
    expectError(await m.call("GET", "/messages", org.member, { narrow, num_before: 1 }), 400, "BAD_REQUEST", "Missing 'anchor' argument.");
    expectError(await m.call("GET", "/messages", org.member, { narrow, anchor: "middle" }), 400, "BAD_REQUEST", "Invalid anchor");
    expectError(await m.call("GET", "/messages", org.member, { narrow, anchor: "newest", num_before: 5000, num_after: 1 }), 400, "BAD_REQUEST", "Too many messages requested (maximum 5000).");
    expectError(
      await m.call("GET", "/messages", org.member, { narrow, anchor: "newest", num_before: 1, num_after: 1, include_anchor: false }),
      400,
      "BAD_REQUEST",
      "The anchor can only be excluded at an end of the range",
    );
    expectError(await m.call("GET", "/messages", org.member, { narrow, message_ids: "[1]", anchor: "newest" }), 400, "BAD_REQUEST", /^Unsupported parameter combination/);
    expectError(await m.call("GET", "/messages", org.member, { narrow, anchor: "newest" }), 400, "BAD_NARROW", "Invalid narrow operator: unknown channel no-such-channel");
  });

  it("an id anchor is any integer Python's int() reads: a sign, spaces around, _ between digits; held below the newest value", async () => {
    for (const anchor of [` ${ids.g3} `, `+${ids.g3}`, `\t${ids.g3}\n`]) {
      const res = await fetch(org.member, { anchor, num_before: 0, num_after: 0 });
      expect(idsOf(res), JSON.stringify(anchor)).toEqual([ids.g3]);
      expect(res).toMatchObject({ anchor: ids.g3, found_anchor: true });
    }
    const far = await fetch(org.member, { anchor: "1_000_000_000", num_before: 1, num_after: 1 });
    expect(far).toMatchObject({ anchor: 1_000_000_000, found_anchor: false, found_newest: true, found_oldest: false });
    expect(idsOf(far)).toEqual([ids.gdm]);
    const huge = await fetch(org.member, { anchor: "99999999999999999999", num_before: 1, num_after: 5 });
    expect(huge).toMatchObject({ anchor: 10000000000000000, found_newest: true });
    expect(idsOf(huge)).toEqual([ids.gdm]);
    expect((await fetch(org.member, { anchor: "-0_5", num_after: 1 })).anchor).toBe(0);
    for (const anchor of ["", " ", "1__0", "_1", "1_", "0x10", "1.0", "1e3", "+-1", "Newest", "- 1"]) {
      expectError(await m.call("GET", "/messages", org.member, { anchor, num_before: 1 }), 400, "BAD_REQUEST", "Invalid anchor");
    }
  });
});

describe("GET /messages narrows", () => {
  it("channel by name and id, topic case-insensitively, legacy pairs", async () => {
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [{ operator: "channel", operand: "general" }] }))).toEqual([ids.g1, ids.g2, ids.g3, ids.g4]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [{ operator: "stream", operand: general }, ["topic", "LUNCH"]] }))).toEqual([ids.g1, ids.g2, ids.g4]);
    expect(
      idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [{ operator: "stream", operand: "general" }, { operator: "topic", operand: "lunch", negated: true }] })),
    ).toEqual([ids.g3]);
  });

  it("sender, dm (ids, emails, pm-with), dm-including, is:dm", async () => {
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["sender", org.member2.email]] }))).toEqual([ids.g3, ids.gdm]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [{ operator: "sender", operand: org.owner.user_id }] }))).toEqual([ids.g1, ids.s1, ids.g4]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["dm", org.member2.email]] }))).toEqual([ids.dm1]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [{ operator: "dm", operand: [org.member2.user_id] }] }))).toEqual([ids.dm1]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["pm-with", `${org.member2.email},${org.owner.email}`]] }))).toEqual([ids.gdm]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [{ operator: "dm-including", operand: org.member2.user_id }] }))).toEqual([ids.dm1, ids.gdm]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["is", "dm"]] }))).toEqual([ids.dm1, ids.gdm]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["is", "private"]] }))).toEqual([ids.dm1, ids.gdm]);
    // A conversation that never happened matches nothing.
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["dm", org.admin.email]] }))).toEqual([]);
  });

  it("use_first_unread_anchor=true anchors at the first unread, even with an anchor given", async () => {
    // member has g1 unread (see the test above); the flag wins over a given anchor, as in Zulip.
    for (const params of [{}, { anchor: String(ids.g4) }, { anchor: "newest" }]) {
      const res = await fetch(org.member, { ...params, use_first_unread_anchor: true, num_before: 0, num_after: 0 });
      expect(res.anchor).toBe(ids.g1);
      expect(idsOf(res)).toEqual([ids.g1]);
    }
  });

  it("is:starred, is:unread, is:mentioned, id, has:link", async () => {
    await m.ok(await m.call("POST", "/messages/flags", org.member, { messages: JSON.stringify([ids.g3]), op: "add", flag: "starred" }));
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["is", "starred"]] }))).toEqual([ids.g3]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["is", "mentioned"]] }))).toEqual([ids.g4]);
    expect(idsOf(await fetch(org.member2, { anchor: "oldest", num_after: 10, narrow: [["is", "unread"]] }))).toEqual([]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["id", String(ids.g2)]] }))).toEqual([ids.g2]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: [["has", "link"]] }))).toEqual([ids.g2]);
  });

  it("has:reaction: messages with a reaction (negated: without)", async () => {
    await m.ok(await m.call("POST", `/messages/${ids.g1}/reactions`, org.member2, { emoji_name: "tada" }));
    const narrow = (negated: boolean) => [{ operator: "channel", operand: "general" }, { operator: "has", operand: "reaction", negated }];
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: narrow(false) }))).toEqual([ids.g1]);
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: narrow(true) }))).toEqual([ids.g2, ids.g3, ids.g4]);
    await m.ok(await m.call("DELETE", `/messages/${ids.g1}/reactions`, org.member2, { emoji_name: "tada" }));
    expect(idsOf(await fetch(org.member, { anchor: "oldest", num_after: 10, narrow: narrow(false) }))).toEqual([]);
  });

  it("is:resolved and is:followed keep a channel's shared history (not properties of the viewer's rows)", async () => {
    const late = await m.createStream(org.owner, "late-joiners", [org.owner]);
    const fixed = await m.send(org.owner, { type: "stream", to: "late-joiners", topic: "✔ fixed", content: "done" });
    await m.send(org.owner, { type: "stream", to: "late-joiners", topic: "open", content: "not yet" });
    // member2 was never subscribed: the public channel's history is theirs to read.
    const resolved = [{ operator: "channel", operand: late }, { operator: "is", operand: "resolved" }];
    expect(idsOf(await fetch(org.member2, { anchor: "newest", num_before: 10, narrow: resolved }))).toEqual([fixed]);
    await m.ok(await m.call("POST", "/user_topics", org.member2, { stream_id: late, topic: "✔ fixed", visibility_policy: 3 }));
    const followed = [{ operator: "channel", operand: late }, { operator: "is", operand: "followed" }];
    expect(idsOf(await fetch(org.member2, { anchor: "newest", num_before: 10, narrow: followed }))).toEqual([fixed]);
    // Starred is the viewer's own flag: no history there.
    const starred = [{ operator: "channel", operand: late }, { operator: "is", operand: "starred" }];
    expect(idsOf(await fetch(org.member2, { anchor: "newest", num_before: 10, narrow: starred }))).toEqual([]);
  });

  it("search uses full-text and highlights matches", async () => {
    const res = await fetch(org.member, { anchor: "newest", num_before: 10, narrow: [["search", "rocket"]] });
    expect(idsOf(res)).toEqual([ids.g3, ids.s1]);
    expect(res.messages[0].match_content).toContain('<span class="highlight">rocket</span>');
    expect(res.messages[0].match_subject).toBe("Deploys");
    expect(idsOf(await fetch(org.member, { anchor: "newest", num_before: 10, narrow: [["search", "pizzas"]] }))).toEqual([ids.g1, ids.g4]);
    // member2 is not in the private channel: its message stays out of their search.
    expect(idsOf(await fetch(org.member2, { anchor: "newest", num_before: 10, narrow: [["search", "rocket"]] }))).toEqual([ids.g3]);
  });

  it("a public channel's history is readable by a non-subscriber (historical, read)", async () => {
    const res = await fetch(org.admin, { anchor: "oldest", num_after: 10, narrow: [["channel", "general"]] });
    expect(idsOf(res)).toEqual([ids.g1, ids.g2, ids.g3, ids.g4]);
    expect(res.messages[0].flags).toEqual(["read", "historical"]);
    // Without a channel narrow only received messages appear.
    expect(idsOf(await fetch(org.admin, { anchor: "oldest", num_after: 10 }))).toEqual([]);
  });

  it("a private channel one left still narrows to the messages one received there", async () => {
    await m.createStream(org.owner, "left-behind", [org.owner, org.member2], { invite_only: true });
    const kept = await m.send(org.member2, { type: "stream", to: "left-behind", topic: "t", content: "before leaving" });
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member2, { subscriptions: JSON.stringify(["left-behind"]) }));
    await m.send(org.owner, { type: "stream", to: "left-behind", topic: "t", content: "after they left" });
    for (const operand of ["left-behind", (await m.ok(await m.call("GET", "/get_stream_id", org.owner, { stream: "left-behind" }))).stream_id]) {
      expect(idsOf(await fetch(org.member2, { anchor: "newest", num_before: 10, narrow: [{ operator: "channel", operand }] }))).toEqual([kept]);
    }
  });

  it("channels:public reads every public channel's history; a guest gets only what they received", async () => {
    await m.createStream(org.owner, "quiet-corner", [org.owner]);
    const unseen = await m.send(org.owner, { type: "stream", to: "quiet-corner", topic: "t", content: "nobody else here" });
    for (const operator of ["channels", "streams"]) {
      const res = await fetch(org.admin, { anchor: "newest", num_before: 100, narrow: [{ operator, operand: "public" }] });
      expect(idsOf(res)).toContain(unseen);
      expect(idsOf(res)).toContain(ids.g1);
      expect(idsOf(res)).not.toContain(ids.s1);
      expect(idsOf(res)).not.toContain(ids.dm1);
      expect(res.messages.find((x: { id: number }) => x.id === unseen).flags).toEqual(["read", "historical"]);
    }
    const guest = idsOf(await fetch(org.guest, { anchor: "newest", num_before: 100, narrow: [["channels", "public"]] }));
    expect(guest).not.toContain(unseen);
    expect(idsOf(await fetch(org.admin, { anchor: "newest", num_before: 100, narrow: [["channels", "web-public"]] }))).toEqual([]);
    expectError(await m.call("GET", "/messages", org.admin, { anchor: "newest", narrow: [["channels", "private"]] }), 400, "BAD_NARROW", "Invalid narrow operator: unknown channels operand private");
  });

  it("group-pm-with finds group conversations only; dm-including finds both kinds", async () => {
    expect(idsOf(await fetch(org.member, { anchor: "newest", num_before: 100, narrow: [{ operator: "group-pm-with", operand: org.member2.user_id }] }))).toEqual([ids.gdm]);
    expect(idsOf(await fetch(org.member, { anchor: "newest", num_before: 100, narrow: [{ operator: "dm-including", operand: org.member2.user_id }] }))).toEqual([ids.dm1, ids.gdm]);
  });

  it("a private channel or another organization's channel is an unknown channel", async () => {
    const otherChannel = (await m.ok(await m.call("GET", "/get_stream_id", other.owner, { stream: "general" }))).stream_id;
    for (const operand of ["secret", secret, "no-such-channel", 999999, otherChannel]) {
      expectError(await m.call("GET", "/messages", org.member2, { anchor: "newest", narrow: [{ operator: "channel", operand }] }), 400, "BAD_NARROW", /Invalid narrow operator: unknown channel/);
    }
    expect(idsOf(await fetch(org.member, { anchor: "newest", num_before: 100, narrow: [["channel", "secret"]] }))).toEqual([ids.s1]);
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", narrow: [["sender", other.owner.email]] }), 400, "BAD_NARROW", /unknown user/);
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", narrow: [["is", "nonsense"]] }), 400, "BAD_NARROW", "Invalid narrow operator: unknown 'is' operand nonsense");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", narrow: [["color", "red"]] }), 400, "BAD_NARROW", "Invalid narrow operator: unknown operator color");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", narrow: "[[" }), 400, "BAD_REQUEST", "narrow is not valid JSON");
    expectError(await m.call("GET", "/messages", org.member, { anchor: "newest", narrow: JSON.stringify({ a: 1 }) }), 400, "BAD_REQUEST");
  });

  it("apply_markdown=false returns the Markdown; client_gravatar=false gives avatar URLs", async () => {
    const res = await fetch(org.member, { anchor: String(ids.g3), apply_markdown: false, client_gravatar: false });
    expect(res.messages[0]).toMatchObject({ content: "deploying the **rocket** service", content_type: "text/x-markdown" });
    expect(res.messages[0].avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\//);
  });

  it("message_ids fetches exactly those the viewer may read", async () => {
    const res = await fetch(org.member2, { message_ids: JSON.stringify([ids.g1, ids.s1, ids.dm1]) });
    expect(idsOf(res)).toEqual([ids.g1, ids.dm1]);
    expect(res.anchor).toBeUndefined();
  });

  it("message_ids goes with no range parameter: anchor, use_first_unread_anchor, num_before, num_after", async () => {
    const message_ids = JSON.stringify([ids.g1]);
    for (const extra of [{ anchor: "newest" }, { use_first_unread_anchor: true }, { num_before: 1 }, { num_after: 1 }]) {
      expectError(
        await m.call("GET", "/messages", org.member, { message_ids, ...extra }),
        400,
        "BAD_REQUEST",
        "Unsupported parameter combination: anchor, use_first_unread_anchor, num_before, num_after, message_ids",
      );
    }
    expect(idsOf(await fetch(org.member, { message_ids, use_first_unread_anchor: false, num_before: 0 }))).toEqual([ids.g1]);
  });

  it("several search terms: messages with all their words, every word highlighted", async () => {
    const res = await fetch(org.member, { anchor: "newest", num_before: 10, narrow: [["search", "rocket"], { operator: "search", operand: "service" }] });
    expect(idsOf(res)).toEqual([ids.g3]);
    expect(res.messages[0].match_content).toContain('<span class="highlight">rocket</span>');
    expect(res.messages[0].match_content).toContain('<span class="highlight">service</span>');
    const matches = await m.ok(
      await m.call("GET", "/messages/matches_narrow", org.member, { msg_ids: JSON.stringify([ids.g3, ids.s1]), narrow: JSON.stringify([["search", "rocket"], ["search", "service"]]) }),
    );
    expect(Object.keys(matches.messages)).toEqual([String(ids.g3)]);
    expect(matches.messages[ids.g3].match_content).toContain('<span class="highlight">service</span>');
  });
});

describe("GET /messages/{id}", () => {
  it("returns the message with flags and raw_content", async () => {
    const res = await m.ok(await m.call("GET", `/messages/${ids.g3}`, org.member));
    expect(res.raw_content).toBe("deploying the **rocket** service");
    expect(res.message).toMatchObject({ id: ids.g3, content: "<p>deploying the <strong>rocket</strong> service</p>", flags: ["starred"] });
  });

  it("inaccessible, missing and other-organization messages are all `Invalid message(s)`", async () => {
    for (const id of [ids.s1, 999999]) expectError(await m.call("GET", `/messages/${id}`, org.member2), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(await m.call("GET", `/messages/${ids.g1}`, other.owner), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(await m.call("GET", `/messages/${ids.dm1}`, org.owner), 400, "BAD_REQUEST", "Invalid message(s)");
    expect((await m.call("GET", "/messages/abc", org.member)).status).toBe(404);
  });
});

describe("GET /users/me/{stream_id}/topics and POST /messages/render", () => {
  it("lists a channel's topics, newest first, for those who may read its history", async () => {
    const res = await m.ok(await m.call("GET", `/users/me/${general}/topics`, org.admin));
    expect(res.topics).toEqual([
      { name: "lunch", max_id: ids.g4 },
      { name: "Deploys", max_id: ids.g3 },
    ]);
    expectError(await m.call("GET", `/users/me/${secret}/topics`, org.member2), 400, "BAD_REQUEST", "Invalid channel ID");
  });

  it("protected history: a subscriber lists the topics of what they received; a private channel is for its subscribers", async () => {
    const vault = await m.createStream(org.owner, "vault", [org.owner], { invite_only: true, history_public_to_subscribers: false });
    await m.send(org.owner, { type: "stream", to: "vault", topic: "before-join", content: "early" });
    await m.ok(await m.call("POST", "/users/me/subscriptions", org.owner, { subscriptions: JSON.stringify([{ name: "vault" }]), principals: JSON.stringify([org.member.user_id]) }));
    const after = await m.send(org.owner, { type: "stream", to: "vault", topic: "after-join", content: "late" });
    expect((await m.ok(await m.call("GET", `/users/me/${vault}/topics`, org.member))).topics).toEqual([{ name: "after-join", max_id: after }]);
    const owner = (await m.ok(await m.call("GET", `/users/me/${vault}/topics`, org.owner))).topics;
    expect(owner.map((t: { name: string }) => t.name)).toEqual(["after-join", "before-join"]);
    // An administrator who is not subscribed may see the channel, not its topics (as in Zulip).
    expectError(await m.call("GET", `/users/me/${vault}/topics`, org.admin), 400, "BAD_REQUEST", "Invalid channel ID");
  });

  it("renders Markdown without sending", async () => {
    const before = await m.count("messages");
    const res = await m.ok(await m.call("POST", "/messages/render", org.member, { content: "**hi** @**Max Member**" }));
    expect(res.rendered).toBe(`<p><strong>hi</strong> <span class="user-mention" data-user-id="${org.member2.user_id}">@Max Member</span></p>`);
    const tex = await m.ok(await m.call("POST", "/messages/render", org.member, { content: "$$x^2$$ and $$\\frac{$$" }));
    expect(tex.rendered).toMatch(/^<p><span class="katex"><span class="katex-mathml"><math .*<annotation encoding="application\/x-tex">x\^2<\/annotation>.*<\/span> and <span class="tex-error">\$\$\\frac\{\$\$<\/span><\/p>$/);
    const code = await m.ok(await m.call("POST", "/messages/render", org.member, { content: "```py\ndef f(): pass\n```" }));
    expect(code.rendered).toBe(
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="k">def</span> <span class="nf">f</span>(): <span class="k">pass</span>\n</code></pre></div>',
    );
    expect(await m.count("messages")).toBe(before);
    expectError(await m.call("POST", "/messages/render", org.member, {}), 400, "REQUEST_VARIABLE_MISSING");
  });
});
