import { setTimeout as sleep } from "node:timers/promises";
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, expect } from "vitest";
import { createPool } from "@chat/platform";
import { contractEventErrors, expectZulipEvent } from "./openapi";
import { apiClient, runDemo, startStack, type ApiClient, type DemoOutput, type DemoUser, type Stack, type StackOptions } from "./stack";

/**
 * What the end-to-end files share: the whole stack with the demo organizations for one file, a
 * client per user, success answers, and event queues read the way Zulip's clients read them,
 * every delivered event checked against our contract and Zulip's published schema (Zulip's own
 * tests check every event they see the same way).
 */

export { sleep };

/** An answer as the test clients return it. */
export interface Answer {
  status: number;
  body: any;
}

/** The body of a success answer: status 200 and Zulip's `{result: "success", msg: ""}`, or the test fails. */
export function ok<T = any>(res: Answer): T {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body, JSON.stringify(res.body)).toMatchObject({ result: "success", msg: "" });
  return res.body;
}

/** A refusal as Zulip words it: status 400 and exactly `{result: "error", code, msg}`. */
export function refused(res: Answer, msg: string, code = "BAD_REQUEST"): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body).toEqual({ result: "error", code, msg });
}

/** Polls `check` until it gives something truthy, and returns it; fails after `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined | null | false>, { timeoutMs = 10_000, pollMs = 100 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

// ---------------------------------------------------------------------------------------------
// The stack of one test file

/** The gateway's per-user rate limits off: these files register and poll far more than a client. */
/** Each distinct answer (status and msg) with how often it came: what a burst of requests got. */
export function tally(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key = `${a.status} ${a.body?.msg ?? JSON.stringify(a.body)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * Runs `send` while a service's outbox table is locked, so that every request's transaction stops
 * at its first event until at least `waiting` of them wait on a lock: concurrent requests surely
 * overlap (instead of by chance), and none commits before the others have read what it changes.
 */
export async function withOutboxLocked<T>(databaseUrl: string, schema: string, waiting: number, send: () => Promise<T>): Promise<T> {
  const pool = createPool(databaseUrl, schema, 2);
  const holder = await pool.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE outbox IN SHARE MODE");
    const sent = send();
    await until("requests waiting on a lock", async () => {
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      return rows[0].n >= waiting;
    });
    await holder.query("COMMIT");
    return await sent;
  } finally {
    holder.release();
    await pool.end();
  }
}

export const NO_RATE_LIMITS: StackOptions = { serviceEnv: { gateway: { RATE_LIMITING_ENABLED: "false" } } };

/** A file's stack and demo organizations, once `useDemoStack`'s hook has started them. */
export class DemoStack {
  #stack: Stack | undefined;
  #demo: DemoOutput | undefined;
  readonly #clients = new Map<DemoUser, ApiClient>();

  get stack(): Stack {
    if (!this.#stack) throw new Error("the stack starts in beforeAll: use it in hooks and tests");
    return this.#stack;
  }

  get demo(): DemoOutput {
    if (!this.#demo) throw new Error("the demo organizations are made in beforeAll: use them in hooks and tests");
    return this.#demo;
  }

  async start(options: StackOptions): Promise<void> {
    this.#stack = await startStack(options);
    // The demo command itself is tested through pnpm (test/e2e/foundation.test.ts); here only its organizations matter.
    this.#demo = await runDemo(this.#stack, { viaPnpm: false });
  }

  async stop(): Promise<void> {
    await this.#stack?.stop();
  }

  /** The client of a demo user, made on first use. */
  readonly as = (user: DemoUser): ApiClient => {
    let client = this.#clients.get(user);
    if (!client) this.#clients.set(user, (client = apiClient(this.demo.base_url, user.email, user.api_key)));
    return client;
  };

  /** A client with the credentials of a user made during the test, or an anonymous one. */
  client(credentials?: { email: string; api_key: string }): ApiClient {
    return apiClient(this.demo.base_url, credentials?.email, credentials?.api_key);
  }

  /** A POST to accounts' internal API (the admin CLI's and the signup pages' routes). */
  async internalPost(path: string, params: Record<string, string>): Promise<Answer> {
    const res = await fetch(`${this.stack.urls.accounts}/api/v1${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-chat-internal-token": this.stack.vars.INTERNAL_TOKEN },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: await res.json() };
  }

  /** A multipart upload by `user` through the gateway (avatars, emoji, files); `field` names the file part. */
  async postFile(user: DemoUser, path: string, file: { field?: string; name: string; type: string; data: Uint8Array | string }): Promise<Answer> {
    const form = new FormData();
    const data = typeof file.data === "string" ? file.data : new Uint8Array(file.data);
    form.append(file.field ?? "file", new Blob([data], { type: file.type }), file.name);
    const authorization = "Basic " + Buffer.from(`${user.email}:${user.api_key}`).toString("base64");
    const res = await fetch(`${this.demo.base_url}/api/v1${path}`, { method: "POST", headers: { authorization }, body: form });
    return { status: res.status, body: await res.json() };
  }
}

