import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ClientNotice } from "@chat/contracts";
import { acceptsEvent, eventsForQueue, type QueueDescriptor } from "./queue-filter";

const md5 = (s: string) => createHash("md5").update(s).digest("hex");

const queue = (over: Partial<QueueDescriptor> = {}): QueueDescriptor => ({
  id: "q1",
  userId: 5,
  realmId: 1,
  eventTypes: null,
  narrow: [],
  allPublicStreams: false,
  capabilities: {},
  applyMarkdown: true,
  clientGravatar: true,
  includeSubscribers: false,
  slimPresence: false,
  lifespanSecs: 600,
  ...over,
});

const messageNotice = (extra: Partial<ClientNotice> = {}): ClientNotice => ({
  event: {
    type: "message",
    message: { id: 1, sender_id: 5, sender_email: "a@b.c", type: "private", content: "<p>x</p>", content_type: "text/html", avatar_url: "u" },
    markdown_content: "x",
  },
  users: [5],
  ...extra,
});

describe("eventsForQueue", () => {
  it("puts the receiving user's flags on the event, [] for messages without them", () => {
    expect(eventsForQueue(queue(), messageNotice(), ["read"])[0].flags).toEqual(["read"]);
    expect(eventsForQueue(queue(), messageNotice(), undefined)[0].flags).toEqual([]);
    expect(eventsForQueue(queue(), { event: { type: "custom" }, users: [5] }, undefined)[0]).toEqual({ type: "custom" });
  });

  it("never lets markdown_content through", () => {
    for (const applyMarkdown of [true, false]) {
      const [e] = eventsForQueue(queue({ applyMarkdown }), messageNotice(), []);
      expect(e).not.toHaveProperty("markdown_content");
      expect((e.message as any).content).toBe(applyMarkdown ? "<p>x</p>" : "x");
    }
  });

  it("avatar_url: the producer's null only for client_gravatar queues; the others get sender_avatar_url, which never leaks", () => {
    const url = "https://secure.gravatar.com/avatar/0123456789abcdef0123456789abcdef?d=identicon&version=4";
    const notice = (avatar_url: string | null, extra: Record<string, unknown>) => {
      const n = messageNotice();
      return { ...n, event: { ...n.event, message: { ...(n.event.message as object), avatar_url }, ...extra } };
    };
    const form = (clientGravatar: boolean, n: ClientNotice) => eventsForQueue(queue({ clientGravatar }), n, [])[0];
    expect((form(true, notice(null, { sender_avatar_url: url })).message as any).avatar_url).toBeNull();
    expect((form(false, notice(null, { sender_avatar_url: url })).message as any).avatar_url).toBe(url);
    for (const clientGravatar of [true, false]) {
      expect(form(clientGravatar, notice(null, { sender_avatar_url: url }))).not.toHaveProperty("sender_avatar_url");
      // A sender the client cannot compute (uploaded, hidden email): the URL for every queue.
      expect((form(clientGravatar, notice("/user_avatars/1/x.png?version=2", {})).message as any).avatar_url).toBe("/user_avatars/1/x.png?version=2");
    }
    // A previous release's messaging gave no URL: the sender email's Gravatar, version 1, as it did.
    expect((form(false, notice(null, {})).message as any).avatar_url).toBe(`https://secure.gravatar.com/avatar/${md5("a@b.c")}?d=identicon&version=1`);
  });

  it("update_message keeps both content forms", () => {
    const notice: ClientNotice = { event: { type: "update_message", content: "<p>y</p>", markdown_content: "y", message_id: 1 }, users: [5] };
    expect(eventsForQueue(queue(), notice, undefined)).toEqual([
      { type: "update_message", content: "y", rendered_content: "<p>y</p>", message_id: 1 },
    ]);
  });

  it("local echo needs the named queue and the sender's own queue", () => {
    const sq = { queue_id: "q1", local_id: "1.5" };
    expect(eventsForQueue(queue(), messageNotice({ sender_queue: sq }), [])[0]).toMatchObject({ local_id: "1.5", local_message_id: "1.5" });
    expect(eventsForQueue(queue({ id: "q2" }), messageNotice({ sender_queue: sq }), [])[0]).not.toHaveProperty("local_id");
    expect(eventsForQueue(queue({ userId: 6 }), messageNotice({ sender_queue: sq }), [])[0]).not.toHaveProperty("local_id");
  });

  it("splits or keeps deletions by capability", () => {
    const notice: ClientNotice = { event: { type: "delete_message", message_type: "private", message_ids: [1, 2] }, users: [5] };
    expect(eventsForQueue(queue(), notice, undefined)).toHaveLength(2);
    expect(eventsForQueue(queue({ capabilities: { bulk_message_deletion: true } }), notice, undefined)).toHaveLength(1);
  });

  it("keeps channel subscribers only for queues that asked for them", () => {
    const sub = { stream_id: 3, name: "a", subscribers: [5, 6] };
    const add: ClientNotice = { event: { type: "subscription", op: "add", subscriptions: [sub] }, users: [5] };
    const create: ClientNotice = { event: { type: "stream", op: "create", streams: [sub] }, users: [5] };
    for (const notice of [add, create]) {
      const key = notice.event.type === "stream" ? "streams" : "subscriptions";
      expect((eventsForQueue(queue(), notice, undefined)[0][key] as any[])[0]).toEqual({ stream_id: 3, name: "a" });
      expect((eventsForQueue(queue({ includeSubscribers: true }), notice, undefined)[0][key] as any[])[0]).toEqual(sub);
    }
    // The notice itself is shared by every queue and must stay whole.
    expect(sub.subscribers).toEqual([5, 6]);
    const remove: ClientNotice = { event: { type: "subscription", op: "remove", subscriptions: [{ stream_id: 3, name: "a" }] }, users: [5] };
    expect(eventsForQueue(queue(), remove, undefined)[0]).toEqual(remove.event);
  });
});

