import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstUnreadQuery, newestInNarrowQuery } from "../src/queries/messages";
import { canSeeThroughMessages } from "../src/queries/attachments";
import { resolveNarrow } from "../src/queries/narrow";
import { viewerOf } from "../src/queries/streams";
import { selectMaxMessageId } from "../src/store/messages";
import { markSendersMessagesRead } from "../src/store/muted-users";
import { selectStreamSendContext } from "../src/store/send-context";
import { markStreamMessagesReadForEveryone, selectRecentTraffic, selectStreamTopics } from "../src/store/streams";
import { markChannelsRead, selectRecentDirectConversations } from "../src/store/usermessages";
import { hasRowsInTopic, markUnreadRowsRead } from "../src/store/usermessages-read";
import { PlanProbe, type PlannedStatement as Planned } from "@chat/testkit";
import { startMessaging, type Messaging, type Org } from "./helpers";

/**
 * Statements whose cost must follow what they touch, not the size of the tables around them,
 * when PostgreSQL plans them without statistics (a new deployment, or a server without
 * autovacuum, like the test machine's). Each statement is prepared on nearly empty tables, the
 * tables are filled, and the statement is run again (in a transaction that is rolled back) with
 * the pages or rows it touched counted (PlanProbe in the testkit says how it is planned).
 */
let m: Messaging;
let org: Org;
let client: pg.PoolClient;
let probe: PlanProbe;
let streamId: number;
/** Messages in the channel; half of them in "busy topic", the rest in 25 others. */
const MESSAGES = 6000;

beforeAll(async () => {
  m = await startMessaging();
  org = await m.createOrg();
  streamId = await m.createStream(org.owner, "busy channel", [org.owner, org.member]);
  await m.send(org.member, { type: "stream", to: streamId, topic: "first", content: "hello" });
  client = await m.deps.pool.connect();
  probe = new PlanProbe(client);
});
afterAll(async () => {
  client?.release();
  await m?.close();
});

