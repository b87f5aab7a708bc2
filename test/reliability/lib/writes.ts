import type { ApiResponse } from "@chat/testkit";
import { outcomeOf } from "./load";

/**
 * The bookkeeping of a mixed write load under faults: every write a client tried, how it ended,
 * which object it changed to which value, and which event each queue owes for it. Afterwards it
 * says what the database may hold for each object, and how many events with a given key each
 * queue may have received (at least the acknowledged ones, at most every one that may have run).
 *
 * A write that got `success` is acknowledged: it happened. A 400 is a refusal: nothing changed.
 * Anything else (a 5xx, a cut connection, a timeout) may or may not have happened.
 */

export type Outcome = "acked" | "refused" | "unknown";
/** Whether an acknowledged write changed anything (and so caused its events). */
export type Change = "yes" | "no" | "maybe";

/** One event a write causes: its key (see `eventKeys`) and the clients whose queues get it. */
export interface EventDue {
  key: string;
  to: readonly string[];
}

export interface WriteSpec {
  kind: string;
  /** What the write changes (`content:12`, `reaction:12:smile`, ...): one worker owns each object. */
  object: string;
  /** The object's value once the write happened. */
  value: string;
  events: EventDue[];
  /**
   * An acknowledged write whose effect depends on the object's previous state (a flag add is
   * a no-op when the flag is set): after a write that may or may not have run, its events may be missing.
   */
  dependsOnPrevious?: boolean;
  /** For writes whose answer says whether they changed anything (subscribe: already subscribed). */
  changed?: (body: any) => boolean;
}

export interface WriteRecord extends WriteSpec {
  seq: number;
  actor: string;
  startedAt: number;
  endedAt: number;
  outcome: Outcome;
  /** `success`, the Zulip code, HTTP_<status> or the network error. */
  code: string;
  detail?: string;
  requestId?: string;
  /** The success answer's body. */
  answer?: any;
  change: Change;
}

export interface Bounds {
  min: number;
  max: number;
}

export class Writes {
  readonly records: WriteRecord[] = [];
  private readonly initial = new Map<string, string>();
  private seq = 0;

  constructor(private readonly timeoutMs: number) {}

  /** The value an object has before the load (what the database keeps when no write ran). */
  setInitial(object: string, value: string): void {
    this.initial.set(object, value);
  }

  /** Sends one write and records how it ended; the answer for the worker's next choice. */
  async run(actor: string, spec: WriteSpec, call: (signal: AbortSignal) => Promise<ApiResponse>): Promise<WriteRecord> {
    const seq = ++this.seq;
    const startedAt = Date.now();
    let res: ApiResponse | null = null;
    let err: unknown;
    try {
      res = await call(AbortSignal.timeout(this.timeoutMs));
    } catch (e) {
      err = e;
    }
    const code = outcomeOf(res, err);
    const outcome: Outcome = code === "success" ? "acked" : res?.status === 400 ? "refused" : "unknown";
    let change: Change = outcome === "acked" ? "yes" : "maybe";
    if (outcome === "acked" && spec.changed && !spec.changed(res!.body)) change = "no";
    const rec: WriteRecord = { ...spec, seq, actor, startedAt, endedAt: Date.now(), outcome, code, change };
    if (outcome === "acked") rec.answer = res!.body;
    else {
      rec.requestId = res?.headers["x-request-id"];
      rec.detail = res ? (typeof res.body === "string" ? res.body.slice(0, 200) : String(res.body?.msg ?? "")) : String((err as Error)?.message ?? err);
    }
    // A dependent write after an uncertain one on the same object may have found nothing to change.
    if (outcome === "acked" && change === "yes" && spec.dependsOnPrevious) {
      const previous = this.previousOn(spec.object, seq);
      if (previous && previous.outcome !== "acked") rec.change = "maybe";
    }
    this.records.push(rec);
    return rec;
  }

  private previousOn(object: string, beforeSeq: number): WriteRecord | undefined {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const r = this.records[i];
      if (r.object === object && r.seq < beforeSeq && r.outcome !== "refused") return r;
    }
    return undefined;
  }

  /**
   * Per client and event key: how many such events its queue must have (min) and may have (max).
   * `owes` says whether a client's queue owes a write's events at all (a queue registered after
   * the write may get them or not); every write by default.
   */
  expectedEvents(owes: (client: string, r: WriteRecord) => boolean = () => true): Map<string, Map<string, Bounds>> {
    const out = new Map<string, Map<string, Bounds>>();
    for (const r of this.records) {
      if (r.outcome === "refused" || r.change === "no") continue;
      for (const due of r.events) {
        for (const client of due.to) {
          const sure = r.outcome === "acked" && r.change === "yes" && owes(client, r) ? 1 : 0;
          const keys = out.get(client) ?? out.set(client, new Map()).get(client)!;
          const b = keys.get(due.key) ?? { min: 0, max: 0 };
          b.min += sure;
          b.max += 1;
          keys.set(due.key, b);
        }
      }
    }
    return out;
  }

  /**
   * The values the database may hold for each object: the last acknowledged write's (or the
   * initial value), or that of any uncertain write after it.
   */
  allowedValues(): Map<string, Set<string>> {
    const byObject = new Map<string, WriteRecord[]>();
    for (const r of this.records) byObject.set(r.object, [...(byObject.get(r.object) ?? []), r]);
    const out = new Map<string, Set<string>>();
    for (const [object, list] of byObject) {
      list.sort((a, b) => a.seq - b.seq);
      const lastAcked = list.map((r) => r.outcome).lastIndexOf("acked");
      const allowed = new Set<string>();
      if (lastAcked >= 0) allowed.add(list[lastAcked].value);
      else if (this.initial.has(object)) allowed.add(this.initial.get(object)!);
      else throw new Error(`no initial value for ${object}`);
      for (const r of list.slice(lastAcked + 1)) if (r.outcome === "unknown") allowed.add(r.value);
      out.set(object, allowed);
    }
    return out;
  }

  /** Refusals with no uncertain write before them on the same object: a write refused under load for no reason. */
  unexplainedRefusals(): WriteRecord[] {
    return this.records.filter((r) => {
      if (r.outcome !== "refused") return false;
      const before = this.records.filter((x) => x.object === r.object && x.seq < r.seq);
      return !before.some((x) => x.outcome === "unknown");
    });
  }

  /** How the writes ended, per kind: `{ "edit content": { acked: 40, unknown: 2 } }`. */
  summary(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const r of this.records) {
      const k = (out[r.kind] ??= {});
      k[r.outcome] = (k[r.outcome] ?? 0) + 1;
    }
    return out;
  }
}

