import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMetrics, runDemo, startMailCatcher, startStack, STACK_SERVICES, type ApiClient, type MailCatcher, type Stack, type StackService } from "@chat/testkit";
import { until } from "@chat/testkit/e2e";
import { fromRegister, snapshot } from "./lib/client-state";
import { outcomeOf } from "./lib/load";
import { QueueReader, registerParams } from "./lib/queue-reader";
import { spreadClient, startRoundRobinProxy, type RoundRobinProxy } from "./lib/round-robin";
import { fetchTopic } from "./lib/verify";
import { CLIENTS, runWriter, type Role, type Step, type Task } from "./lib/writers";
import { compareEvents, LOAD_MESSAGE_PREFIX, Writes, type WriteSpec } from "./lib/writes";
import { SMALL_POOLS } from "../security/lib/pools";

/**
 * The stack as docs/scaling.md runs it on Kubernetes: two replicas of every service, each
 * service's replicas behind a round-robin TCP proxy (what a Kubernetes Service does), every
 * service and the clients talking to the proxies only. Clients open a connection per request,
 * so one client's consecutive long polls reach different gateways, and the gateways' HTTP/2
 * connections to the events proxy land on both events replicas.
 *
 * Two phases of a mixed load (channel messages from three senders, direct messages, edits,
 * reactions, flags, subscriptions, scheduled messages falling due, long polls by six clients),
 * the second with one replica of each service killed (SIGKILL) in the middle of it and not
 * restarted. After each:
 * - every acknowledged send is in PostgreSQL once, and reached every queue it was owed exactly
 *   once, in order (event ids increasing, each sender's messages in send order);
 * - every acknowledged edit, reaction, flag and subscription change is what the API reads back,
 *   and each queue got its events exactly once; each client's state kept from its events equals
 *   a fresh register;
 * - the jobs that must act once per organization did so once: each scheduled message delivered
 *   once (the scheduler on both replicas), each message expired by retention deleted with one
 *   event per queue, each missed direct message mailed once and each user's weekly digest mailed
 *   once (messaging's periodic jobs on both replicas), and the outboxes of every schema emptied
 *   with no event twice (the relays on both replicas).
 */

const REPLICAS = 2;
const HEARTBEAT_SECONDS = 4;
const REQUEST_TIMEOUT_MS = 15_000;
const POLL_TIMEOUT_MS = REQUEST_TIMEOUT_MS + HEARTBEAT_SECONDS * 1000 + 3000;
const SEND_PAUSE_MS = 80;
const WRITE_PAUSE_MS = 60;
const SCHEDULE_AHEAD_SECONDS = 2;
/** How long each phase's load runs. */
const LOAD_MS = 7_000;
/** The missed-message batching period of the user who gets direct messages while away. */
const BATCH_SECONDS = 1;

const EMOJI = ["smile", "heart", "tada", "rocket"];
const INTERNAL_URL_VARS: Record<Exclude<StackService, "gateway">, string> = {
  accounts: "ACCOUNTS_URL",
  messaging: "MESSAGING_URL",
  events: "EVENTS_URL",
  scheduler: "SCHEDULER_URL",
};

