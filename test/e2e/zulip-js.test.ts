import { describe, expect, it } from "vitest";
import zulip, { type ZulipClient } from "zulip-js";
import { runChat, type DemoOrg, type DemoUser } from "@chat/testkit";
import { checkEvent, NO_RATE_LIMITS, sleep, useDemoStack } from "@chat/testkit/e2e";

/**
 * Zulip's official JavaScript client (npm zulip-js 2.1.0), unchanged, against the whole stack:
 * every request below is made by one of its own methods, so it is encoded the way zulip-js
 * encodes it (POST bodies as multipart with arrays JSON-stringified, GET/PATCH/DELETE parameters
 * in the query string, path ids repeated there). The assertions are what a client sees.
 *
 * Left out, because they fail against Zulip itself: `users.me.pointer.*` (the pointer endpoints
 * were removed upstream at feature level 23) and `callOnEachEvent` (an endless loop with no way
 * to stop it; its requests are the register and long-poll made below). `filters.retrieve` calls
 * GET /realm/filters, removed upstream at feature level 54; our server still answers it, so it is
 * covered here next to its successor, GET /realm/linkifiers.
 */

let org: DemoOrg;
const e2e = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));

const clientOf = (user: DemoUser): Promise<ZulipClient> => zulip({ username: user.email, apiKey: user.api_key, realm: e2e.demo.base_url });

/** Zulip's success envelope: what every client checks first. */
function success<T = any>(res: any): T {
  expect(res, JSON.stringify(res)).toMatchObject({ result: "success", msg: "" });
  return res;
}

/**
 * The form Zulip's schema (feature level 330) is asked about: without what our level 267 still
 * sends and Zulip dropped later, update_message's prev_rendered_content_version (gone at 284) and
 * a reaction's legacy `user`.
 */
function zulipForm(e: Record<string, any>): Record<string, any> {
  if (e.type === "update_message") return (({ prev_rendered_content_version: _v, ...rest }) => rest)(e);
  if (e.type === "reaction") return (({ user: _legacy, ...rest }) => rest)(e);
  return e;
}

/** Long-polls with events.retrieve until some event passes `match`; every event seen is checked against our contract and Zulip's schema. */
async function eventMatching(z: ZulipClient, queue: { queue_id: string; last_event_id: number }, match: (e: any) => boolean): Promise<any> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const { events } = success(await z.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id }));
    for (const event of events) {
      queue.last_event_id = Math.max(queue.last_event_id, event.id);
      if (event.type === "heartbeat") continue;
      checkEvent(event, zulipForm);
      if (match(event)) return event;
    }
  }
  throw new Error("no matching event within 15 s");
}

