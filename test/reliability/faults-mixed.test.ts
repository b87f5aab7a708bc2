import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient, runDemo, startProxy, startStack, type ApiClient, type Stack, type StackService, type TcpProxy } from "@chat/testkit";
import { until } from "@chat/testkit/e2e";
import { fromRegister, snapshot } from "./lib/client-state";
import { QueueReader, registerParams } from "./lib/queue-reader";
import { fetchTopic } from "./lib/verify";
import { CLIENTS, EMOJI, runWriter, scheduledContent, writeSteps, type Role, type Step, type World } from "./lib/writers";
import { compareEvents, Writes } from "./lib/writes";
import { SMALL_POOLS } from "../security/lib/pools";

/**
 * Nothing acknowledged is lost, for the writes other than channel sends (faults.test.ts has
 * those): message edits and topic moves, reactions, read and starred flags, subscribing and
 * unsubscribing, channel renames and descriptions, full names and statuses, user group changes,
 * and scheduled messages. One worker per kind writes without pause while RabbitMQ is away for a
 * few seconds, then messaging, accounts, events and the scheduler are killed (SIGKILL) and
 * restarted. Afterwards:
 * - every acknowledged change is what the API reads back (or a later write that may have run);
 * - every client's queue got each acknowledged change's event exactly once, and none that no
 *   write could have caused; the queues themselves survived every fault;
 * - each client's state, kept up to date from its events since its register, equals a fresh
 *   register (subscriptions, unread and starred messages, user groups);
 * - each acknowledged scheduled message was delivered exactly once.
 *
 * RabbitMQ is this machine's shared server, so "down" is a TCP proxy refusing connections.
 */

const HEARTBEAT_SECONDS = 3;
const REQUEST_TIMEOUT_MS = 15_000;
const PAUSE_MS = 40;
const RABBIT_DOWN_MS = 4_000;

const AMQP = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";

let stack: Stack;
let amqp: TcpProxy;
const ids = {} as Record<Role, number>;
const as = {} as Record<Role, ApiClient>;
let loadChannel: number;
let propsChannel: number;
let subChannels: Array<{ id: number; name: string }>;
let editPool: number[];
let movePool: number[];
let initialHomeView: string;
let reactPool: number[];
let groupId: number;
const writes = new Writes(REQUEST_TIMEOUT_MS);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ok(res: { status: number; body: any }, what: string): any {
  if (res.status !== 200 || res.body?.result !== "success") throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The moderator's web_home_view, as register tells it (there is no GET /settings). */
async function homeView(): Promise<string> {
  const body = ok(await as.moderator.post("/register", { fetch_event_types: ["user_settings"], event_types: ["user_settings"] }), "register");
  await as.moderator.delete("/events", { queue_id: body.queue_id });
  return body.user_settings.web_home_view;
}

async function streamId(name: string): Promise<number> {
  return ok(await as.owner.get("/get_stream_id", { stream: name }), `stream id of ${name}`).stream_id;
}

beforeAll(async () => {
  amqp = await startProxy(AMQP);
  const services: StackService[] = ["accounts", "messaging", "scheduler", "events", "gateway"];
  stack = await startStack({
    env: {
      RATE_LIMIT_USER_MAX: "1000000",
      EVENTS_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
      EVENTS_HEARTBEAT_JITTER_SECONDS: "1",
      DELIVERY_INTERVAL_MS: "250",
      ...SMALL_POOLS,
    },
    serviceEnv: Object.fromEntries(services.map((s) => [s, (v: Record<string, string>) => ({ AMQP_URL: amqp.url(v.AMQP_URL) })])),
  });
  const demo = await runDemo(stack, { viaPnpm: false });
  for (const role of CLIENTS) {
    const u = demo.orgs[0].users[role];
    ids[role] = u.user_id;
    as[role] = apiClient(stack.baseUrl, u.email, u.api_key);
  }
  // Channels every client is subscribed to, and channels member2 will join and leave.
  const everyone = CLIENTS.map((c) => ids[c]);
  ok(await as.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "mixed load" }, { name: "mixed props" }], principals: everyone }), "channels");
  const subNames = [1, 2, 3, 4].map((i) => `mixed sub ${i}`);
  ok(await as.owner.post("/users/me/subscriptions", { subscriptions: subNames.map((name) => ({ name })), principals: [ids.owner] }), "sub channels");
  loadChannel = await streamId("mixed load");
  propsChannel = await streamId("mixed props");
  subChannels = await Promise.all(subNames.map(async (name) => ({ name, id: await streamId(name) })));
  const send = async (topic: string, content: string) =>
    ok(await as.member.post("/messages", { type: "stream", to: loadChannel, topic, content }), "send").id as number;
  editPool = [];
  for (let i = 0; i < 4; i++) editPool.push(await send("edits", `edit me ${i}`));
  movePool = [];
  for (let i = 0; i < 3; i++) movePool.push(await send("moves", `move me ${i}`));
  reactPool = [];
  for (let i = 0; i < 6; i++) reactPool.push(await send("reactions", `react to me ${i}`));
  ok(await as.admin.post("/user_groups/create", { name: "mixed group", description: "before", members: [ids.admin] }), "group");
  groupId = (ok(await as.admin.get("/user_groups"), "groups").user_groups as any[]).find((g) => g.name === "mixed group").id;

  // What the database holds for each object before the load.
  editPool.forEach((m, i) => {
    writes.setInitial(`content:${m}`, `edit me ${i}`);
    writes.setInitial(`topic:${m}`, "edits");
  });
  for (const m of reactPool) {
    for (const e of EMOJI) writes.setInitial(`reaction:${m}:${e}`, "absent");
    for (const f of ["read", "starred"]) writes.setInitial(`flag:${f}:${m}`, "off");
  }
  for (const s of subChannels) writes.setInitial(`sub:${s.id}`, "out");
  writes.setInitial(`description:${propsChannel}`, "");
  writes.setInitial(`name:${propsChannel}`, "mixed props");
  writes.setInitial("full_name", demo.orgs[0].users.moderator.full_name);
  writes.setInitial("status", "");
  initialHomeView = await homeView();
  writes.setInitial("web_home_view", initialHomeView);
  writes.setInitial("topic of moves", "moves");
  writes.setInitial(`group:${groupId}:description`, "before");
  for (const r of ["owner", "member", "member2"] as const) writes.setInitial(`group:${groupId}:member:${ids[r]}`, "out");
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  await amqp?.close();
}, 60_000);