let stack: Stack;
let catcher: MailCatcher;
let db: pg.Pool;
/** The Service in front of each service's replicas; `gateway`'s is where clients connect. */
const lb = {} as Record<StackService, RoundRobinProxy>;
/** Every replica's URL, from the stack (filled when the first process spawns). */
let replicaUrls: Record<StackService, string[]> | null = null;
let realmId: number;
const ids = {} as Record<Role | "guest", number>;
const creds = {} as Record<Role | "guest", { email: string; api_key: string }>;
const as = {} as Record<Role | "guest", ApiClient>;
let loadChannel: number;
let retentionChannel: number;
let orgName: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ok(res: { status: number; body: any }, what: string): any {
  if (res.status !== 200 || res.body?.result !== "success") throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function streamId(name: string): Promise<number> {
  return ok(await as.owner.get("/get_stream_id", { stream: name }), `stream id of ${name}`).stream_id;
}

beforeAll(async () => {
  for (const s of STACK_SERVICES) lb[s] = await startRoundRobinProxy(() => replicaUrls![s]);
  catcher = await startMailCatcher();
  stack = await startStack({
    replicas: Object.fromEntries(STACK_SERVICES.map((s) => [s, REPLICAS])),
    env: {
      RATE_LIMIT_USER_MAX: "1000000",
      EVENTS_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
      EVENTS_HEARTBEAT_JITTER_SECONDS: "1",
      DELIVERY_INTERVAL_MS: "250",
      // Messaging's periodic jobs look every second, on both replicas.
      RETENTION_INTERVAL_SECONDS: "1",
      MISSED_MESSAGE_EMAIL_POLL_SECONDS: "1",
      DIGEST_EMAIL_POLL_SECONDS: "1",
      ...catcher.env,
      NOREPLY_EMAIL_ADDRESS: "noreply@chat.test",
      // What clients reach is the Service in front of the gateways.
      EXTERNAL_URL: lb.gateway.url,
      GATEWAY_URL: lb.gateway.url,
      ...SMALL_POOLS,
    },
    // Every service reaches the others through their Services.
    serviceEnv: Object.fromEntries(
      STACK_SERVICES.map((s) => [
        s,
        (_vars: Record<string, string>, instance: { replicaUrls: Record<StackService, string[]> }) => {
          replicaUrls ??= instance.replicaUrls;
          return Object.fromEntries(Object.entries(INTERNAL_URL_VARS).map(([svc, name]) => [name, lb[svc as StackService].url]));
        },
      ]),
    ),
  });
  const internal = Object.fromEntries(Object.entries(INTERNAL_URL_VARS).map(([svc, name]) => [name, lb[svc as StackService].url]));
  const demo = await runDemo({ vars: { ...stack.vars, ...internal }, baseUrl: lb.gateway.url }, { viaPnpm: false });
  const org = demo.orgs[0];
  realmId = org.id;
  orgName = org.name;
  for (const role of [...CLIENTS, "guest"] as const) {
    const u = org.users[role];
    ids[role] = u.user_id;
    creds[role] = u;
    as[role] = spreadClient(lb.gateway, u.email, u.api_key);
  }
  db = new pg.Pool({ connectionString: stack.env.databaseUrl, max: 2 });
  const everyone = CLIENTS.map((c) => ids[c]);
  ok(await as.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "scale load" }, { name: "scale retention" }], principals: everyone }), "channels");
  loadChannel = await streamId("scale load");
  retentionChannel = await streamId("scale retention");
  ok(await as.owner.patch(`/streams/${retentionChannel}`, { message_retention_days: 1 }), "retention");
  // The guest never polls: away, it is mailed the direct messages it gets, batched per second.
  ok(await as.guest.patch("/settings", { email_notifications_batching_period_seconds: BATCH_SECONDS }), "guest settings");
}, 240_000);

afterAll(async () => {
  await db?.end();
  await stack?.stop();
  await catcher?.close();
  await Promise.all(Object.values(lb).map((p) => p.close()));
}, 60_000);

// ---------------------------------------------------------------------------------------------
// Sends (channel and direct), tracked one by one for the order checks

interface Send {
  sender: Role;
  /** `channel`, or the other participant of a direct conversation. */
  to: "channel" | Role | "guest";
  seq: number;
  content: string;
  id: number | null;
  code: string;
}

/** Each phase's pools of objects its writers own. */
interface Pools {
  topic: string;
  editPool: number[];
  reactPool: number[];
  subChannels: Array<{ id: number; name: string }>;
  retention: number[];
}