describe("zulip-js, Zulip's JavaScript client, unchanged", () => {
  it("server settings, own profile, users, channels and a channel's id", async () => {
    const { member, member2 } = org.users;
    const z = await clientOf(member);
    expect(z.config.apiURL).toBe(`${e2e.demo.base_url}/api/v1`);
    // A realm given as the API root works the same. (Not with a trailing slash: zulip-js then asks
    // for //api/v1/..., which nginx hands to Django unmerged, and Zulip's URL table does not match.)
    const viaApiRoot = await zulip({ username: member.email, apiKey: member.api_key, realm: `${e2e.demo.base_url}/api` });
    expect(success(await viaApiRoot.users.me.getProfile()).user_id).toBe(member.user_id);

    const settings = success(await z.server.settings());
    expect(settings).toMatchObject({ zulip_feature_level: 267, authentication_methods: expect.any(Object) });

    const me = success(await z.users.me.getProfile());
    expect(me).toMatchObject({ user_id: member.user_id, email: member.email, full_name: member.full_name, is_bot: false });

    const { members } = success(await z.users.retrieve());
    expect(members).toEqual(expect.arrayContaining([expect.objectContaining({ user_id: member2.user_id, email: member2.email, full_name: member2.full_name })]));
    const withFields = success(await z.users.retrieve({ include_custom_profile_fields: true }));
    expect(withFields.members.find((u: any) => u.user_id === member.user_id)).toHaveProperty("profile_data");

    const pub = org.channels.public;
    const { streams } = success(await z.streams.retrieve());
    expect(streams).toEqual(expect.arrayContaining([expect.objectContaining({ stream_id: pub.stream_id, name: pub.name })]));
    expect(success(await z.streams.getStreamId(pub.name)).stream_id).toBe(pub.stream_id);
    expect(success(await z.streams.getStreamId({ stream: pub.name })).stream_id).toBe(pub.stream_id);
    expect(await z.streams.getStreamId("no such channel")).toMatchObject({ result: "error", code: "BAD_REQUEST" });
  });

  it("subscribes, lists and unsubscribes (itself and another user), creating a channel on the way", async () => {
    const { member, member2 } = org.users;
    const z = await clientOf(member);
    const name = "zulip-js subscriptions";

    const added = success(await z.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name, description: "made by zulip-js" }]) }));
    expect(added.subscribed).toEqual({ [String(member.user_id)]: [name] });
    const again = success(await z.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name }]), principals: JSON.stringify([member2.user_id]) }));
    expect(again).toMatchObject({ subscribed: { [String(member2.user_id)]: [name] }, already_subscribed: {} });

    const { subscriptions } = success(await z.streams.subscriptions.retrieve({ include_subscribers: true }));
    const sub = subscriptions.find((s: any) => s.name === name);
    expect(sub).toMatchObject({ description: "made by zulip-js" });
    expect([...sub.subscribers].sort()).toEqual([member.user_id, member2.user_id].sort());

    const removed = success(await z.users.me.subscriptions.remove({ subscriptions: JSON.stringify([name]) }));
    expect(removed).toMatchObject({ removed: [name], not_removed: [] });
    const after = success(await z.streams.subscriptions.retrieve());
    expect(after.subscriptions.map((s: any) => s.name)).not.toContain(name);
  });

  it("a queue sees a channel message and a direct message arrive; narrows, edits, flags, reactions, typing", async () => {
    const { member, member2 } = org.users;
    const [alice, bob] = await Promise.all([clientOf(member), clientOf(member2)]);
    const pub = org.channels.public;

    const queue = success(await bob.queues.register({ event_types: ["message", "update_message", "update_message_flags", "reaction", "typing"] }));
    expect(queue).toMatchObject({ queue_id: expect.any(String), last_event_id: -1 });

    // A channel message, by name as zulip-js's README shows, answering Bob's poll that was
    // already waiting; raw Markdown, since register's apply_markdown defaults to false in Zulip.
    const held = bob.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: false });
    await sleep(300);
    const sent = success(await alice.messages.send({ to: pub.name, type: "stream", topic: "zulip-js", content: "Hello from **zulip-js**" }));
    expect(sent.id).toEqual(expect.any(Number));
    const { events } = success(await held);
    // The answer is this message, unless a notification bot message of the test before (committed
    // before this queue, delivered after it) answered the poll first; then it is the next one.
    for (const event of events) checkEvent(event, zulipForm);
    const ours = events.filter((e: any) => !(e.type === "message" && e.message.sender_full_name === "Notification Bot"));
    let arrived = ours[0];
    if (ours.length > 0) expect(ours).toEqual([expect.objectContaining({ type: "message", flags: [], message: expect.objectContaining({ id: sent.id }) })]);
    else {
      queue.last_event_id = Math.max(queue.last_event_id, ...events.map((e: any) => e.id));
      arrived = await eventMatching(bob, queue, (e) => e.type === "message" && e.message.id === sent.id);
    }
    queue.last_event_id = arrived.id;
    expect(arrived.message).toMatchObject({ sender_id: member.user_id, stream_id: pub.stream_id, subject: "zulip-js", content: "Hello from **zulip-js**", type: "stream" });
    expect(arrived.flags).toEqual([]);

    // A direct message by user id (an array, which zulip-js JSON-stringifies) and by email.
    const dm = success(await alice.messages.send({ to: [member2.user_id], type: "direct", content: "psst" }));
    const dmEvent = await eventMatching(bob, queue, (e) => e.type === "message" && e.message.id === dm.id);
    expect(dmEvent.message).toMatchObject({ type: "private", content: "psst", display_recipient: expect.arrayContaining([expect.objectContaining({ id: member2.user_id })]) });
    const dm2 = success(await alice.messages.send({ to: member2.email, type: "private", content: "by email" }));
    await eventMatching(bob, queue, (e) => e.type === "message" && e.message.id === dm2.id);

    // Reading with a narrow (zulip-js JSON-stringifies it), anchored at the newest and at an id.
    const narrow = [{ operator: "stream", operand: pub.name }, { operator: "topic", operand: "zulip-js" }];
    const page = success(await bob.messages.retrieve({ anchor: "newest", num_before: 10, num_after: 0, narrow }));
    expect(page.messages.map((m: any) => m.id)).toEqual([sent.id]);
    expect(page).toMatchObject({ found_newest: true, found_anchor: false });
    const byId = success(await bob.messages.retrieve({ anchor: sent.id, num_before: 0, num_after: 0, narrow }));
    expect(byId).toMatchObject({ anchor: sent.id, found_anchor: true, messages: [expect.objectContaining({ id: sent.id, flags: [] })] });
    const dms = success(await bob.messages.retrieve({ anchor: "newest", num_before: 5, num_after: 0, narrow: [{ operator: "dm", operand: member.email }] }));
    expect(dms.messages.map((m: any) => m.id)).toEqual([dm.id, dm2.id]);

    // An edit (PATCH, every parameter in the query string, message_id repeated there).
    // Zulip lists the repeated path id as ignored, as here.
    expect(await alice.messages.update({ message_id: sent.id, content: "Hello again from zulip-js" })).toEqual({ result: "success", msg: "", ignored_parameters_unsupported: ["message_id"] });
    const edited = await eventMatching(bob, queue, (e) => e.type === "update_message" && e.message_id === sent.id);
    expect(edited).toMatchObject({ rendered_content: "<p>Hello again from zulip-js</p>", orig_content: "Hello from **zulip-js**" });
    const fetched = success(await bob.messages.getById({ message_id: sent.id }));
    expect(fetched).toMatchObject({ raw_content: "Hello again from zulip-js", message: expect.objectContaining({ id: sent.id }) });
    const history = success(await bob.messages.getHistoryById({ message_id: sent.id }));
    expect(history.message_history.map((h: any) => h.content)).toEqual(["Hello from **zulip-js**", "Hello again from zulip-js"]);

    // Flags: starred on and off, and read.
    expect(success(await bob.messages.flags.add({ messages: [sent.id], flag: "starred" })).messages).toEqual([sent.id]);
    expect(await eventMatching(bob, queue, (e) => e.type === "update_message_flags")).toMatchObject({ op: "add", flag: "starred", messages: [sent.id] });
    expect(success(await bob.messages.flags.remove({ messages: [sent.id], flag: "starred" })).messages).toEqual([sent.id]);
    expect(await eventMatching(bob, queue, (e) => e.type === "update_message_flags")).toMatchObject({ op: "remove", flag: "starred", messages: [sent.id] });
    success(await bob.messages.flags.add({ messages: [sent.id, dm.id, dm2.id], flag: "read" }));
    expect(await eventMatching(bob, queue, (e) => e.type === "update_message_flags")).toMatchObject({ op: "add", flag: "read", messages: [sent.id, dm.id, dm2.id] });

    // Reactions: added and removed through reactions.*, and removed through messages.deleteReactionById.
    success(await alice.reactions.add({ message_id: sent.id, emoji_name: "octopus" }));
    expect(await eventMatching(bob, queue, (e) => e.type === "reaction")).toMatchObject({ op: "add", message_id: sent.id, emoji_name: "octopus", user_id: member.user_id });
    success(await alice.reactions.remove({ message_id: sent.id, emoji_name: "octopus" }));
    expect(await eventMatching(bob, queue, (e) => e.type === "reaction")).toMatchObject({ op: "remove", message_id: sent.id, emoji_name: "octopus" });
    success(await alice.reactions.add({ message_id: sent.id, emoji_name: "tada" }));
    await eventMatching(bob, queue, (e) => e.type === "reaction" && e.op === "add");
    success(await alice.messages.deleteReactionById({ message_id: sent.id, emoji_name: "tada" }));
    expect(await eventMatching(bob, queue, (e) => e.type === "reaction")).toMatchObject({ op: "remove", emoji_name: "tada" });
    expect(success(await bob.messages.getById({ message_id: sent.id })).message.reactions).toEqual([]);

    // Typing to a direct-message recipient (zulip-js's one-element array is JSON-stringified).
    success(await alice.typing.send({ to: [member2.user_id], op: "start" }));
    expect(await eventMatching(bob, queue, (e) => e.type === "typing")).toMatchObject({ op: "start", sender: { user_id: member.user_id, email: member.email } });
    success(await alice.typing.send({ to: [member2.user_id], op: "stop" }));
    expect(await eventMatching(bob, queue, (e) => e.type === "typing")).toMatchObject({ op: "stop" });

    // Topics of the channel, as the client lists them.
    const { topics } = success(await bob.streams.topics.retrieve({ stream_id: pub.stream_id }));
    expect(topics).toEqual(expect.arrayContaining([{ name: "zulip-js", max_id: sent.id }]));

    // Deregistering: the queue is gone for the next poll.
    success(await bob.queues.deregister({ queue_id: queue.queue_id }));
    expect(await bob.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true })).toMatchObject({
      result: "error",
      code: "BAD_EVENT_QUEUE_ID",
      queue_id: queue.queue_id,
    });
  });

  it("registers for every event type the way callOnEachEvent does, and polls without blocking", async () => {
    const z = await clientOf(org.users.member);
    // callOnEachEvent registers with event_types null when given no types (form field "null").
    const queue = success(await z.queues.register({ event_types: null }));
    const state = success(await z.queues.register({ event_types: ["message"], fetch_event_types: JSON.stringify(["realm_user"]) }));
    expect(state.realm_users).toEqual(expect.arrayContaining([expect.objectContaining({ user_id: org.users.member.user_id })]));
    const polled = success(await z.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id, dont_block: true }));
    expect(polled.events).toEqual([]);
    success(await z.queues.deregister({ queue_id: queue.queue_id }));
    success(await z.queues.deregister({ queue_id: state.queue_id }));
  });

  it("renders, deletes a message, lists emoji, alert words, linkifiers, and archives a channel (administrator)", async () => {
    const { admin, member } = org.users;
    const [z, m] = await Promise.all([clientOf(admin), clientOf(member)]);

    expect(success(await z.messages.render("**bold** move")).rendered).toBe("<p><strong>bold</strong> move</p>");
    expect(success(await z.messages.render({ content: "*it*" })).rendered).toBe("<p><em>it</em></p>");

    const { id } = success(await m.messages.send({ to: org.channels.public.name, type: "stream", topic: "doomed", content: "delete me" }));
    success(await z.messages.deleteById({ message_id: id }));
    expect(await m.messages.getById({ message_id: id })).toMatchObject({ result: "error", code: "BAD_REQUEST", msg: "Invalid message(s)" });

    expect(success(await m.emojis.retrieve()).emoji).toEqual(expect.any(Object));
    expect(success(await m.users.me.alertWords.retrieve()).alert_words).toEqual([]);

    // A linkifier made through the generic callEndpoint, then listed through filters.retrieve (legacy tuples) and GET /realm/linkifiers.
    const made = success(await z.callEndpoint("/realm/filters", "POST", { pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example/{id}" }));
    expect(made.id).toEqual(expect.any(Number));
    expect(success(await m.filters.retrieve()).filters).toEqual(expect.arrayContaining([["#(?P<id>[0-9]+)", "https://tracker.example/{id}", made.id]]));
    expect(success(await m.callEndpoint("realm/linkifiers")).linkifiers).toEqual(
      expect.arrayContaining([{ id: made.id, pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example/{id}" }]),
    );

    // A channel made by subscribing, then archived through streams.deleteById.
    const name = "zulip-js archive";
    success(await z.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name }]) }));
    const streamId = success(await z.streams.getStreamId(name)).stream_id;
    success(await z.streams.deleteById({ stream_id: streamId }));
    expect((await z.streams.getStreamId(name)).result).toBe("error");
    expect(await m.streams.deleteById({ stream_id: org.channels.public.stream_id })).toMatchObject({ result: "error" });
  });
  it("logs in with a password, creates a user, and sends the other shapes zulip-js users send", async () => {
    const { admin, member, member2 } = org.users;
    const pub = org.channels.public;

    // zulip({ username, password }) fetches the API key first (POST /fetch_api_key, multipart, no auth).
    const email = "zulip-js-login@example.com";
    const made = await runChat(e2e.stack, ["user", "create", "--org", String(org.id), "--email", email, "--name", "Jay Ess", "--password", "correct horse battery", "--json"], { viaPnpm: false });
    expect(made.code, made.stderr).toBe(0);
    const created = JSON.parse(made.stdout);
    const byPassword = await zulip({ username: email, password: "correct horse battery", realm: e2e.demo.base_url });
    // A fresh key per client login (keys are stored hashed), in Zulip's format.
    expect(byPassword.config.apiKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(success(await byPassword.users.me.getProfile())).toMatchObject({ user_id: created.user_id, full_name: "Jay Ess" });

    // users.create by an administrator.
    const z = await clientOf(admin);
    const newUser = success(await z.users.create({ email: "zulip-js-new@example.com", password: "a long enough password", full_name: "New Person" }));
    expect(newUser.user_id).toEqual(expect.any(Number));

    // A queue with rendered content (apply_markdown as text: zulip-js's multipart refuses booleans) and a narrow.
    const m = await clientOf(member);
    const q = success(await m.queues.register({ event_types: ["message", "update_message", "typing"], apply_markdown: "true", narrow: JSON.stringify([["stream", pub.name]]) }));

    // The legacy `subject`, a channel given by id, a group direct message by emails.
    const legacy = success(await m.messages.send({ to: pub.stream_id, type: "stream", subject: "legacy", content: "*old* style" }));
    const event = await eventMatching(m, q, (e) => e.type === "message");
    expect(event.message).toMatchObject({ id: legacy.id, subject: "legacy", stream_id: pub.stream_id, content: "<p><em>old</em> style</p>" });
    const group = success(await m.messages.send({ to: [member2.email, admin.email], type: "private", content: "all three" }));
    const { messages } = success(await m.messages.retrieve({ anchor: group.id, num_before: 0, num_after: 0 }));
    expect(messages[0].display_recipient.map((r: any) => r.id).sort()).toEqual([admin.user_id, member.user_id, member2.user_id].sort());

    // A topic move of the whole topic (PATCH parameters in the query string).
    success(await m.messages.update({ message_id: legacy.id, topic: "moved", propagate_mode: "change_all" }));
    expect(await eventMatching(m, q, (e) => e.type === "update_message")).toMatchObject({ message_id: legacy.id, orig_subject: "legacy", subject: "moved", propagate_mode: "change_all" });

    // Narrows by channel id, negated, and a search.
    const narrowed = (narrow: unknown[]) => m.messages.retrieve({ anchor: "newest", num_before: 50, num_after: 0, narrow });
    const inMoved = success(await narrowed([{ operator: "channel", operand: pub.stream_id }, { operator: "topic", operand: "moved" }]));
    // The moved message, then the notification bot's note that the topic was moved (Zulip's default).
    expect(inMoved.messages.map((x: any) => x.id)).toEqual([legacy.id, expect.any(Number)]);
    expect(inMoved.messages[1].content).toContain("moved");
    const notMoved = success(await narrowed([{ operator: "channel", operand: pub.stream_id }, { operator: "topic", operand: "moved", negated: true }]));
    expect(notMoved.messages.map((x: any) => x.id)).not.toContain(legacy.id);
    const searched = success(await narrowed([{ operator: "search", operand: "style" }]));
    expect(searched.messages.map((x: any) => x.id)).toContain(legacy.id);

    // Typing in a channel topic (typing.send needs a `to`; Zulip ignores it for channel typing).
    success(await m.typing.send({ type: "stream", stream_id: pub.stream_id, topic: "moved", op: "start", to: [] }));

    // Marking a whole narrow read through callEndpoint.
    const marked = success(await m.callEndpoint("/messages/flags/narrow", "POST", {
      anchor: "oldest", num_before: 0, num_after: 1000, narrow: JSON.stringify([{ operator: "channel", operand: pub.stream_id }]), op: "add", flag: "read",
    }));
    expect(marked).toMatchObject({ found_oldest: true, found_newest: true, processed_count: expect.any(Number) });

    // Only subscribed channels, GET parameters as text.
    const { streams } = success(await m.streams.retrieve({ include_public: false }));
    expect(streams.map((x: any) => x.stream_id)).toContain(pub.stream_id);

    // Removing another user's subscription (principals in the DELETE's query string).
    success(await z.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: "zulip-js principals" }]), principals: JSON.stringify([member2.user_id]) }));
    const removed = success(await z.users.me.subscriptions.remove({ subscriptions: JSON.stringify(["zulip-js principals"]), principals: JSON.stringify([member2.email]) }));
    expect(removed).toMatchObject({ removed: ["zulip-js principals"] });

    // Errors as the client sees them.
    expect(await m.streams.getStreamId("no such channel")).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Invalid channel name 'no such channel'" });
    expect(await m.messages.flags.add({ messages: [999_999_999], flag: "starred" })).toEqual({ result: "error", code: "BAD_REQUEST", msg: "Invalid message(s)" });
    success(await m.queues.deregister({ queue_id: q.queue_id }));
  });

  it("takes the optional parameters of fetching and registering as text, the way zulip-js sends them", async () => {
    const { member, member2 } = org.users;
    const [m, other] = await Promise.all([clientOf(member), clientOf(member2)]);
    const pub = org.channels.public;
    const { id } = success(await other.messages.send({ to: pub.name, type: "stream", topic: "options", content: "**unread** for Mara" }));

    const raw = success(await m.messages.getById({ message_id: id, apply_markdown: false }));
    expect(raw.message).toMatchObject({ id, content: "**unread** for Mara", content_type: "text/x-markdown" });
    const page = success(await m.messages.retrieve({ anchor: "first_unread", num_before: 0, num_after: 100, apply_markdown: false, client_gravatar: true, include_anchor: false }));
    expect(page.messages.every((x: any) => x.id !== page.anchor)).toBe(true);
    const around = success(await m.messages.retrieve({ anchor: id, num_before: 1, num_after: 1, narrow: [{ operator: "sender", operand: member2.user_id }] }));
    expect(around.messages.map((x: any) => x.id)).toContain(id);
    expect(around.messages.every((x: any) => x.sender_id === member2.user_id)).toBe(true);

    // Register's typed parameters as JSON text; the event arrives with the requested options.
    const q = success(await m.queues.register({
      event_types: ["message", "reaction"],
      all_public_streams: "true",
      slim_presence: "true",
      client_gravatar: "false",
      client_capabilities: JSON.stringify({ notification_settings_null: true, bulk_message_deletion: true }),
      fetch_event_types: JSON.stringify(["message", "subscription"]),
    }));
    expect(q).toMatchObject({ queue_id: expect.any(String), max_message_id: expect.any(Number), subscriptions: expect.any(Array) });

    // A reaction given by code and type, and its event.
    success(await other.reactions.add({ message_id: id, emoji_name: "heart", emoji_code: "2764", reaction_type: "unicode_emoji" }));
    expect(await eventMatching(m, q, (e) => e.type === "reaction")).toMatchObject({ op: "add", emoji_name: "heart", emoji_code: "2764", message_id: id });
    success(await other.reactions.remove({ message_id: id, emoji_code: "2764", reaction_type: "unicode_emoji" }));
    expect(await eventMatching(m, q, (e) => e.type === "reaction")).toMatchObject({ op: "remove", emoji_code: "2764" });
    success(await m.queues.deregister({ queue_id: q.queue_id }));
  });
});