/** Runs one writer until `stop()`, with this file's pause. */
const writer = (step: Step, pauseMs = PAUSE_MS) => runWriter(writes, step, pauseMs);

async function killAndRestart(service: StackService, notes: string[]) {
  const exit = await stack.kill(service, "SIGKILL");
  expect(exit.signal).toBe("SIGKILL");
  const t = Date.now();
  await stack.start(service);
  notes.push(`${service}: ready ${((Date.now() - t) / 1000).toFixed(1)} s after SIGKILL`);
}

/** What the API reads back for every object the writers changed. */
async function readBack(): Promise<Map<string, string>> {
  const actual = new Map<string, string>();
  const messages = ok(
    await as.owner.get("/messages", { anchor: "oldest", num_before: 0, num_after: 1000, apply_markdown: false, narrow: [{ operator: "stream", operand: loadChannel }] }),
    "messages",
  ).messages as any[];
  const byId = new Map(messages.map((m) => [m.id, m]));
  for (const id of editPool) {
    actual.set(`content:${id}`, byId.get(id).content);
    actual.set(`topic:${id}`, byId.get(id).subject);
  }
  const moved = [...new Set(movePool.map((id) => byId.get(id).subject as string))];
  actual.set("topic of moves", moved.length === 1 ? moved[0] : `split over ${moved.join(" | ")}`);
  actual.set("web_home_view", await homeView());
  for (const id of reactPool) {
    const m = byId.get(id);
    for (const e of EMOJI) actual.set(`reaction:${id}:${e}`, m.reactions.some((r: any) => r.emoji_name === e && r.user_id === ids.member2) ? "present" : "absent");
    for (const f of ["read", "starred"]) actual.set(`flag:${f}:${id}`, m.flags.includes(f) ? "on" : "off");
  }
  for (const r of writes.records.filter((x) => x.kind === "schedule message")) {
    const n = messages.filter((m) => m.content === scheduledContent(Number(r.object.split(":")[1]))).length;
    actual.set(r.object, n === 0 ? "absent" : n === 1 ? "delivered" : `delivered ${n} times`);
  }
  const subs = ok(await as.member2.get("/users/me/subscriptions"), "subscriptions").subscriptions as any[];
  for (const s of subChannels) actual.set(`sub:${s.id}`, subs.some((x) => x.stream_id === s.id) ? "in" : "out");
  const stream = ok(await as.owner.get(`/streams/${propsChannel}`), "stream").stream;
  actual.set(`description:${propsChannel}`, stream.description);
  actual.set(`name:${propsChannel}`, stream.name);
  actual.set("full_name", ok(await as.owner.get(`/users/${ids.moderator}`), "user").user.full_name);
  actual.set("status", ok(await as.owner.get(`/users/${ids.moderator}/status`), "status").status.status_text ?? "");
  const group = (ok(await as.owner.get("/user_groups"), "groups").user_groups as any[]).find((g) => g.id === groupId);
  actual.set(`group:${groupId}:description`, group.description);
  for (const r of ["owner", "member", "member2"] as const) actual.set(`group:${groupId}:member:${ids[r]}`, group.members.includes(ids[r]) ? "in" : "out");
  return actual;
}

