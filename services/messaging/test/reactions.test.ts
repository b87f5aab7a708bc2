import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ReactionClientEvent } from "@chat/contracts";
import { serviceClient } from "@chat/testkit";
import { expectZulipEvent } from "@chat/testkit/openapi";
import { expectError, startMessaging, type Messaging, type Org, type TestUser } from "./helpers";

/**
 * POST and DELETE /messages/{id}/reactions as Zulip's reaction views answer them, the reaction
 * events messaging publishes (the event as clients get it, and who gets it), and reactions in
 * GET /messages and GET /messages/{id}. (Queues through the whole stack: reactions-e2e.test.ts.)
 */
let m: Messaging;
let org: Org;
let other: Org;
let general: number;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  other = await m.createOrg();
  general = await m.createStream(org.owner, "general", [org.owner, org.member, org.member2, org.guest]);
}, 60_000);
afterAll(async () => {
  await m?.close();
});
beforeEach(async () => {
  await m.outbox();
});

const react = (as: TestUser, id: number, params: Record<string, unknown>) => m.call("POST", `/messages/${id}/reactions`, as, params);
const unreact = (as: TestUser, id: number, params: Record<string, unknown>) => m.call("DELETE", `/messages/${id}/reactions`, as, params);
const toChannel = (from: TestUser, stream: number, topic = "lunch", content = "hello") => m.send(from, { type: "stream", to: String(stream), topic, content });
const direct = (from: TestUser, to: TestUser[]) => m.send(from, { type: "direct", to: JSON.stringify(to.map((u) => u.user_id)), content: "psst" });

async function message(as: TestUser, id: number) {
  return (await m.ok(await m.call("GET", `/messages/${id}`, as))).message;
}

/** The reaction events written since the last read: each checked against our contract and Zulip's schema. */
async function reactionEvents() {
  const events = (await m.clientEvents()).filter((e) => e.event.type === "reaction");
  for (const e of events) {
    ReactionClientEvent.parse(e.event);
    // Zulip's YAML (feature level 330) no longer lists the legacy `user` that 267 still sends.
    const { user: _legacy, ...modern } = e.event;
    expectZulipEvent(modern);
  }
  return events.map((e) => ({ type: e.type, event: e.event, users: [...e.users].sort((a: number, b: number) => a - b) }));
}

const ids = (...users: TestUser[]) => users.map((u) => u.user_id).sort((a, b) => a - b);
const legacyUser = (u: TestUser) => ({ user_id: u.user_id, email: u.email, full_name: u.full_name });
const inMessage = (u: TestUser, name: string, code: string, type = "unicode_emoji") => ({
  emoji_name: name,
  emoji_code: code,
  reaction_type: type,
  user_id: u.user_id,
  user: { id: u.user_id, email: u.email, full_name: u.full_name, is_mirror_dummy: false },
});