/** Messages the load sends start with this; their events are counted. */
export const LOAD_MESSAGE_PREFIX = "scheduled #";

/**
 * The keys an event is counted under, one per change it announces (a peer_add for two users is
 * two). Events of kinds the load does not write give none.
 */
export function eventKeys(e: any): string[] {
  switch (e.type) {
    case "message":
      // Only the load's own sends; notices (a channel renamed, ...) are not writes of the load.
      return e.message.content.startsWith(LOAD_MESSAGE_PREFIX) ? [`message:${e.message.content}`] : [];
    case "update_message": {
      const keys: string[] = [];
      if (typeof e.content === "string" && e.rendering_only !== true) keys.push(`content:${e.message_id}:${e.content}`);
      const topic = e.topic ?? e.subject;
      if (typeof topic === "string" && typeof e.orig_subject === "string") {
        for (const id of e.message_ids) keys.push(`topic:${id}:${topic}`);
      }
      return keys;
    }
    case "reaction":
      return [`reaction:${e.op}:${e.message_id}:${e.emoji_name}:${e.user_id}`];
    case "update_message_flags":
      return e.all ? [`flags-all:${e.op}:${e.flag}`] : e.messages.map((id: number) => `flag:${e.op}:${e.flag}:${id}`);
    case "subscription":
      if (e.op === "add" || e.op === "remove") return e.subscriptions.map((s: any) => `sub:${e.op}:${s.stream_id}`);
      if (e.op === "peer_add" || e.op === "peer_remove") {
        return e.stream_ids.flatMap((s: number) => e.user_ids.map((u: number) => `${e.op}:${s}:${u}`));
      }
      return [];
    case "stream":
      return e.op === "update" ? [`stream:${e.stream_id}:${e.property}:${e.value}`] : [];
    case "realm_user":
      return e.op === "update" && typeof e.person?.full_name === "string" ? [`full_name:${e.person.user_id}:${e.person.full_name}`] : [];
    case "user_settings":
      return e.op === "update" ? [`setting:${e.property}:${e.value}`] : [];
    case "user_status":
      return typeof e.status_text === "string" ? [`status:${e.user_id}:${e.status_text}`] : [];
    case "user_group":
      if (e.op === "update" && typeof e.data?.description === "string") return [`group:${e.group_id}:description:${e.data.description}`];
      if (e.op === "add_members") return e.user_ids.map((u: number) => `group:${e.group_id}:add:${u}`);
      if (e.op === "remove_members") return e.user_ids.map((u: number) => `group:${e.group_id}:remove:${u}`);
      return [];
    case "scheduled_messages":
      if (e.op === "add") return e.scheduled_messages.map((m: any) => `scheduled:add:${m.content}`);
      if (e.op === "remove") return [`scheduled:remove:${e.scheduled_message_id}`];
      return [];
    default:
      return [];
  }
}

/**
 * The state changes an event announces, as (object, new state) pairs. The load's writes only
 * ever change an object (a value is never written twice in a row, an add is refused when the
 * thing exists), so a queue that gets the same state twice in a row for one object got one
 * change twice: the duplicate check for keys that legitimately repeat (add, remove, add).
 */
export function transitionsOf(e: any): Array<[string, string]> {
  switch (e.type) {
    case "reaction":
      return [[`reaction:${e.message_id}:${e.emoji_name}:${e.user_id}`, e.op]];
    case "update_message_flags":
      return e.all ? [] : e.messages.map((id: number) => [`flag:${e.flag}:${id}`, e.op]);
    case "subscription":
      if (e.op === "add" || e.op === "remove") return e.subscriptions.map((s: any) => [`sub:${s.stream_id}`, e.op]);
      if (e.op === "peer_add" || e.op === "peer_remove") return e.stream_ids.flatMap((s: number) => e.user_ids.map((u: number) => [`peer:${s}:${u}`, e.op]));
      return [];
    case "user_group":
      if (e.op === "add_members" || e.op === "remove_members") return e.user_ids.map((u: number) => [`group:${e.group_id}:member:${u}`, e.op]);
      return [];
    case "user_settings":
      return e.op === "update" ? [[`setting:${e.property}`, JSON.stringify(e.value)]] : [];
    default:
      // Every other key of the load carries a value written once: its count says it all.
      return [];
  }
}

/** What one queue got compared with what it was owed: keys short of their minimum, and over their maximum. */
export function compareEvents(got: Map<string, number>, owed: Map<string, Bounds> | undefined) {
  const lost: string[] = [];
  const extra: string[] = [];
  for (const [key, b] of owed ?? []) {
    const n = got.get(key) ?? 0;
    if (n < b.min) lost.push(`${key} (${n} of ${b.min})`);
  }
  for (const [key, n] of got) {
    const max = owed?.get(key)?.max ?? 0;
    if (n > max) extra.push(`${key} (${n}, at most ${max})`);
  }
  return { lost, extra };
}