/** A fresh register's model for each client: what its applied state must equal. */
async function freshModels(readers: QueueReader[]) {
  return Promise.all(
    readers.map(async (r) => {
      const body = ok(await as[r.name as Role].post("/register", registerParams()), "register");
      await as[r.name as Role].delete("/events", { queue_id: body.queue_id });
      return snapshot(fromRegister(body));
    }),
  );
}

/**
 * What a reader's queue owes: every write's events for a queue registered before the load; for
 * one registered during it, those of the writes sent after its register was answered (an
 * earlier write's event may still come, from the backlog of an outage: see `replayed`).
 */
function owedTo(reader: QueueReader, early: boolean) {
  return writes.expectedEvents((_client, r) => early || r.startedAt > reader.registeredAt);
}

/**
 * Events a late reader got for writes that had finished before its register was sent (the
 * change was in its state already): what a backlog delivers after the outage.
 */
function replayed(reader: QueueReader): string[] {
  const finishedBefore = new Map<string, boolean>();
  for (const r of writes.records) {
    for (const due of r.events) {
      if (!due.to.includes(reader.name)) continue;
      finishedBefore.set(due.key, (finishedBefore.get(due.key) ?? true) && r.endedAt < reader.registeredFrom);
    }
  }
  return [...reader.counts.keys()].filter((k) => finishedBefore.get(k) === true);
}