async function preparePhase(phase: string, writes: Writes): Promise<Pools> {
  const topic = `${phase} pool`;
  // A queue that sees the preparation's last message: then its events have all been handed out,
  // and the phase's queues (registered next) get none of them (a queue registered while an
  // earlier change is still on its way may get its event although its state has the change).
  const probe = ok(await as.owner.post("/register", { event_types: ["message"] }), "register");
  const send = async (content: string) => ok(await as.member.post("/messages", { type: "stream", to: loadChannel, topic, content }), "send").id as number;
  const editPool: number[] = [];
  for (let i = 0; i < 3; i++) editPool.push(await send(`${phase} edit me ${i}`));
  const reactPool: number[] = [];
  for (let i = 0; i < 4; i++) reactPool.push(await send(`${phase} react to me ${i}`));
  const names = [1, 2, 3].map((i) => `${phase} sub ${i}`);
  ok(await as.owner.post("/users/me/subscriptions", { subscriptions: names.map((name) => ({ name })), principals: [ids.owner] }), "sub channels");
  const subChannels = await Promise.all(names.map(async (name) => ({ name, id: await streamId(name) })));
  // Messages that retention will expire during the phase; read by everyone, so that their
  // deletion changes no client's unread state.
  const retention: number[] = [];
  for (let i = 0; i < 4; i++) {
    retention.push(ok(await as.admin.post("/messages", { type: "stream", to: retentionChannel, topic: phase, content: `${phase} old ${i}` }), "send").id);
  }
  for (const c of CLIENTS) ok(await as[c].post("/messages/flags", { messages: retention, op: "add", flag: "read" }), "read");
  editPool.forEach((m, i) => writes.setInitial(`content:${m}`, `${phase} edit me ${i}`));
  for (const m of reactPool) {
    for (const e of EMOJI) writes.setInitial(`reaction:${m}:${e}`, "absent");
    for (const f of ["read", "starred"]) writes.setInitial(`flag:${f}:${m}`, "off");
  }
  for (const s of subChannels) writes.setInitial(`sub:${s.id}`, "out");
  const last = await send(`${phase} prepared`);
  let lastEventId = probe.last_event_id;
  await until("the preparation's events handed out", async () => {
    const res = await as.owner.get("/events", { queue_id: probe.queue_id, last_event_id: lastEventId });
    const events = ok(res, "poll").events as any[];
    lastEventId = Math.max(lastEventId, ...events.map((e) => e.id));
    return events.some((e) => e.type === "message" && e.message.id === last);
  }, { timeoutMs: 30_000, pollMs: 0 });
  await as.owner.delete("/events", { queue_id: probe.queue_id });
  return { topic, editPool, reactPool, subChannels, retention };
}

// ---------------------------------------------------------------------------------------------
// The writers (as in faults-mixed.test.ts: each owns its objects, so one object's writes are ordered)


/** The phase's writers, each with its pause between writes. */
function steps(phase: string, p: Pools, writes: Writes): Array<[Step, number]> {
  const edit: Step = (n) => {
    const m = p.editPool[n % p.editPool.length];
    const value = `${phase} edited #${n}`;
    return {
      actor: "member",
      spec: { kind: "edit content", object: `content:${m}`, value, events: [{ key: `content:${m}:${value}`, to: CLIENTS }] },
      call: (signal) => as.member.patch(`/messages/${m}`, { content: value }, { signal }),
    };
  };
  const reaction: Step = (n) => {
    const combo = Math.floor(n / 2);
    const m = p.reactPool[combo % p.reactPool.length];
    const emoji = EMOJI[Math.floor(combo / p.reactPool.length) % EMOJI.length];
    const op = n % 2 === 0 ? "add" : "remove";
    return {
      actor: "member2",
      spec: {
        kind: `reaction ${op}`,
        object: `reaction:${m}:${emoji}`,
        value: op === "add" ? "present" : "absent",
        events: [{ key: `reaction:${op}:${m}:${emoji}:${ids.member2}`, to: CLIENTS }],
      },
      call: (signal) => (op === "add" ? as.member2.post : as.member2.delete)(`/messages/${m}/reactions`, { emoji_name: emoji }, { signal }),
    };
  };
  const flag: Step = (n) => {
    const combo = Math.floor(n / 2);
    const m = p.reactPool[combo % p.reactPool.length];
    const f = Math.floor(combo / p.reactPool.length) % 2 === 0 ? "starred" : "read";
    const op = n % 2 === 0 ? "add" : "remove";
    return {
      actor: "owner",
      spec: {
        kind: `flag ${f} ${op}`,
        object: `flag:${f}:${m}`,
        value: op === "add" ? "on" : "off",
        events: [{ key: `flag:${op}:${f}:${m}`, to: ["owner"] }],
        dependsOnPrevious: true,
      },
      call: (signal) => as.owner.post("/messages/flags", { messages: [m], op, flag: f }, { signal }),
    };
  };
  const subscription: Step = (n) => {
    const s = p.subChannels[Math.floor(n / 2) % p.subChannels.length];
    const join = n % 2 === 0;
    const [op, peer] = join ? ["add", "peer_add"] : ["remove", "peer_remove"];
    return {
      actor: "member2",
      spec: {
        kind: join ? "subscribe" : "unsubscribe",
        object: `sub:${s.id}`,
        value: join ? "in" : "out",
        events: [
          { key: `sub:${op}:${s.id}`, to: ["member2"] },
          { key: `${peer}:${s.id}:${ids.member2}`, to: CLIENTS.filter((c) => c !== "member2") },
        ],
        changed: join ? (b) => Object.values(b.subscribed as Record<string, string[]>).flat().length > 0 : (b) => b.removed.length > 0,
      },
      call: (signal) =>
        join
          ? as.member2.post("/users/me/subscriptions", { subscriptions: [{ name: s.name }] }, { signal })
          : as.member2.delete("/users/me/subscriptions", { subscriptions: [s.name] }, { signal }),
    };
  };
  const schedule: Step = (n) => {
    const content = `${LOAD_MESSAGE_PREFIX}${phase}-${n}`;
    writes.setInitial(`scheduled:${content}`, "absent");
    return {
      actor: "moderator",
      spec: {
        kind: "schedule message",
        object: `scheduled:${content}`,
        value: "delivered",
        events: [
          { key: `scheduled:add:${content}`, to: ["moderator"] },
          { key: `message:${content}`, to: CLIENTS },
        ],
      },
      call: (signal) =>
        as.moderator.post(
          "/scheduled_messages",
          { type: "stream", to: loadChannel, topic: `${phase} scheduled`, content, scheduled_delivery_timestamp: Math.ceil(Date.now() / 1000) + SCHEDULE_AHEAD_SECONDS },
          { signal },
        ),
    };
  };
  return [
    [edit, WRITE_PAUSE_MS],
    [reaction, WRITE_PAUSE_MS],
    [flag, WRITE_PAUSE_MS],
    [subscription, WRITE_PAUSE_MS],
    [schedule, 500],
  ];
}