describe("plans made on small tables, run on large ones", () => {
  const sendReads: Planned[] = [];
  const reads: Planned[] = [];
  let topics: Planned;
  let traffic: Planned;
  let firstUnreadInChannel: Planned;
  const ownRows: Planned[] = [];
  let maxMessageId: Planned;
  let attachmentAccess: Planned;

  beforeAll(async () => {
    const realm = org.realmId;
    const owner = org.owner.user_id;
    // The channel by id and by name are two statements; a topic with messages and a new one.
    for (const stream of [streamId, "busy channel"]) {
      for (const topic of ["busy topic", "new topic"]) {
        sendReads.push(await probe.plan(`send read, channel by ${typeof stream}, ${topic}`, (db) => selectStreamSendContext(db, realm, org.member.user_id, stream, topic)));
      }
    }
    reads.push(await probe.plan("mark a topic read", (db) => markUnreadRowsRead(db, realm, owner, { streamId, topic: "busy topic" })));
    reads.push(await probe.plan("mark a channel read", (db) => markUnreadRowsRead(db, realm, owner, { streamId })));
    reads.push(await probe.plan("mark channels read", (db) => markChannelsRead(db, realm, owner, [streamId])));
    reads.push(await probe.plan("mark a muted sender's messages read", (db) => markSendersMessagesRead(db, realm, owner, [org.member.user_id])));
    reads.push(await probe.plan("whether the user has rows in a topic", (db) => hasRowsInTopic(db, realm, owner, streamId, "busy topic")));
    reads.push(await probe.plan("mark a deleted channel read for everyone", (db) => markStreamMessagesReadForEveryone(db, realm, streamId)));
    topics = await probe.plan("a channel's topics", (db) => selectStreamTopics(db, realm, streamId));
    // The member read every message they have (the member's rows are inserted read below).
    const memberView = viewerOf(org.member.as);
    const channelNarrow = await resolveNarrow(m.deps, memberView, [{ operator: "channel", operand: streamId, negated: false }]);
    const firstUnread = firstUnreadQuery(memberView, channelNarrow);
    firstUnreadInChannel = await probe.plan("the first unread message of a channel", (db: { query: (t: string, v: unknown[]) => Promise<unknown> }) =>
      db.query(firstUnread.text, firstUnread.params),
    );
    // The owner will hold 6,000 unread channel messages, and no direct, starred, mentioning or alerting one.
    const ownerView = viewerOf(org.owner.as);
    ownRows.push(await probe.plan("register's recent direct conversations", (db) => selectRecentDirectConversations(db, realm, owner, 1000)));
    maxMessageId = await probe.plan("register's max_message_id", (db) => selectMaxMessageId(db, realm, owner));
    for (const what of ["dm", "starred", "unread", "mentioned", "alerted"] as const) {
      const terms = await resolveNarrow(m.deps, ownerView, [{ operator: "is", operand: what, negated: false }]);
      const q = newestInNarrowQuery(ownerView, terms, 50);
      ownRows.push(await probe.plan(`the newest 50 of is:${what}`, (db: { query: (t: string, v: unknown[]) => Promise<unknown> }) => db.query(q.text, q.params)));
    }
    // An upload linked from the channel's first message, asked about by a guest who cannot see it.
    const { rows: first } = await client.query("SELECT min(id) AS id FROM messages WHERE stream_id = $1", [streamId]);
    const { rows: upload } = await client.query(
      "INSERT INTO attachments (realm_id, owner_id, path_id, file_name, content_type, size, create_time) VALUES ($1, $2, $3, 'a.txt', 'text/plain', 1, now()) RETURNING id",
      [realm, org.member.user_id, `${realm}/ab/plans/a.txt`],
    );
    await client.query("INSERT INTO attachment_messages (realm_id, attachment_id, message_id, date_sent) VALUES ($1, $2, $3, now())", [realm, upload[0].id, first[0].id]);
    attachmentAccess = await probe.plan("whether a guest sees an upload through its messages", (db) =>
      canSeeThroughMessages(db, { realmId: realm, userId: org.guest.user_id, guest: true }, Number(upload[0].id)),
    );
    // Nothing was sent in the hour to come: a count that reads only the window reads nothing.
    traffic = await probe.plan("a channel's recent traffic", (db) => selectRecentTraffic(db, realm, [streamId], new Date(Date.now() + 3_600_000)));

    const { rows } = await client.query("SELECT id FROM recipients WHERE stream_id = $1", [streamId]);
    const { rows: ids } = await client.query(
      `INSERT INTO messages (realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, sending_client, date_sent, search_tsv)
       SELECT $1, $2, $3, $4, CASE WHEN i % 2 = 0 THEN 'busy topic' ELSE 'other ' || (i % 25) END, 'm' || i, '<p>m' || i || '</p>', 'test', now(), ''
         FROM generate_series(1, ${MESSAGES}) AS i
       RETURNING id`,
      [realm, org.member.user_id, rows[0].id, streamId],
    );
    // All unread for the owner; the member sent them.
    await client.query("INSERT INTO usermessages (realm_id, user_id, message_id, flags) SELECT $1, $2, unnest($3::bigint[]), 0", [realm, owner, ids.map((r) => r.id)]);
    await client.query("INSERT INTO usermessages (realm_id, user_id, message_id, flags) SELECT $1, $2, unnest($3::bigint[]), 1", [realm, org.member.user_id, ids.map((r) => r.id)]);
    // Other users' topic settings, in this channel (the deployment's would be everywhere).
    await client.query(
      `INSERT INTO user_topics (realm_id, user_id, stream_id, topic_name, visibility_policy, last_updated)
       SELECT $1, 1000000 + i, $2, 'someone''s topic ' || i, 3, now() FROM generate_series(1, 20000) AS i`,
      [realm, streamId],
    );
  });

  it("a channel send's read touches a few pages, whatever the organization's messages and the topic settings", async () => {
    for (const p of sendReads) expect.soft(await probe.buffersOf(p), p.label).toBeLessThan(100);
  });

  it("marking messages read costs a few pages per unread message, not per unread message and message of the topic", async () => {
    // Each of the owner's unread rows: its message looked up by key, and for those in scope the
    // row rewritten with its index entries (about 11 pages a row here). A plan that rescans the
    // channel's or topic's messages for every unread row touched 600,000 pages and more.
    for (const p of reads) expect.soft(await probe.buffersOf(p), p.label).toBeLessThan(MESSAGES * 20);
  });

  it("a channel's topic list reads a few rows per topic, not every message of the channel", async () => {
    // 27 topics ("first", "busy topic" and 25 others) among 6,001 messages.
    expect(await probe.rowsReadFrom(topics, "messages")).toBeLessThan(27 * 4);
    const listed = await selectStreamTopics(m.deps.pool, org.realmId, streamId);
    expect(listed).toHaveLength(27);
    expect(listed[0]).toEqual({ name: "busy topic", maxId: expect.any(Number) });
    expect(listed.at(-1)?.name).toBe("first");
  });

  it("a channel's recent traffic reads the messages of the window, not the channel's history", async () => {
    // A binary search over the message ids (a few dozen rows), then the window's messages: none.
    expect(await probe.rowsReadFrom(traffic, "messages")).toBeLessThan(100);
  });

  it("finding the first unread message of a channel reads the viewer's unread rows, not the channel's messages", async () => {
    // The member has read all 6,000: nothing to walk.
    expect(await probe.rowsReadFrom(firstUnreadInChannel, "messages")).toBeLessThan(10);
    expect(await probe.rowsReadFrom(firstUnreadInChannel, "usermessages")).toBeLessThan(10);
  });

  it("is: narrows and the recent conversations read the viewer's matching rows, not all of them", async () => {
    // 50 rows at most for is:unread; none exist for the others.
    for (const p of ownRows) expect.soft(await probe.rowsReadFrom(p, "usermessages"), p.label).toBeLessThan(60);
  });

  it("register's newest message id reads one of the viewer's rows, not all of them", async () => {
    expect(await probe.rowsReadFrom(maxMessageId, "usermessages")).toBeLessThan(5);
  });

  it("marking messages read costs as much under the plan made when the tables were small", async () => {
    // A prepared statement's plan for any values, which PostgreSQL keeps using once it costs no
    // more than those made for each call's values, until the tables' statistics change. With
    // the read bit as a parameter it could not use the unread index, and its per-row lookup of
    // the message went through (realm_id, sender_id, id), reading the organization's entries for
    // every row: 216,000-242,000 pages here. Last in this block: the rolled-back updates leave
    // the tables larger, which changes the plans the tests above measure.
    for (const p of reads) expect.soft(await probe.buffersOf(p, { generic: true }), p.label).toBeLessThan(MESSAGES * 20);
  });

  it("a download's permission check reads the messages linking the upload, not the organization's", async () => {
    // One linking message. Written as joins, the plan made on small tables walked the
    // organization's messages by (realm_id, sender_id, id): 135 pages here, growing with them.
    expect(await probe.buffersOf(attachmentAccess)).toBeLessThan(50);
    expect(await probe.buffersOf(attachmentAccess, { generic: true })).toBeLessThan(50);
  });

  it("the statements still find what they are for", async () => {
    const { rows: newest } = await client.query("SELECT max(message_id)::int AS id FROM usermessages WHERE user_id = $1", [org.owner.user_id]);
    expect(await selectMaxMessageId(m.deps.pool, org.realmId, org.owner.user_id)).toBe(newest[0].id);
    expect(await selectMaxMessageId(m.deps.pool, org.realmId, org.guest.user_id)).toBe(-1);
    expect(await selectMaxMessageId(m.deps.pool, org.realmId + 1000, org.owner.user_id)).toBe(-1);
    await client.query(
      "INSERT INTO user_topics (realm_id, user_id, stream_id, topic_name, visibility_policy, last_updated) VALUES ($1, $2, $3, 'Busy Topic', 3, now())",
      [org.realmId, org.owner.user_id, streamId],
    );
    const busy = await selectStreamSendContext(m.deps.pool, org.realmId, org.member.user_id, streamId, "BUSY topic");
    expect(busy.topic?.existed).toBe(true);
    expect(busy.topic?.policies.get(org.owner.user_id)).toBe(3);
    const fresh = await selectStreamSendContext(m.deps.pool, org.realmId, org.member.user_id, "busy channel", "never used");
    expect(fresh.topic).toEqual({ existed: false, policies: new Map() });

    const { rows: upload } = await client.query("SELECT attachment_id AS id FROM attachment_messages WHERE realm_id = $1", [org.realmId]);
    const sees = (who: { user_id: number }, guest: boolean) => canSeeThroughMessages(m.deps.pool, { realmId: org.realmId, userId: who.user_id, guest }, Number(upload[0].id));
    expect(await sees(org.owner, false)).toBe(true);
    expect(await sees(org.guest, true)).toBe(false);
    // The channel is public: a member who never subscribed sees it too; a guest does not.
    expect(await sees(org.admin, false)).toBe(true);
    expect(await canSeeThroughMessages(m.deps.pool, { realmId: org.realmId + 1000, userId: org.owner.user_id, guest: false }, Number(upload[0].id))).toBe(false);

    expect(await hasRowsInTopic(m.deps.pool, org.realmId, org.owner.user_id, streamId, "Busy Topic")).toBe(true);
    expect(await hasRowsInTopic(m.deps.pool, org.realmId, org.guest.user_id, streamId, "busy topic")).toBe(false);
    await client.query("BEGIN");
    try {
      const topic = await markUnreadRowsRead(client, org.realmId, org.owner.user_id, { streamId, topic: "BUSY TOPIC" });
      expect(topic).toHaveLength(MESSAGES / 2);
      const rest = await markChannelsRead(client, org.realmId, org.owner.user_id, [streamId]);
      expect(rest.length).toBeGreaterThanOrEqual(MESSAGES / 2);
      expect(rest.filter((id) => topic.includes(id))).toEqual([]);
      expect(await markUnreadRowsRead(client, org.realmId, org.owner.user_id, { streamId })).toEqual([]);
    } finally {
      await client.query("ROLLBACK");
    }
    await client.query("BEGIN");
    try {
      const bySender = await markSendersMessagesRead(client, org.realmId, org.owner.user_id, [org.member.user_id]);
      expect(bySender.length).toBeGreaterThanOrEqual(MESSAGES);
      expect(await markSendersMessagesRead(client, org.realmId, org.owner.user_id, [org.admin.user_id])).toEqual([]);
    } finally {
      await client.query("ROLLBACK");
    }
  });
});