describe("adding a reaction", () => {
  it("by name: the emoji's code and type come from the name; everyone who has the message is told", async () => {
    const id = await direct(org.member, [org.member2]);
    await m.ok(await react(org.member2, id, { emoji_name: "octopus" }));
    expect(await reactionEvents()).toEqual([
      {
        type: "messaging.reaction.added",
        event: {
          type: "reaction",
          op: "add",
          user_id: org.member2.user_id,
          user: legacyUser(org.member2),
          message_id: id,
          emoji_name: "octopus",
          emoji_code: "1f419",
          reaction_type: "unicode_emoji",
        },
        users: ids(org.member, org.member2),
      },
    ]);
    expect((await message(org.member, id)).reactions).toEqual([inMessage(org.member2, "octopus", "1f419")]);
  });

  it("with code and type: checked against the name; zulip is the extra emoji", async () => {
    const id = await direct(org.member, [org.member2]);
    await m.ok(await react(org.member, id, { emoji_name: "smile", emoji_code: "1f642", reaction_type: "unicode_emoji" }));
    await m.ok(await react(org.member, id, { emoji_name: "zulip" }));
    await m.ok(await react(org.member2, id, { emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" }));
    expect((await message(org.member2, id)).reactions).toEqual([
      inMessage(org.member, "smile", "1f642"),
      inMessage(org.member, "zulip", "zulip", "zulip_extra_emoji"),
      inMessage(org.member2, "zulip", "zulip", "zulip_extra_emoji"),
    ]);
  });

  it("answers Zulip's errors, and changes nothing", async () => {
    const id = await direct(org.member, [org.member2]);
    await m.ok(await react(org.member, id, { emoji_name: "tada" }));
    await m.outbox();
    const before = await m.count("reactions");
    expectError(await react(org.member, id, { emoji_name: "tada" }), 400, "REACTION_ALREADY_EXISTS", "Reaction already exists.");
    expectError(await react(org.member, id, { emoji_name: "tada", emoji_code: "1f389", reaction_type: "unicode_emoji" }), 400, "REACTION_ALREADY_EXISTS");
    expectError(await react(org.member, id, { emoji_name: "no_such_emoji" }), 400, "BAD_REQUEST", "Emoji 'no_such_emoji' does not exist");
    expectError(await react(org.member, id, { emoji_name: "smile", emoji_code: "1f419", reaction_type: "unicode_emoji" }), 400, "BAD_REQUEST", "Invalid emoji name.");
    // A code without a type: only the type comes from the name, and the code must match it.
    expectError(await react(org.member, id, { emoji_name: "smile", emoji_code: "1f419" }), 400, "BAD_REQUEST", "Invalid emoji name.");
    expectError(await react(org.member, id, { emoji_name: "smile", emoji_code: "zz", reaction_type: "unicode_emoji" }), 400, "BAD_REQUEST", "Invalid emoji code.");
    expectError(await react(org.member, id, { emoji_name: "smile", emoji_code: "1f642", reaction_type: "image" }), 400, "BAD_REQUEST", "Invalid emoji type.");
    expectError(await react(org.member, id, { emoji_name: "x", emoji_code: "999999", reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "Invalid custom emoji.");
    expectError(await react(org.member, id, { emoji_name: "zulip", emoji_code: "1f642", reaction_type: "zulip_extra_emoji" }), 400, "BAD_REQUEST", "Invalid emoji code.");
    expectError(await react(org.member, id, {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'emoji_name' argument");
    expect(await m.count("reactions")).toBe(before);
    expect(await reactionEvents()).toEqual([]);
  });

  it("a second user's reaction with the same emoji is a vote for it, under its name", async () => {
    const id = await toChannel(org.member, general);
    await m.ok(await react(org.member, id, { emoji_name: "+1" }));
    // thumbs_up is another name of 1f44d: the existing reaction's name wins.
    await m.ok(await react(org.member2, id, { emoji_name: "thumbs_up" }));
    expect((await message(org.owner, id)).reactions).toEqual([inMessage(org.member, "+1", "1f44d"), inMessage(org.member2, "+1", "1f44d")]);
    const events = await reactionEvents();
    expect(events[1].event).toMatchObject({ user_id: org.member2.user_id, emoji_name: "+1", emoji_code: "1f44d" });
  });

  it("'Invalid message(s)' for messages the user cannot see: another organization's, a conversation or private channel they are not in", async () => {
    const theirs = await direct(other.member, [other.member2]);
    const dm = await direct(org.member, [org.member2]);
    const secret = await m.createStream(org.owner, "secret", [org.owner], { invite_only: true });
    const hidden = await toChannel(org.owner, secret);
    for (const [as, id] of [[org.member, theirs], [org.owner, dm], [org.member, hidden], [org.member, 999_999_999]] as const) {
      expectError(await react(as, id, { emoji_name: "smile" }), 400, "BAD_REQUEST", "Invalid message(s)");
      expectError(await unreact(as, id, { emoji_name: "smile" }), 400, "BAD_REQUEST", "Invalid message(s)");
    }
    expect(await reactionEvents()).toEqual([]);
  });

  it("in a public channel a non-subscriber may react (they get the message as historical); a guest may not", async () => {
    const open = await m.createStream(org.owner, "open", [org.owner, org.member2]);
    const id = await toChannel(org.owner, open);
    await m.outbox();
    expectError(await react(org.guest, id, { emoji_name: "smile" }), 400, "BAD_REQUEST", "Invalid message(s)");
    await m.ok(await react(org.member, id, { emoji_name: "smile" }));
    expect((await message(org.member, id)).flags).toEqual(["read", "historical"]);
    // Those who have it (now the reacting user too) and the subscribers.
    expect((await reactionEvents())[0].users).toEqual(ids(org.owner, org.member, org.member2));
  });
});

describe("who is told", () => {
  it("a public channel: those who have the message and the current subscribers", async () => {
    const ch = await m.createStream(org.owner, "town", [org.owner, org.member]);
    const id = await toChannel(org.owner, ch);
    // A later subscriber reads it through the channel's history, without a row of their own.
    await m.createStream(org.owner, "town", [org.member2]);
    await m.ok(await react(org.owner, id, { emoji_name: "smile" }));
    expect((await reactionEvents())[0].users).toEqual(ids(org.owner, org.member, org.member2));
  });

  it("a private channel with shared history: its current subscribers only", async () => {
    const ch = await m.createStream(org.owner, "shared", [org.owner, org.member, org.member2], { invite_only: true, history_public_to_subscribers: true });
    const id = await toChannel(org.owner, ch);
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member2, { subscriptions: JSON.stringify(["shared"]) }));
    await m.createStream(org.owner, "shared", [org.moderator]);
    await m.ok(await react(org.member, id, { emoji_name: "smile" }));
    expect((await reactionEvents())[0].users).toEqual(ids(org.owner, org.moderator, org.member));
  });

  it("a private channel with protected history: those who had the message and are still subscribed", async () => {
    const ch = await m.createStream(org.owner, "protected", [org.owner, org.member, org.member2], { invite_only: true, history_public_to_subscribers: false });
    const id = await toChannel(org.owner, ch);
    await m.ok(await m.call("DELETE", "/users/me/subscriptions", org.member2, { subscriptions: JSON.stringify(["protected"]) }));
    await m.createStream(org.owner, "protected", [org.moderator]);
    await m.ok(await react(org.member, id, { emoji_name: "smile" }));
    expect((await reactionEvents())[0].users).toEqual(ids(org.owner, org.member));
  });
});

describe("removing a reaction", () => {
  it("by name or by code and type; the event carries the name it was added under", async () => {
    const id = await direct(org.member, [org.member2]);
    await m.ok(await react(org.member, id, { emoji_name: "+1" }));
    await m.ok(await react(org.member, id, { emoji_name: "heart" }));
    await m.ok(await react(org.member, id, { emoji_name: "zulip" }));
    await m.outbox();
    await m.ok(await unreact(org.member, id, { emoji_name: "thumbs_up" }));
    await m.ok(await unreact(org.member, id, { emoji_code: "2764", reaction_type: "unicode_emoji" }));
    await m.ok(await unreact(org.member, id, { emoji_name: "zulip" }));
    const events = await reactionEvents();
    expect(events.map((e) => [e.type, e.event.op, e.event.emoji_name, e.event.emoji_code, e.event.reaction_type])).toEqual([
      ["messaging.reaction.removed", "remove", "+1", "1f44d", "unicode_emoji"],
      ["messaging.reaction.removed", "remove", "heart", "2764", "unicode_emoji"],
      ["messaging.reaction.removed", "remove", "zulip", "zulip", "zulip_extra_emoji"],
    ]);
    expect(events.every((e) => e.users.join() === ids(org.member, org.member2).join())).toBe(true);
    expect((await message(org.member, id)).reactions).toEqual([]);
  });

  it("answers Zulip's errors: only one's own reaction, which must exist", async () => {
    const id = await direct(org.member, [org.member2]);
    await m.ok(await react(org.member, id, { emoji_name: "smile" }));
    await m.outbox();
    expectError(await unreact(org.member2, id, { emoji_name: "smile" }), 400, "REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");
    expectError(await unreact(org.member, id, { emoji_name: "octopus" }), 400, "REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");
    expectError(await unreact(org.member, id, { emoji_name: "no_such_emoji" }), 400, "BAD_REQUEST", "Emoji 'no_such_emoji' does not exist");
    expectError(await unreact(org.member, id, {}), 400, "BAD_REQUEST", "At least one of the following arguments must be present: emoji_name, emoji_code");
    expect(await reactionEvents()).toEqual([]);
    expect((await message(org.member, id)).reactions).toHaveLength(1);
  });
});

describe("custom emoji reactions", () => {
  async function customEmoji(name: string, deactivated = false) {
    const { rows } = await m.deps.pool.query(
      `INSERT INTO realm_emoji (realm_id, name, author_id, file_name, content_type, deactivated, date_created)
       VALUES ($1, $2, $3, 'x.png', 'image/png', $4, now()) RETURNING id`,
      [org.realmId, name, org.member.user_id, deactivated],
    );
    return String(rows[0].id);
  }

  it("by name: the organization's emoji, found before a Unicode one of the same name; deactivated ones only by vote", async () => {
    const parrot = await customEmoji("parrot_party");
    const shadow = await customEmoji("octopus");
    const id = await direct(org.member, [org.member2]);
    await m.ok(await react(org.member, id, { emoji_name: "parrot_party" }));
    await m.ok(await react(org.member, id, { emoji_name: "octopus" }));
    expect((await message(org.member, id)).reactions).toEqual([
      inMessage(org.member, "parrot_party", parrot, "realm_emoji"),
      inMessage(org.member, "octopus", shadow, "realm_emoji"),
    ]);
    await m.deps.pool.query("UPDATE realm_emoji SET deactivated = true WHERE id = $1", [parrot]);
    expectError(await react(org.member2, id, { emoji_name: "parrot_party" }), 400, "BAD_REQUEST", "Emoji 'parrot_party' does not exist");
    // Another organization's emoji is unknown here.
    expectError(await react(other.member, await direct(other.member, [other.member2]), { emoji_name: "octopus", emoji_code: shadow, reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "Invalid custom emoji.");
    // A vote for the existing reaction still works, and so does removing it.
    await m.ok(await react(org.member2, id, { emoji_name: "parrot_party", emoji_code: parrot, reaction_type: "realm_emoji" }));
    await m.ok(await unreact(org.member, id, { emoji_code: parrot, reaction_type: "realm_emoji" }));
    const gone = await customEmoji("gone", true);
    expectError(await react(org.member2, id, { emoji_name: "gone", emoji_code: gone, reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "This custom emoji has been deactivated.");
    // On a message without that reaction the name must be the emoji's.
    const fresh = await direct(org.member, [org.member2]);
    expectError(await react(org.member2, fresh, { emoji_name: "parrot", emoji_code: shadow, reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "Invalid custom emoji name.");
    // On one with it, a vote under its name whatever the request says.
    await m.ok(await react(org.member2, id, { emoji_name: "parrot", emoji_code: shadow, reaction_type: "realm_emoji" }));
    expect((await message(org.member, id)).reactions.at(-1)).toEqual(inMessage(org.member2, "octopus", shadow, "realm_emoji"));
  });
});

describe("reactions in GET /messages", () => {
  it("are read in one statement for the whole batch, and show each message's own", async () => {
    const topic = "many";
    const sent: number[] = [];
    for (let i = 0; i < 120; i++) sent.push(await toChannel(org.member, general, topic, `m${i}`));
    await m.ok(await react(org.member2, sent[0], { emoji_name: "smile" }));
    await m.ok(await react(org.owner, sent[0], { emoji_name: "smile" }));
    await m.ok(await react(org.owner, sent[119], { emoji_name: "tada" }));
    const spy = vi.spyOn(m.deps.pool, "query");
    try {
      const narrow = JSON.stringify([{ operator: "channel", operand: general }, { operator: "topic", operand: topic }]);
      const res = await m.ok(await m.call("GET", "/messages", org.member, { anchor: "newest", num_before: 200, num_after: 0, narrow }));
      expect(res.messages).toHaveLength(120);
      const byId = new Map(res.messages.map((msg: any) => [msg.id, msg.reactions]));
      expect(byId.get(sent[0])).toEqual([inMessage(org.member2, "smile", "1f642"), inMessage(org.owner, "smile", "1f642")]);
      expect(byId.get(sent[119])).toEqual([inMessage(org.owner, "tada", "1f389")]);
      expect(byId.get(sent[50])).toEqual([]);
      const reactionReads = spy.mock.calls.filter(([sql]) => typeof sql === "string" && /FROM reactions/.test(sql));
      expect(reactionReads).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("reacting is participating", () => {
  it("a user who follows topics they participate in follows the topic on reacting; the defaults change nothing", async () => {
    const fresh = await m.createOrg();
    const accounts = serviceClient(m.accountsApp, m.deps.config.INTERNAL_TOKEN);
    // Before messaging first reads the user's settings (it reads them through from accounts then).
    await m.ok(await accounts("PATCH", "/settings", { as: fresh.member.as, params: { automatically_follow_topics_policy: 1 } }));
    const ch = await m.createStream(fresh.owner, "plans", [fresh.owner, fresh.member, fresh.member2]);
    const id = await toChannel(fresh.owner, ch, "Roadmap");
    await m.outbox();
    await m.ok(await react(fresh.member, id, { emoji_name: "smile" }));
    await m.ok(await react(fresh.member2, id, { emoji_name: "smile" }));
    const events = await m.clientEvents();
    expect(events.map((e) => [e.event.type, e.users])).toEqual([
      ["user_topic", [fresh.member.user_id]],
      ["muted_topics", [fresh.member.user_id]],
      ["reaction", ids(fresh.owner, fresh.member, fresh.member2)],
      ["reaction", ids(fresh.owner, fresh.member, fresh.member2)],
    ]);
    expect(events[0].event).toMatchObject({ stream_id: ch, topic_name: "Roadmap", visibility_policy: 3 });
    // Following already: nothing changes the second time.
    await m.ok(await unreact(fresh.member, id, { emoji_name: "smile" }));
    await m.ok(await react(fresh.member, id, { emoji_name: "smile" }));
    expect((await m.clientEvents()).map((e) => e.event.type)).toEqual(["reaction", "reaction"]);
  });
});

describe("widgets: /poll and /todo messages and POST /submessage", () => {
  const submit = (as: TestUser, id: number, content: unknown, msgType = "widget") =>
    m.call("POST", "/submessage", as, { message_id: id, msg_type: msgType, content: typeof content === "string" ? content : JSON.stringify(content) });

  it("a /poll message carries its widget, in its event and in GET /messages; votes reach those who have the message", async () => {
    const id = await toChannel(org.owner, general, "lunch", "/poll Where to eat?\nPizza\n- Tacos\n\n* Soup");
    const sent = (await m.clientEvents()).find((e) => e.event.type === "message")!;
    const widget = { widget_type: "poll", extra_data: { question: "Where to eat?", options: ["Pizza", "Tacos", "Soup"] } };
    expect(sent.event.message.submessages.map((s: any) => ({ ...s, content: JSON.parse(s.content) }))).toEqual([
      { id: expect.any(Number), message_id: id, sender_id: org.owner.user_id, msg_type: "widget", content: widget },
    ]);
    expect((await message(org.member, id)).submessages).toEqual(sent.event.message.submessages);

    await m.ok(await submit(org.member, id, { type: "vote", key: "canned,1", vote: 1 }));
    const votes = (await m.clientEvents()).filter((e) => e.event.type === "submessage");
    expect(votes.map((e) => [e.event, [...e.users].sort((a: number, b: number) => a - b)])).toEqual([
      [
        {
          type: "submessage",
          msg_type: "widget",
          message_id: id,
          submessage_id: expect.any(Number),
          sender_id: org.member.user_id,
          content: JSON.stringify({ type: "vote", key: "canned,1", vote: 1 }),
        },
        ids(org.owner, org.member, org.member2, org.guest),
      ],
    ]);
    expectZulipEvent(votes[0].event);
    const subs = (await message(org.member2, id)).submessages;
    expect(subs.map((s: any) => [s.sender_id, JSON.parse(s.content).type ?? JSON.parse(s.content).widget_type])).toEqual([
      [org.owner.user_id, "poll"],
      [org.member.user_id, "vote"],
    ]);
  });

  it("checks the data against the widget: JSON, known kinds and keys, the question only by the author", async () => {
    const id = await toChannel(org.owner, general, "lunch", "/poll Again?");
    const refusals: Array<[TestUser, unknown, string]> = [
      [org.member, "{not json", "Invalid json for submessage"],
      [org.member, { type: "question", question: "Mine?" }, "You can't edit a question unless you are the author."],
      [org.member, { type: "shout" }, "Unknown type for poll data: shout"],
      [org.member, { type: "vote", key: "canned,0" }, "vote key is missing from poll data"],
      [org.member, { type: "vote", key: "canned,0", vote: "1" }, 'poll data["vote"] is not an integer'],
      [org.member, { type: "new_option", option: "Soup", idx: 1, extra: true }, "Unexpected arguments: extra"],
      [org.member, [1], "poll data is not a dict"],
    ];
    for (const [who, content, msg] of refusals) expectError(await submit(who, id, content), 400, "BAD_REQUEST", msg);
    await m.ok(await submit(org.owner, id, { type: "question", question: "Again, really?" }));
    await m.ok(await submit(org.member, id, { type: "new_option", option: "Soup", idx: 1 }));
    expect((await message(org.owner, id)).submessages).toHaveLength(3);
  });

  it("a /todo message: tasks with descriptions; strike and new_task", async () => {
    const id = await toChannel(org.owner, general, "chores", "/todo Friday\n- Dishes: after lunch\n- Laundry");
    const [widget] = (await message(org.owner, id)).submessages;
    expect(JSON.parse(widget.content)).toEqual({
      widget_type: "todo",
      extra_data: { task_list_title: "Friday", tasks: [{ task: "Dishes", desc: "after lunch" }, { task: "Laundry", desc: "" }] },
    });
    await m.ok(await submit(org.member, id, { type: "strike", key: "0,canned" }));
    await m.ok(await submit(org.member, id, { type: "new_task", key: 2, task: "Trash", desc: "", completed: false }));
    expectError(await submit(org.member, id, { type: "vote", key: "x", vote: 1 }), 400, "BAD_REQUEST", "Unknown type for todo data: vote");
    // Deleting the message takes its submessages with it.
    await m.ok(await m.call("DELETE", `/messages/${id}`, org.admin));
    expectError(await submit(org.member, id, { type: "strike", key: "1,canned" }), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  it("only the sender starts a widget on a plain message; a message one cannot read is invalid", async () => {
    const plain = await toChannel(org.owner, general, "lunch", "just text");
    expect((await message(org.owner, plain)).submessages).toEqual([]);
    expectError(await submit(org.member, plain, { anything: 1 }), 400, "BAD_REQUEST", "You cannot attach a submessage to this message.");
    // The sender may (Zulip lets a bot's message grow its own widget so); no widget, any JSON.
    await m.ok(await submit(org.owner, plain, { anything: 1 }));
    const dm = await direct(org.owner, [org.member]);
    expectError(await submit(org.member2, dm, { type: "vote" }), 400, "BAD_REQUEST", "Invalid message(s)");
    const theirs = await toChannel(other.owner, await m.createStream(other.owner, "theirs", [other.owner]), "t", "/poll Q\nA");
    expectError(await submit(org.owner, theirs, { type: "vote", key: "canned,0", vote: 1 }), 400, "BAD_REQUEST", "Invalid message(s)");
  });
});