describe("presence events", () => {
  it("keep the deprecated email only for queues registered without slim_presence", () => {
    const website = { client: "website", status: "active", timestamp: 1700000000, pushable: false };
    const notice: ClientNotice = {
      event: { type: "presence", user_id: 6, email: "a@b.c", server_timestamp: 1700000000.5, presence: { website } },
      users: [5],
    };
    expect(eventsForQueue(queue(), notice, undefined)).toEqual([notice.event]);
    const { email: _email, ...slim } = notice.event;
    expect(eventsForQueue(queue({ slimPresence: true }), notice, undefined)).toEqual([slim]);
    expect(notice.event.email).toBe("a@b.c");
  });
});

describe("user group deactivation", () => {
  const deactivated: ClientNotice = { event: { type: "user_group", op: "update", group_id: 9, data: { deactivated: true } }, users: [5] };
  const capable = queue({ capabilities: { include_deactivated_groups: true } });

  it("is an update for clients that list deactivated groups and a remove for the others", () => {
    expect(eventsForQueue(capable, deactivated, undefined)).toEqual([deactivated.event]);
    expect(eventsForQueue(queue(), deactivated, undefined)).toEqual([{ type: "user_group", op: "remove", group_id: 9 }]);
    expect(eventsForQueue(queue({ capabilities: { include_deactivated_groups: false } }), deactivated, undefined)).toEqual([{ type: "user_group", op: "remove", group_id: 9 }]);
    const renamed: ClientNotice = { event: { type: "user_group", op: "update", group_id: 9, data: { name: "x" } }, users: [5] };
    expect(eventsForQueue(queue(), renamed, undefined)).toEqual([renamed.event]);
  });

  it("a notice for one capability reaches only queues registered with it", () => {
    const renamed: ClientNotice = { event: { type: "user_group", op: "update", group_id: 9, data: { name: "x" } }, users: [5], capability: "include_deactivated_groups" };
    expect(eventsForQueue(capable, renamed, undefined)).toEqual([renamed.event]);
    expect(eventsForQueue(queue(), renamed, undefined)).toEqual([]);
  });

  it("a notice for clients without a capability skips the queues registered with it", () => {
    const standIn: ClientNotice = { event: { type: "realm_user", op: "add", person: { user_id: 9 } }, users: [5], without_capability: "user_list_incomplete" };
    expect(eventsForQueue(queue(), standIn, undefined)).toEqual([standIn.event]);
    expect(eventsForQueue(queue({ capabilities: { user_list_incomplete: false } }), standIn, undefined)).toEqual([standIn.event]);
    expect(eventsForQueue(queue({ capabilities: { user_list_incomplete: true } }), standIn, undefined)).toEqual([]);
  });
});

describe("acceptsEvent", () => {
  it("lets heartbeats and restarts through unless types exclude restart", () => {
    expect(acceptsEvent(queue({ eventTypes: ["message"] }), { type: "restart" })).toBe(false);
    expect(acceptsEvent(queue(), { type: "restart" })).toBe(true);
  });
});
