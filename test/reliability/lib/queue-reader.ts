import type { ApiClient } from "@chat/testkit";
import { applyToModel, fromRegister, MODEL_FETCH_TYPES, type ClientModel } from "./client-state";
import { outcomeOf } from "./load";
import { eventKeys, transitionsOf } from "./writes";

/**
 * One client's event queue, read for the whole run the way a Zulip client reads it: long polls,
 * retried with the same `last_event_id` after any failure. It counts every event by key, keeps
 * its model of the client state up to date, and notes what a client could not cope with: a lost
 * queue (BAD_EVENT_QUEUE_ID), event ids that do not increase, an event the model cannot apply.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a modern client says it supports (notification_settings_null is required by register). */
export const CLIENT_CAPABILITIES = { notification_settings_null: true, bulk_message_deletion: true, user_settings_object: true };

export function registerParams(): Record<string, unknown> {
  return { apply_markdown: false, include_subscribers: true, client_capabilities: CLIENT_CAPABILITIES, fetch_event_types: MODEL_FETCH_TYPES };
}

export class QueueReader {
  queueId = "";
  lastEventId = -1;
  model!: ClientModel;
  readonly counts = new Map<string, number>();
  readonly events: any[] = [];
  readonly problems: string[] = [];
  /** Failed polls by outcome (expected while a service is down). */
  readonly pollErrors: Record<string, number> = {};
  lost = false;
  /** Each object's last announced state, to spot a change delivered twice. */
  private readonly lastState = new Map<string, string>();
  /** When the register was sent and answered. */
  registeredFrom = 0;
  registeredAt = 0;
  private stopped = false;
  private readonly abort = new AbortController();
  private task: Promise<void> | null = null;

  constructor(
    /** The client (a demo role); several readers may share one. */
    readonly name: string,
    private readonly client: ApiClient,
    private readonly pollTimeoutMs: number,
  ) {}

  /** Registers, retrying failures (a service may be down) until `timeoutMs`. */
  async register(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let res;
    for (;;) {
      this.registeredFrom = Date.now();
      res = await this.client.post("/register", registerParams()).catch(() => null);
      if (res?.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${this.name}: register answered ${res?.status} ${JSON.stringify(res?.body)}`);
      await sleep(200);
    }
    this.registeredAt = Date.now();
    this.queueId = res.body.queue_id;
    this.lastEventId = res.body.last_event_id;
    this.model = fromRegister(res.body);
  }

  start(): void {
    this.task = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.task;
    await this.client.delete("/events", { queue_id: this.queueId }).catch(() => undefined);
  }

  /** Events read so far (heartbeats left out). */
  get eventCount(): number {
    return this.events.length;
  }

  private async loop(): Promise<void> {
    while (!this.stopped && !this.lost) {
      let res = null;
      let err: unknown;
      try {
        res = await this.client.get(
          "/events",
          { queue_id: this.queueId, last_event_id: this.lastEventId },
          { signal: AbortSignal.any([AbortSignal.timeout(this.pollTimeoutMs), this.abort.signal]) },
        );
      } catch (e) {
        err = e;
      }
      if (this.stopped) break;
      const outcome = outcomeOf(res, err);
      if (outcome === "success") {
        for (const e of res!.body.events) this.take(e);
      } else if (outcome === "BAD_EVENT_QUEUE_ID") {
        this.lost = true;
        this.problems.push(`queue lost: ${JSON.stringify(res!.body)}`);
      } else {
        this.pollErrors[outcome] = (this.pollErrors[outcome] ?? 0) + 1;
        await sleep(150);
      }
    }
  }

  private take(e: any): void {
    if (e.id <= this.lastEventId) this.problems.push(`event id ${e.id} after ${this.lastEventId}`);
    this.lastEventId = Math.max(this.lastEventId, e.id);
    if (e.type === "heartbeat") return;
    this.events.push(e);
    for (const key of eventKeys(e)) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    for (const [object, state] of transitionsOf(e)) {
      if (this.lastState.get(object) === state) this.problems.push(`${object} ${state} twice in a row (event ${e.id})`);
      this.lastState.set(object, state);
    }
    if (!applyToModel(this.model, e)) this.problems.push(`could not apply ${JSON.stringify(e).slice(0, 300)}`);
  }
}