function sender(phase: string, sends: Send[], from: Role, to: Send["to"]): Task {
  let stopped = false;
  const task = (async () => {
    for (let seq = 1; !stopped; seq++) {
      const content = `[${phase} ${from} to ${to} ${seq}]`;
      const params =
        to === "channel"
          ? { type: "stream", to: loadChannel, topic: phase, content }
          : { type: "direct", to: JSON.stringify([ids[to]]), content };
      let res = null;
      let err: unknown;
      try {
        res = await as[from].post("/messages", params, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      } catch (e) {
        err = e;
      }
      const code = outcomeOf(res, err);
      sends.push({ sender: from, to, seq, content, id: code === "success" ? res!.body.id : null, code });
      await sleep(code === "success" ? SEND_PAUSE_MS : 150);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await task;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// What the servers hold

/** Rows of the messages table with these contents, per content (the database's own word). */
async function storedByContent(contents: string[]): Promise<Map<string, number[]>> {
  const { rows } = await db.query("SELECT id, content FROM messaging.messages WHERE realm_id = $1 AND content = ANY($2::text[])", [realmId, contents]);
  const out = new Map<string, number[]>();
  for (const r of rows) out.set(r.content, [...(out.get(r.content) ?? []), Number(r.id)]);
  return out;
}

/** Events not yet published, per schema (each relay's backlog). */
async function outboxBacklog(): Promise<Record<string, number>> {
  const { rows } = await db.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'outbox'");
  const out: Record<string, number> = {};
  for (const { table_schema } of rows) {
    out[table_schema] = (await db.query(`SELECT count(*)::int AS n FROM "${table_schema}".outbox`)).rows[0].n;
  }
  return out;
}

async function metricsOf(url: string) {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
  return parseMetrics(await res.text());
}

/** Long polls (`GET /events`) each events replica answered so far. */
async function pollsAnswered(url: string): Promise<number> {
  const samples = await metricsOf(url);
  return samples.filter((s) => s.name === "http_requests_total" && s.labels.method === "GET" && /\/events$/.test(s.labels.route ?? "")).reduce((a, s) => a + s.value, 0);
}

/** Client events this events replica handled from RabbitMQ (only the active consumer's grows). */
async function clientEventsHandled(url: string): Promise<number> {
  const samples = await metricsOf(url);
  return samples
    .filter((s) => s.name === "amqp_consumed_messages_total" && s.labels.outcome === "handled" && /events\.client$/.test(s.labels.queue ?? ""))
    .reduce((a, s) => a + s.value, 0);
}

/** The API's view of every object the writers changed. */
async function readBack(p: Pools, writes: Writes, phase: string): Promise<Map<string, string>> {
  const actual = new Map<string, string>();
  const byId = new Map((await fetchTopic(as.owner, loadChannel, p.topic)).map((m) => [m.id, m as any]));
  for (const id of p.editPool) actual.set(`content:${id}`, byId.get(id).content);
  // Reactions and flags as the owner reads them (the flags are the owner's).
  const full = ok(
    await as.owner.get("/messages", { anchor: "oldest", num_before: 0, num_after: 100, apply_markdown: false, narrow: [{ operator: "stream", operand: loadChannel }, { operator: "topic", operand: p.topic }] }),
    "pool",
  ).messages as any[];
  for (const m of full.filter((x) => p.reactPool.includes(x.id))) {
    for (const e of EMOJI) actual.set(`reaction:${m.id}:${e}`, m.reactions.some((r: any) => r.emoji_name === e && r.user_id === ids.member2) ? "present" : "absent");
    for (const f of ["read", "starred"]) actual.set(`flag:${f}:${m.id}`, m.flags.includes(f) ? "on" : "off");
  }
  const subs = ok(await as.member2.get("/users/me/subscriptions"), "subscriptions").subscriptions as any[];
  for (const s of p.subChannels) actual.set(`sub:${s.id}`, subs.some((x) => x.stream_id === s.id) ? "in" : "out");
  const scheduled = await fetchTopic(as.owner, loadChannel, `${phase} scheduled`);
  for (const r of writes.records.filter((x) => x.kind === "schedule message")) {
    const n = scheduled.filter((m) => `scheduled:${m.content}` === r.object).length;
    actual.set(r.object, n === 0 ? "absent" : n === 1 ? "delivered" : `delivered ${n} times`);
  }
  return actual;
}

// ---------------------------------------------------------------------------------------------
// One phase

interface PhaseResult {
  problems: Record<string, unknown>;
  report: Record<string, unknown>;
  /** Per reader: the gateway replica that answered each of its long polls, in order. */
  gatewaysPerPoll: number[][];
}

async function runPhase(phase: string, midway?: (notes: string[]) => Promise<void>): Promise<PhaseResult> {
  const writes = new Writes(REQUEST_TIMEOUT_MS);
  const pools = await preparePhase(phase, writes);
  const notes: string[] = [];

  // Six clients read their queues: one per role, the owner twice (two devices).
  const gatewaysPerPoll: number[][] = [];
  const readers = [...CLIENTS, "owner" as Role].map((c) => {
    const seen: number[] = [];
    gatewaysPerPoll.push(seen);
    const client = spreadClient(lb.gateway, creds[c].email, creds[c].api_key, (method, path, replica) => {
      if (method === "GET" && path === "/events" && replica !== undefined) seen.push(replica);
    });
    return new QueueReader(c, client, POLL_TIMEOUT_MS);
  });
  await Promise.all(readers.map((r) => r.register()));
  readers.forEach((r) => r.start());

  const sends: Send[] = [];
  const tasks: Task[] = [
    sender(phase, sends, "member", "channel"),
    sender(phase, sends, "member2", "channel"),
    sender(phase, sends, "moderator", "channel"),
    sender(phase, sends, "admin", "member"),
    sender(phase, sends, "member", "admin"),
    sender(phase, sends, "moderator", "guest"),
    sender(phase, sends, "owner", "guest"),
    ...steps(phase, pools, writes).map(([step, pauseMs]) => runWriter(writes, step, pauseMs)),
  ];
  const loadStart = Date.now();
  // Retention's job expires the phase's old messages while the load runs (their channel keeps
  // a day's messages, and they are made older than that).
  await db.query("UPDATE messaging.messages SET date_sent = date_sent - interval '400 days' WHERE id = ANY($1::bigint[])", [pools.retention]);
  await sleep(LOAD_MS / 2);
  await midway?.(notes);
  await sleep(Math.max(0, LOAD_MS - (Date.now() - loadStart)));
  await Promise.all(tasks.map((t) => t.stop()));

  // The scheduled messages' removal events are owed by id: from the answer, or the add event.
  const scheduled = writes.records.filter((r) => r.kind === "schedule message");
  const contentOf = (object: string) => object.slice("scheduled:".length);
  const moderatorQueue = readers.find((r) => r.name === "moderator")!;
  const noteScheduledIds = () => {
    const idOf = new Map<string, number>();
    for (const e of moderatorQueue.events) {
      if (e.type === "scheduled_messages" && e.op === "add") for (const m of e.scheduled_messages) idOf.set(m.content, m.scheduled_message_id);
    }
    for (const r of scheduled) {
      const id = r.answer?.scheduled_message_id ?? idOf.get(contentOf(r.object));
      if (id !== undefined && r.events.length === 2) r.events.push({ key: `scheduled:remove:${id}`, to: ["moderator"] });
    }
  };

  const acked = sends.filter((s) => s.id !== null);
  const owes = (reader: QueueReader, s: Send) => s.to === "channel" || s.sender === reader.name || s.to === reader.name;
  const deletions = (r: QueueReader) => r.events.filter((e) => e.type === "delete_message").flatMap((e) => e.message_ids ?? [e.message_id]);
  await until(
    "every acknowledged change delivered to every queue, every scheduled message sent and every old message expired",
    async () => {
      noteScheduledIds();
      const delivered = readers.every((r) => {
        const got = new Set(r.events.filter((e) => e.type === "message").map((e) => e.message.id));
        return acked.filter((s) => owes(r, s)).every((s) => got.has(s.id)) && pools.retention.every((id) => deletions(r).includes(id));
      });
      if (!delivered) return false;
      const owed = writes.expectedEvents();
      return readers.every((r) => compareEvents(r.counts, owed.get(r.name)).lost.length === 0);
    },
    { timeoutMs: 40_000, pollMs: 250 },
  ).catch((err) => notes.push((err as Error).message));
  // A last message through the whole pipeline: once every queue has it, anything sent before
  // (a duplicate included) has come out of the pipeline too.
  const marker = ok(await as.admin.post("/messages", { type: "stream", to: loadChannel, topic: phase, content: `${phase} last` }), "marker").id;
  await until("the last message in every queue", async () => readers.every((r) => r.events.some((e) => e.type === "message" && e.message.id === marker)), {
    timeoutMs: 30_000,
    pollMs: 200,
  }).catch((err) => notes.push((err as Error).message));
  const applied = () => readers.map((r) => snapshot(r.model));
  const fresh = async () =>
    Promise.all(
      readers.map(async (r) => {
        const body = ok(await as[r.name as Role].post("/register", registerParams()), "register");
        await as[r.name as Role].delete("/events", { queue_id: body.queue_id });
        return snapshot(fromRegister(body));
      }),
    );
  let freshModels = await fresh();
  await until("applied states equal fresh registers", async () => JSON.stringify(applied()) === JSON.stringify((freshModels = await fresh())), {
    timeoutMs: 10_000,
    pollMs: 500,
  }).catch(() => undefined);
  await Promise.all(readers.map((r) => r.stop()));
  noteScheduledIds();

  // --- What the database holds
  const stored = await storedByContent([...sends.map((s) => s.content), ...scheduled.map((r) => contentOf(r.object))]);
  const storedIds = new Set([...stored.values()].flat());
  const sendProblems: string[] = [];
  for (const s of sends) {
    const rows = stored.get(s.content) ?? [];
    if (s.id !== null && (rows.length !== 1 || rows[0] !== s.id)) sendProblems.push(`${s.content} acknowledged as ${s.id}, stored as [${rows}]`);
    if (s.id === null && rows.length > 1) sendProblems.push(`${s.content} (${s.code}) stored ${rows.length} times`);
  }
  for (const r of scheduled) {
    const n = (stored.get(contentOf(r.object)) ?? []).length;
    if (r.outcome === "acked" ? n !== 1 : n > 1) sendProblems.push(`${contentOf(r.object)} (${r.code}) delivered ${n} times`);
  }
  const { rows: leftOver } = await db.query("SELECT id FROM messaging.messages WHERE id = ANY($1::bigint[])", [pools.retention]);

  // --- What each queue got
  const senderOrder = (r: QueueReader) => {
    const wrong: string[] = [];
    const last = new Map<string, { seq: number; id: number }>();
    const bySend = new Map(sends.filter((s) => s.id !== null).map((s) => [s.id!, s]));
    for (const e of r.events.filter((x) => x.type === "message")) {
      const s = bySend.get(e.message.id);
      if (!s) continue;
      const stream = `${s.sender}->${s.to}`;
      const prev = last.get(stream);
      if (prev && (s.seq <= prev.seq || s.id! <= prev.id)) wrong.push(`${s.content} after #${prev.seq}`);
      last.set(stream, { seq: s.seq, id: s.id! });
    }
    return wrong;
  };
  const owed = writes.expectedEvents();
  const queues = readers.map((r, i) => {
    const counts = new Map<number, number>();
    for (const e of r.events.filter((x) => x.type === "message")) counts.set(e.message.id, (counts.get(e.message.id) ?? 0) + 1);
    const deleted = new Map<number, number>();
    for (const id of deletions(r)) deleted.set(id, (deleted.get(id) ?? 0) + 1);
    const loadIds = new Set(sends.map((s) => s.content));
    return {
      queue: `${r.name}${i === CLIENTS.length ? " (second client)" : ""}`,
      problems: r.problems,
      sendsLost: acked.filter((s) => owes(r, s) && !counts.has(s.id!)).map((s) => s.content),
      messagesTwice: [...counts].filter(([, n]) => n > 1).map(([id, n]) => `${id} x${n}`),
      phantoms: r.events
        .filter((e) => e.type === "message" && loadIds.has(e.message.content) && !storedIds.has(e.message.id))
        .map((e) => e.message.content),
      outOfOrder: senderOrder(r),
      expiredNotOnce: pools.retention.filter((id) => deleted.get(id) !== 1).map((id) => `${id} x${deleted.get(id) ?? 0}`),
      ...compareEvents(r.counts, owed.get(r.name)),
    };
  });

  // --- Writes read back
  const actual = await readBack(pools, writes, phase);
  const wrongValues: string[] = [];
  for (const [object, allowed] of writes.allowedValues()) {
    if (!actual.has(object)) wrongValues.push(`${object}: nothing read back`);
    else if (!allowed.has(actual.get(object)!)) wrongValues.push(`${object}: ${actual.get(object)} (expected ${[...allowed].join(" or ")})`);
  }

  // --- Mails: each acknowledged direct message to the away guest in one missed-message mail
  const toGuest = acked.filter((s) => s.to === "guest");
  const mailsWith = (content: string) => catcher.mails.filter((m) => m.to.toLowerCase() === creds.guest.email.toLowerCase() && m.text.includes(content)).length;
  await until("every direct message to the guest mailed", async () => toGuest.every((s) => mailsWith(s.content) > 0), { timeoutMs: 20_000, pollMs: 250 }).catch((err) =>
    notes.push((err as Error).message),
  );
  const mailedNotOnce = toGuest.filter((s) => mailsWith(s.content) !== 1).map((s) => `${s.content} in ${mailsWith(s.content)} mails`);

  const failures = [...sends.map((s) => ({ kind: `send ${s.sender}->${s.to}`, code: s.code, detail: "" })), ...writes.records.map((r) => ({ kind: r.kind, code: r.code, detail: `${r.detail ?? ""} ${r.requestId ?? ""}` }))].filter(
    (f) => ["INTERNAL_SERVER_ERROR", "HTTP_500", "TIMEOUT"].includes(f.code),
  );
  const notAcked: Record<string, number> = {};
  for (const f of [...sends.map((s) => ({ kind: "send", code: s.code })), ...writes.records.map((r) => ({ kind: r.kind, code: r.code }))]) {
    if (f.code !== "success") notAcked[`${f.kind}: ${f.code}`] = (notAcked[`${f.kind}: ${f.code}`] ?? 0) + 1;
  }
  // Every relay's backlog published (the relays of both replicas take turns per schema).
  let backlog = await outboxBacklog();
  await until("every outbox emptied", async () => Object.values((backlog = await outboxBacklog())).every((n) => n === 0), { timeoutMs: 15_000, pollMs: 250 }).catch(
    () => undefined,
  );
  const report = {
    phase,
    notes,
    sends: { acknowledged: acked.length, tried: sends.length },
    writes: writes.summary(),
    notAcknowledged: notAcked,
    events: Object.fromEntries(readers.map((r, i) => [`${r.name}${i === CLIENTS.length ? " (2)" : ""}`, r.eventCount])),
    connectionsPerReplica: Object.fromEntries(STACK_SERVICES.map((s) => [s, [...lb[s].handedOut]])),
    mails: catcher.mails.length,
    digestsTo: digests().map((m) => m.to),
  };
  process.stdout.write(`\nScale-out, ${phase}:\n${JSON.stringify(report, null, 2)}\n`);
  return {
    problems: {
      sendsStored: sendProblems,
      expiredLeftInDatabase: leftOver.map((r) => Number(r.id)),
      queues,
      wrongValues,
      mailedNotOnce,
      failures: failures.map((f) => `${f.kind}: ${f.code} ${f.detail}`),
      unexplainedRefusals: writes.unexplainedRefusals().map((r) => `${r.kind} ${r.object}: ${r.detail}`),
      outboxBacklog: Object.entries(backlog).filter(([, n]) => n > 0),
      stateDiffers: readers.map((r, i) => (JSON.stringify(applied()[i]) === JSON.stringify(freshModels[i]) ? null : r.name)).filter(Boolean),
      kindsNeverAcknowledged: [...new Set(writes.records.map((r) => r.kind))].filter((k) => !writes.records.some((r) => r.kind === k && r.outcome === "acked")),
    },
    report,
    gatewaysPerPoll,
  };
}

/** Nothing wrong: the shape every phase must end with. */
function clean(r: PhaseResult) {
  return {
    sendsStored: [],
    expiredLeftInDatabase: [],
    queues: (r.problems.queues as Array<{ queue: string }>).map((q) => ({
      queue: q.queue,
      problems: [],
      sendsLost: [],
      messagesTwice: [],
      phantoms: [],
      outOfOrder: [],
      expiredNotOnce: [],
      lost: [],
      extra: [],
    })),
    wrongValues: [],
    mailedNotOnce: [],
    failures: [],
    unexplainedRefusals: [],
    outboxBacklog: [],
    stateDiffers: [],
    kindsNeverAcknowledged: [],
  };
}

const digests = () => catcher.mails.filter((m) => m.subject === `${orgName} weekly digest`);

describe("two replicas of every service behind round-robin Services", () => {
  it("a mixed load: everything acknowledged stored and delivered once, in order; once-per-organization jobs act once", async () => {
    // Digests on for today: both messaging replicas look every second.
    const weekday = (new Date().getUTCDay() + 6) % 7;
    ok(await as.owner.patch("/realm", { digest_emails_enabled: true, digest_weekday: weekday }), "digest");
    const events0 = await Promise.all(replicaUrls!.events.map(pollsAnswered));

    const r = await runPhase("p1");
    expect(r.problems).toEqual(clean(r));

    // The load really was spread: each client's consecutive polls went to different gateways,
    // and both events replicas answered polls.
    for (const seen of r.gatewaysPerPoll) {
      expect(new Set(seen).size, JSON.stringify(seen)).toBe(REPLICAS);
      expect(seen.some((g, i) => i > 0 && g !== seen[i - 1]), JSON.stringify(seen)).toBe(true);
    }
    const events1 = await Promise.all(replicaUrls!.events.map(pollsAnswered));
    for (let i = 0; i < REPLICAS; i++) expect(events1[i] - events0[i], `polls answered by events #${i}`).toBeGreaterThan(0);
    for (const s of STACK_SERVICES) expect(lb[s].handedOut.filter((n) => n > 0), `connections to each ${s} replica`).toHaveLength(REPLICAS);

    // Each away user's digest once, however many passes both replicas made meanwhile.
    await until("a weekly digest", async () => digests().length > 0, { timeoutMs: 15_000, pollMs: 250 });
    const perUser = new Map<string, number>();
    for (const m of digests()) perUser.set(m.to.toLowerCase(), (perUser.get(m.to.toLowerCase()) ?? 0) + 1);
    expect([...perUser].filter(([, n]) => n > 1)).toEqual([]);
  }, 120_000);

  it("the same with one replica of each service killed (SIGKILL) in the middle of the load", async () => {
    const digestsBefore = digests().length;
    const r = await runPhase("p2", async (notes) => {
      // The events replica that is the active consumer of client events dies (the other takes
      // over); for the other services, either replica does the same work.
      const handled = await Promise.all(replicaUrls!.events.map(clientEventsHandled));
      const victims: Record<StackService, number> = {
        events: handled[0] >= handled[1] ? 0 : 1,
        gateway: 0,
        messaging: 1,
        accounts: 0,
        scheduler: 1,
      };
      for (const s of ["events", "messaging", "gateway", "scheduler", "accounts"] as const) {
        const exit = await stack.kill(s, "SIGKILL", victims[s]);
        expect(exit.signal).toBe("SIGKILL");
        notes.push(`${s}#${victims[s]} killed`);
        await sleep(300);
      }
    });
    expect(r.problems).toEqual(clean(r));
    // Still one digest per user, with one messaging replica left.
    expect(digests().length).toBe(digestsBefore);
  }, 150_000);
});