describe("mixed writes under faults", () => {
  it("keeps every acknowledged edit, move, reaction, flag, subscription, channel, account and group change and scheduled message, with its events", async () => {
    const notes: string[] = [];
    const pollTimeout = REQUEST_TIMEOUT_MS + HEARTBEAT_SECONDS * 1000 + 3000;
    const readers = CLIENTS.map((c) => new QueueReader(c, as[c], pollTimeout));
    await Promise.all(readers.map((r) => r.register()));
    readers.forEach((r) => r.start());
    const world: World = { as, ids, loadChannel, propsChannel, subChannels, editPool, movePool, reactPool, groupId, initialHomeView, writes };
    const steps = writeSteps(world);
    const { scheduleStep, ...continuous } = steps;
    const writers = Object.values(continuous).map((s) => writer(s));
    writers.push(writer(scheduleStep, 400));

    await sleep(2000);
    // The broker away for a few seconds; two clients register in the middle of it, while
    // acknowledged changes wait in the outboxes.
    amqp.block();
    await sleep(RABBIT_DOWN_MS / 2);
    const late = (["owner", "member2"] as const).map((c) => new QueueReader(c, as[c], pollTimeout));
    await Promise.all(late.map((r) => r.register()));
    late.forEach((r) => r.start());
    await sleep(RABBIT_DOWN_MS / 2);
    amqp.unblock();
    // Then the services die two at a time (in pairs to keep the run short); scheduled messages
    // fall due while the scheduler is dead.
    await Promise.all([killAndRestart("messaging", notes), killAndRestart("scheduler", notes)]);
    await sleep(500);
    await Promise.all([killAndRestart("accounts", notes), killAndRestart("events", notes)]);
    await sleep(1500);
    await Promise.all(writers.map((w) => w.stop()));
    const all = [...readers, ...late];
    const owed = () => all.map((r) => owedTo(r, readers.includes(r)));

    // The acknowledged scheduled messages are all delivered (exactly once: checked below).
    const scheduled = writes.records.filter((r) => r.kind === "schedule message");
    const contentOf = (r: (typeof scheduled)[number]) => r.events[0].key.slice("scheduled:add:".length);
    await until(
      "every acknowledged scheduled message delivered",
      async () => {
        const h = await fetchTopic(as.owner, loadChannel, "scheduled");
        return scheduled.filter((r) => r.outcome === "acked").every((r) => h.some((m) => m.content === contentOf(r)));
      },
      { timeoutMs: 30_000, pollMs: 300 },
    );
    // A delivery's removal event is owed by id: from the answer, or (uncertain request) the add event.
    const moderatorQueue = readers.find((r) => r.name === "moderator")!;
    const idOf = new Map<string, number>();
    const noteScheduledIds = () => {
      for (const e of moderatorQueue.events) {
        if (e.type === "scheduled_messages" && e.op === "add") for (const m of e.scheduled_messages) idOf.set(m.content, m.scheduled_message_id);
      }
      for (const r of scheduled) {
        const id = r.answer?.scheduled_message_id ?? idOf.get(contentOf(r));
        if (id !== undefined && r.events.length === 2) r.events.push({ key: `scheduled:remove:${id}`, to: ["moderator"] });
      }
    };

    // Every queue has at least what it is owed; then the applied states settle on a fresh register's.
    await until(
      "every queue has its events",
      async () => {
        noteScheduledIds();
        const o = owed();
        return all.every((r, i) => compareEvents(r.counts, o[i].get(r.name)).lost.length === 0);
      },
      { timeoutMs: 30_000, pollMs: 250 },
    ).catch(() => undefined);
    const applied = () => all.map((r) => snapshot(r.model));
    let fresh = await freshModels(all);
    await until("applied states equal fresh registers", async () => JSON.stringify(applied()) === JSON.stringify((fresh = await freshModels(all))), {
      timeoutMs: 15_000,
      pollMs: 500,
    }).catch(() => undefined);
    // Duplicates would come after the originals: give them a moment.
    await sleep(1000);
    await Promise.all(all.map((r) => r.stop()));
    noteScheduledIds();

    const uncertain: Record<string, number> = {};
    for (const r of writes.records) if (r.outcome !== "acked") uncertain[`${r.kind}: ${r.code}`] = (uncertain[`${r.kind}: ${r.code}`] ?? 0) + 1;
    const report = {
      notes,
      writes: writes.summary(),
      notAcknowledged: uncertain,
      events: Object.fromEntries(all.map((r, i) => [`${r.name}${i >= readers.length ? " (late)" : ""}`, r.eventCount])),
      replayedToLateRegisters: Object.fromEntries(late.map((r) => [r.name, replayed(r).length])),
    };
    process.stdout.write(`\nMixed writes under faults:\n${JSON.stringify(report, null, 2)}\n`);
    const detail = JSON.stringify(report);

    // Every acknowledged change is in the database (or a later one that may have happened).
    const actual = await readBack();
    const wrong: string[] = [];
    for (const [object, allowed] of writes.allowedValues()) {
      if (!actual.has(object)) throw new Error(`nothing read back for ${object}`);
      if (!allowed.has(actual.get(object)!)) wrong.push(`${object}: ${actual.get(object)} (expected ${[...allowed].join(" or ")})`);
    }
    expect(wrong, detail).toEqual([]);
    for (const kind of new Set(writes.records.map((r) => r.kind))) {
      expect(writes.records.filter((r) => r.kind === kind && r.outcome === "acked").length, `${kind} acknowledged`).toBeGreaterThan(0);
    }
    // Refusals only where an uncertain write before made the next one moot; no 500, no hang.
    expect(writes.unexplainedRefusals().map((r) => `${r.kind} ${r.object}: ${r.detail}`), detail).toEqual([]);
    const failures = writes.records.filter((r) => ["INTERNAL_SERVER_ERROR", "HTTP_500", "TIMEOUT"].includes(r.code));
    expect(failures.map((r) => `${r.kind}: ${r.code} ${r.detail} ${r.requestId}`), detail).toEqual([]);

    // Every queue survived, in order, and got exactly the events of the changes that happened;
    // a client's state kept up to date from its events equals a fresh register.
    const o = owed();
    const mine = applied();
    const label = (r: QueueReader, i: number) => `${r.name}${i >= readers.length ? " (registered during the outage)" : ""}`;
    const found = all.map((r, i) => ({ queue: label(r, i), problems: r.problems, ...compareEvents(r.counts, o[i].get(r.name)) }));
    expect(found).toEqual(all.map((r, i) => ({ queue: label(r, i), problems: [], lost: [], extra: [] })));
    expect(all.map((r, i) => ({ queue: label(r, i), state: mine[i] }))).toEqual(all.map((r, i) => ({ queue: label(r, i), state: fresh[i] })));
  }, 170_000);
});