/**
 * Starts the stack and the demo organizations before the file's tests (then runs `setup`, in
 * the same hook) and stops them after. Each file gets its own: nothing is shared between files.
 */
export function useDemoStack(options: StackOptions = {}, setup?: (s: DemoStack) => unknown): DemoStack {
  const s = new DemoStack();
  beforeAll(async () => {
    await s.start(options);
    await setup?.(s);
  }, 180_000);
  afterAll(() => s.stop(), 60_000);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Event queues

/**
 * The form of a delivered event that Zulip's schema is asked about, or null for none: for what
 * Zulip changed after the feature level we speak, where our contract is the check.
 */
export type ZulipForm = (event: Record<string, any>) => Record<string, any> | null;

/** A registered event queue: register's answer, and how far it has been read. */
export interface EventQueue {
  client: ApiClient;
  queue_id: string;
  /** The last event read (register's last_event_id at first). */
  last_event_id: number;
  /** Register's answer: the state this queue's events bring up to date. */
  state: Record<string, any>;
  /** Every event read from the queue, as delivered (heartbeats left out). */
  seen: any[];
  /** How its events are shown to Zulip's schema; as delivered by default. */
  zulipForm?: ZulipForm;
}

/** POST /register with `params`; the queue, at its start. */
export async function register(client: ApiClient, params: Record<string, unknown> = {}): Promise<EventQueue> {
  const state = ok(await client.post("/register", params));
  return { client, queue_id: state.queue_id, last_event_id: state.last_event_id, state, seen: [] };
}

/** Checks one delivered event against our contract and (unless `zulipForm` says none) Zulip's schema. */
export function checkEvent(event: Record<string, any>, zulipForm: ZulipForm = (e) => e): void {
  expect(contractEventErrors(event), `contract: ${JSON.stringify(event)}`).toEqual([]);
  const form = zulipForm(event);
  if (form) expectZulipEvent(form, `Zulip schema: ${JSON.stringify(event)}`);
}

/** An event without its queue id, as tests compare events. */
export const withoutId = ({ id: _id, ...event }: Record<string, any>): any => event;

/** Events as `type/op` (`type` where there is no op): what a test usually asserts first. */
export const typesOf = (events: any[]): string[] => events.map((e) => (e.op ? `${e.type}/${e.op}` : e.type));

/** The events that arrived since the last read (heartbeats left out), each checked; does not wait. */
export async function drain(q: EventQueue): Promise<any[]> {
  const { events } = ok(await q.client.get("/events", { queue_id: q.queue_id, last_event_id: q.last_event_id, dont_block: true }));
  const got: any[] = [];
  for (const e of events) {
    q.last_event_id = e.id;
    if (e.type === "heartbeat") continue;
    checkEvent(e, q.zulipForm);
    got.push(e);
    q.seen.push(e);
  }
  return got;
}

/** Reads until `count` events arrived (delivery crosses services), each checked; fails after `timeoutMs`. */
export async function waitForEvents(q: EventQueue, count: number, { timeoutMs = 15_000, pollMs = 100 } = {}): Promise<any[]> {
  const got: any[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    got.push(...(await drain(q)));
    if (got.length >= count) return got;
    if (Date.now() > deadline) throw new Error(`waited for ${count} events, got ${JSON.stringify(got)}`);
    await sleep(pollMs);
  }
}

/**
 * The queue's next event (checked), without its id; later ones stay for the next read. Absence
 * is shown by order: a realm's events reach a queue in commit order, so a queue whose next event
 * is a later marker never got the earlier one.
 */
export async function nextEvent(q: EventQueue, { timeoutMs = 10_000, pollMs = 50 } = {}): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { events } = ok(await q.client.get("/events", { queue_id: q.queue_id, last_event_id: q.last_event_id, dont_block: true }));
    const event = events.find((e: any) => e.type !== "heartbeat");
    if (event) {
      q.last_event_id = event.id;
      checkEvent(event, q.zulipForm);
      q.seen.push(event);
      return withoutId(event);
    }
    if (Date.now() > deadline) throw new Error(`no event in queue ${q.queue_id}`);
    await sleep(pollMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Zulip's verify_action

/** Keys in which two registers differ with nothing changed between them. */
export const VOLATILE_STATE: readonly string[] = ["queue_id", "last_event_id", "result", "msg", "server_timestamp"];

export interface VerifyOptions {
  /** Registers the queue the action is verified on, and each fresh one it is compared with. */
  register: () => Promise<EventQueue>;
  /** Applies one event to a registered state as a client does; false: it could not. */
  apply: (state: Record<string, any>, event: any) => boolean;
  /** What must hold of the events before the states count as agreeing (events still on the way). */
  settle?: (events: any[]) => boolean;
  volatile?: readonly string[];
  timeoutMs?: number;
  pollMs?: number;
}

/**
 * Zulip's verify_action: register, act, collect the events (each checked), apply them to the
 * registered state and compare with a fresh register, until they agree (delivery crosses
 * services) or the time is up. Returns the events, as delivered.
 */
export async function verifyAction(action: () => Promise<unknown>, opts: VerifyOptions): Promise<any[]> {
  const { settle = () => true, volatile = VOLATILE_STATE, timeoutMs = 10_000, pollMs = 150 } = opts;
  const comparable = (state: Record<string, any>) => {
    const copy = structuredClone(state);
    for (const k of volatile) delete copy[k];
    return copy;
  };
  const q = await opts.register();
  const events: any[] = [];
  const read = async () => {
    for (const e of await drain(q)) {
      events.push(e);
      expect(opts.apply(q.state, e), `could not apply ${JSON.stringify(e)}`).toBe(true);
    }
  };
  await action();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await read();
    const fresh = await opts.register();
    await fresh.client.delete("/events", { queue_id: fresh.queue_id });
    const same = settle(events) && isDeepStrictEqual(comparable(q.state), comparable(fresh.state));
    if (same || Date.now() > deadline) {
      if (same) {
        // Stragglers of the same action would still change the state: look once more, and
        // compare with a new fresh register if any came (both states may have been taken before
        // the action's effects reached either).
        await sleep(300);
        const seen = events.length;
        await read();
        if (events.length > seen && Date.now() <= deadline) continue;
      } else if (process.env.DEBUG_VERIFY) {
        const [a, b] = [comparable(q.state), comparable(fresh.state)];
        for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
          if (!isDeepStrictEqual(a[k], b[k])) console.log("DIFF", k, JSON.stringify(a[k])?.slice(0, 400), JSON.stringify(b[k])?.slice(0, 400));
        }
      }
      expect(comparable(q.state)).toEqual(comparable(fresh.state));
      // Equal states at the deadline are not enough: the events the test waits for must have come.
      expect(settle(events), `the awaited events did not all arrive; got ${JSON.stringify(events.map((e) => [e.type, e.op]))}`).toBe(true);
      break;
    }
    await sleep(pollMs);
  }
  await q.client.delete("/events", { queue_id: q.queue_id });
  return events;
}
