import { describe, expect, it } from "vitest";
import type { DemoOrg, DemoUser } from "@chat/testkit";
import { nextEvent, NO_RATE_LIMITS, ok, register, until, useDemoStack, type EventQueue } from "@chat/testkit/e2e";

/**
 * The notification bot's messages about channels through the whole stack (gateway, messaging,
 * the broker, events), as Zulip 9 sends them and a client sees them: the direct message to a
 * user someone else subscribed, a new channel's first message in "channel events", the
 * announcement of new channels, and the notices of a channel's changed settings. Absence is
 * shown by order: a realm's events reach each queue in commit order, so a queue whose next
 * message is a later marker never got an earlier one.
 */

let org: DemoOrg;
const { as } = useDemoStack(NO_RATE_LIMITS, ({ demo }) => ([org] = demo.orgs));

const CHANNEL_EVENTS = "channel events";
let seq = 0;
/** A channel name not used before in this file. */
const fresh = (stem: string) => `${stem} ${Date.now().toString(36)}${++seq}`;

/** A queue of message events with raw Markdown content (register's apply_markdown is false). */
const messageQueue = (user: DemoUser): Promise<EventQueue> => register(as(user), { event_types: ["message"] });

/** The next message event's message and the reader's flags. */
async function nextMessage(q: EventQueue): Promise<{ message: any; flags: string[] }> {
  const event = await nextEvent(q);
  expect(event.type).toBe("message");
  return { message: event.message, flags: event.flags };
}

/** A marker direct message from the owner to `to`: the next message their queues get. */
async function marker(to: DemoUser): Promise<string> {
  const content = `marker ${++seq}`;
  ok(await as(org.users.owner).post("/messages", { type: "direct", to: JSON.stringify([to.user_id]), content }));
  return content;
}

async function subscribe(by: DemoUser, names: string[], params: Record<string, unknown> = {}) {
  return ok(await as(by).post("/users/me/subscriptions", { subscriptions: JSON.stringify(names.map((name) => ({ name }))), ...params }));
}

/** A channel's messages in a topic, oldest first, as GET /messages gives them (rendered, or raw with `raw`). */
async function topicMessages(user: DemoUser, streamId: number, topic: string, raw = false): Promise<any[]> {
  const narrow = JSON.stringify([
    { operator: "channel", operand: streamId },
    { operator: "topic", operand: topic },
  ]);
  return ok(await as(user).get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow, apply_markdown: !raw })).messages;
}

const mention = (u: DemoUser) => `@**${u.full_name}|${u.user_id}**`;
const silent = (u: DemoUser) => `@_**${u.full_name}|${u.user_id}**`;
const streamId = async (user: DemoUser, name: string): Promise<number> => ok(await as(user).get("/get_stream_id", { stream: name })).stream_id;

describe("the notification bot's messages about channels", () => {
  it("someone subscribed by another user gets a direct message; not the actor, nor a bot, nor for a channel just created", async () => {
    const { owner, member, bot } = org.users;
    const [garden, orchard, meadow, brandNew] = [fresh("garden"), fresh("orchard"), fresh("meadow"), fresh("new")];
    await subscribe(owner, [garden, orchard, meadow]);
    const [memberQ, ownerQ] = await Promise.all([messageQueue(member), messageQueue(owner)]);

    await subscribe(owner, [garden], { principals: JSON.stringify([owner.user_id, member.user_id, bot.user_id]) });
    const one = await nextMessage(memberQ);
    expect(one.message).toMatchObject({
      type: "private",
      sender_full_name: "Notification Bot",
      content: `${mention(owner)} subscribed you to the channel #**${garden}**.`,
      display_recipient: expect.arrayContaining([expect.objectContaining({ id: member.user_id })]),
    });
    expect(one.flags).toEqual([]);
    // As GET /messages gives it: the acting user mentioned, the channel linked.
    const gardenId = await streamId(member, garden);
    const dm = JSON.stringify([{ operator: "dm", operand: [one.message.sender_id] }]);
    const [rendered] = ok(await as(member).get("/messages", { anchor: one.message.id, num_before: 0, num_after: 0, narrow: dm })).messages;
    expect(rendered.content).toContain(`<span class="user-mention" data-user-id="${owner.user_id}">@${owner.full_name}</span>`);
    expect(rendered.content).toContain(`<a class="stream" data-stream-id="${gardenId}"`);
    expect(rendered.flags).toEqual([]);

    // Several channels, sorted by name; a channel the request creates is left out of the list.
    await subscribe(owner, [orchard, meadow, brandNew], { principals: JSON.stringify([owner.user_id, member.user_id]) });
    const several = await nextMessage(memberQ);
    const [first, second] = [meadow, orchard].sort();
    expect(several.message.content).toBe(`${mention(owner)} subscribed you to the following channels:\n\n* #**${first}**\n* #**${second}**`);
    // Then the new channel's own first message, nothing else for the member.
    expect((await nextMessage(memberQ)).message).toMatchObject({ display_recipient: brandNew, subject: CHANNEL_EVENTS });

    // The actor is told nothing of it: their next message is the new channel's first.
    expect((await nextMessage(ownerQ)).message).toMatchObject({ display_recipient: brandNew, subject: CHANNEL_EVENTS });
    // A bot gets no direct message: nothing from the notification bot among its messages.
    const botDms = ok(await as(bot).get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: dm })).messages;
    expect(botDms).toEqual([]);
  });

  it("subscribing oneself sends nothing", async () => {
    const { owner, member2 } = org.users;
    const lounge = fresh("lounge");
    await subscribe(owner, [lounge]);
    const q = await messageQueue(member2);
    await subscribe(member2, [lounge]);
    await subscribe(member2, [lounge], { principals: JSON.stringify([member2.user_id]) });
    const content = await marker(member2);
    expect((await nextMessage(q)).message.content).toBe(content);
  });

  it("a new channel's first message, in its 'channel events' topic: read for its creator, unread for the others", async () => {
    const { owner, member, admin } = org.users;
    const sunroom = fresh("sunroom");
    const [memberQ, ownerQ] = await Promise.all([messageQueue(member), messageQueue(owner)]);
    ok(
      await as(owner).post("/users/me/subscriptions", {
        subscriptions: JSON.stringify([{ name: sunroom, description: "Plants *and* light" }]),
        principals: JSON.stringify([owner.user_id, member.user_id]),
      }),
    );
    const text = `**Public** channel created by ${silent(owner)}. **Description:**\n\`\`\`\` quote\nPlants *and* light\n\`\`\`\``;
    const toMember = await nextMessage(memberQ);
    expect(toMember.message).toMatchObject({ type: "stream", display_recipient: sunroom, subject: CHANNEL_EVENTS, sender_full_name: "Notification Bot", content: text });
    expect(toMember.flags).toEqual([]);
    expect((await nextMessage(ownerQ)).flags).toEqual(["read"]);
    const [rendered] = await topicMessages(member, toMember.message.stream_id, CHANNEL_EVENTS);
    expect(rendered.content).toContain(`<span class="user-mention silent" data-user-id="${owner.user_id}">${owner.full_name}</span>`);
    expect(rendered.content).toContain("<blockquote>\n<p>Plants <em>and</em> light</p>\n</blockquote>");

    // A private channel with protected history and no description.
    const vault = fresh("vault");
    ok(await as(admin).post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: vault }]), invite_only: true, principals: JSON.stringify([admin.user_id, member.user_id]) }));
    expect((await nextMessage(memberQ)).message).toMatchObject({
      display_recipient: vault,
      subject: CHANNEL_EVENTS,
      content: `**Private, protected history** channel created by ${silent(admin)}. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``,
    });
  });

  it("with announce, new channels are announced in the organization's announcement channel ('new channels')", async () => {
    const { owner, admin, member } = org.users;
    const square = org.channels.public.stream_id;
    ok(await as(owner).patch("/realm", { new_stream_announcements_stream_id: square }));
    // Messaging reads the organization's settings again once accounts' change reaches it.
    const announced = await until("the announcement", async () => {
      const name = fresh("studio");
      await subscribe(admin, [name], { announce: true });
      const last = (await topicMessages(member, square, "new channels", true)).at(-1);
      return last?.content === `${silent(admin)} created a new channel #**${name}**.` ? last : null;
    });
    expect(announced).toMatchObject({ sender_full_name: "Notification Bot", subject: "new channels", display_recipient: org.channels.public.name });

    const q = await messageQueue(member);
    const [a, b] = [fresh("kiln"), fresh("loom")];
    await subscribe(admin, [a, b], { announce: true });
    expect((await nextMessage(q)).message).toMatchObject({
      display_recipient: org.channels.public.name,
      subject: "new channels",
      content: `${silent(admin)} created the following channels: #**${a}**, #**${b}**.`,
    });
    // Without announce, nothing in the announcement channel.
    await subscribe(admin, [fresh("unannounced")]);
    const content = await marker(member);
    expect((await nextMessage(q)).message.content).toBe(content);
    ok(await as(owner).patch("/realm", { new_stream_announcements_stream_id: -1 }));
  });

  it("a channel's changed settings are told in its 'channel events' topic: description, privacy, posting policy, name; retention", async () => {
    const { owner, admin, member } = org.users;
    const name = fresh("atelier");
    ok(
      await as(admin).post("/users/me/subscriptions", {
        subscriptions: JSON.stringify([{ name, description: "Old words" }]),
        principals: JSON.stringify([admin.user_id, member.user_id]),
      }),
    );
    const id = await streamId(member, name);
    const q = await messageQueue(member);
    const renamed = fresh("workshop");
    ok(await as(owner).patch(`/streams/${id}`, { description: "New words", is_private: true, stream_post_policy: 2, new_name: renamed }));
    const notices = [await nextMessage(q), await nextMessage(q), await nextMessage(q), await nextMessage(q)];
    for (const n of notices) {
      expect(n.message).toMatchObject({ stream_id: id, display_recipient: renamed, subject: CHANNEL_EVENTS, sender_full_name: "Notification Bot" });
      expect(n.flags).toEqual([]);
    }
    expect(notices.map((n) => n.message.content)).toEqual([
      `${silent(owner)} changed the description for this channel.\n\n* **Old description:**\n\`\`\`\` quote\nOld words\n\`\`\`\`\n* **New description:**\n\`\`\`\` quote\nNew words\n\`\`\`\``,
      `${silent(owner)} changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, protected history**.`,
      `${silent(owner)} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n* **Old**: All channel members can post\n* **New**: Only organization administrators can post`,
      `${silent(owner)} renamed channel **${name}** to **${renamed}**.`,
    ]);
    // A retention change (owners only); the channel followed the organization, which keeps messages forever.
    ok(await as(owner).patch(`/streams/${id}`, { message_retention_days: "30" }));
    expect((await nextMessage(q)).message.content).toBe(
      `${silent(owner)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
        "* **Old retention period**: Forever\n* **New retention period**: 30 days\n\n" +
        "Messages in this channel will now be automatically deleted 30 days after they are sent.",
    );
    // The channel's history shows them after its first message.
    const history = await topicMessages(member, id, CHANNEL_EVENTS, true);
    expect(history.map((m) => m.content.split("\n")[0])).toEqual([
      `**Public** channel created by ${silent(admin)}. **Description:**`,
      ...notices.map((n) => n.message.content.split("\n")[0]),
      `${silent(owner)} has changed the [message retention period](/help/message-retention-policy) for this channel:`,
    ]);
  });
});
