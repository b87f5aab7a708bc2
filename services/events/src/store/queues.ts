import type { Redis } from "@chat/platform";
import type { QueueDescriptor } from "../lib/queue-filter";
import { scripts } from "./scripts";

/** Redis access for event queues: one function per operation, no decisions. */

/** Keys outlive a queue's deadline by this much, so an absent sweeper leaves nothing forever. */
const TTL_MARGIN_MS = 3600_000;

export interface QueueOwner {
  userId: number;
  realmId: number;
}

export type FetchResult =
  | { kind: "ok"; events: string[] }
  | { kind: "bad" }
  | { kind: "pruned" }
  | { kind: "notin" }
  /** The queue was fetched too recently (see FETCH in scripts.ts): fetch again after `waitMs`. */
  | { kind: "pace"; waitMs: number };

export interface QueueStoreOptions {
  prefix: string;
  maxEvents: number;
  dedupeTtlSeconds: number;
  /** Least time between two blocking fetches of one queue, in ms (0: no pacing). */
  pollMinIntervalMs: number;
}

const descriptorFields = (q: QueueDescriptor, nowMs: number): Array<string | number> => [
  "user_id", q.userId,
  "realm_id", q.realmId,
  "event_types", JSON.stringify(q.eventTypes),
  "narrow", JSON.stringify(q.narrow),
  "all_public_streams", q.allPublicStreams ? 1 : 0,
  "capabilities", JSON.stringify(q.capabilities),
  "apply_markdown", q.applyMarkdown ? 1 : 0,
  "client_gravatar", q.clientGravatar ? 1 : 0,
  "include_subscribers", q.includeSubscribers ? 1 : 0,
  "slim_presence", q.slimPresence ? 1 : 0,
  "lifespan", q.lifespanSecs,
  "created", nowMs,
  "last_connection", nowMs,
  "next_id", 0,
];

function toDescriptor(id: string, h: Record<string, string>): QueueDescriptor | null {
  if (!h.user_id) return null;
  return {
    id,
    userId: Number(h.user_id),
    realmId: Number(h.realm_id),
    eventTypes: JSON.parse(h.event_types ?? "null"),
    narrow: JSON.parse(h.narrow ?? "[]"),
    allPublicStreams: h.all_public_streams === "1",
    capabilities: JSON.parse(h.capabilities ?? "{}"),
    applyMarkdown: h.apply_markdown === "1",
    clientGravatar: h.client_gravatar === "1",
    // Queues stored before this field existed always got subscribers; they keep getting them.
    includeSubscribers: h.include_subscribers !== "0",
    slimPresence: h.slim_presence === "1",
    lifespanSecs: Number(h.lifespan),
  };
}

function fetchResult(reply: unknown): FetchResult {
  const [status, events] = reply as [string, string[] | undefined];
  if (status === "OK") return { kind: "ok", events: events ?? [] };
  if (status === "PRUNED") return { kind: "pruned" };
  if (status === "NOTIN") return { kind: "notin" };
  if (status === "PACE") return { kind: "pace", waitMs: Number(events) };
  return { kind: "bad" };
}

/** Where a notice's audience has its queues: by addressed user, and the realm-wide receivers. */
export interface Targets {
  byUser: Map<number, string[]>;
  realm: string[];
}

/** One envelope's fan-out (see `fanOut`). */
export interface FanOutItem {
  envelopeId: string;
  variants: string[][];
  pairs: Array<[string, number]>;
}

/** Most queues one fan-out script call writes (see `fanOut`). */
const FANOUT_PART = 2_000;

/** FNV-1a over a string's UTF-16 code units: a stable, cheap spread of queue ids over parts. */
function stringHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Most polls one READ_MANY call answers (a longer script would hold Redis for too long). */
const READ_BATCH = 500;

interface PendingRead {
  args: [string, number, number, string];
  resolve: (result: FetchResult) => void;
  reject: (err: unknown) => void;
}

export class QueueStore {
  /** Reads waiting for this turn's batch (see `read`). */
  private pendingReads: PendingRead[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly opts: QueueStoreOptions,
  ) {}

  get prefix(): string {
    return this.opts.prefix;
  }

  /** The pub/sub channel that wakes polls of a queue. */
  wakeChannel(queueId: string): string {
    return `${this.opts.prefix}wake:${queueId}`;
  }

  private ttl(lifespanSecs: number): number {
    // A negative lifespan (the queue is due at once) still keeps the keys until a sweep.
    return Math.max(lifespanSecs, 0) * 1000 + TTL_MARGIN_MS;
  }

  /** Creates the queue with its indexes; `realmWide` adds it to the realm's public-channel receivers. */
  async create(q: QueueDescriptor, realmWide: boolean, nowMs: number): Promise<void> {
    await scripts.create.run(this.redis, [
      this.opts.prefix, q.id, q.userId, q.realmId, realmWide ? 1 : 0,
      nowMs + q.lifespanSecs * 1000, this.ttl(q.lifespanSecs), ...descriptorFields(q, nowMs),
    ]);
  }

  async fetch(
    queueId: string,
    owner: QueueOwner,
    lastEventId: number | undefined,
    token: string,
    block: { nowMs: number; waitUntilMs: number } | null,
  ): Promise<FetchResult> {
    const reply = await scripts.fetch.run(this.redis, [
      this.opts.prefix, queueId, owner.userId, owner.realmId, lastEventId ?? "", token,
      block ? 1 : 0, block?.nowMs ?? 0, block?.waitUntilMs ?? 0, TTL_MARGIN_MS, this.opts.pollMinIntervalMs,
    ]);
    return fetchResult(reply);
  }

  /**
   * A woken poll's read of its queue. Reads asked for in the same turn of the event loop go to
   * Redis together, up to READ_BATCH per script call: one event to 10,000 waiting polls wakes
   * them all at once, and one call per poll was a tenth of the events service's work then.
   */
  read(queueId: string, owner: QueueOwner, token: string): Promise<FetchResult> {
    return new Promise((resolve, reject) => {
      this.pendingReads.push({ args: [queueId, owner.userId, owner.realmId, token], resolve, reject });
      if (this.pendingReads.length === 1) setImmediate(() => this.flushReads());
    });
  }

  private flushReads(): void {
    const pending = this.pendingReads;
    this.pendingReads = [];
    for (let i = 0; i < pending.length; i += READ_BATCH) {
      const batch = pending.slice(i, i + READ_BATCH);
      const args: Array<string | number> = [this.opts.prefix, batch.length];
      for (const r of batch) args.push(...r.args);
      scripts.readMany.run(this.redis, args).then(
        (replies) => batch.forEach((r, k) => r.resolve(fetchResult((replies as unknown[])[k]))),
        (err: unknown) => batch.forEach((r) => r.reject(err)),
      );
    }
  }

  async heartbeat(queueId: string, owner: QueueOwner, token: string): Promise<FetchResult> {
    return fetchResult(
      await scripts.heartbeat.run(this.redis, [this.opts.prefix, queueId, owner.userId, owner.realmId, token, this.opts.maxEvents]),
    );
  }

  async endPoll(queueId: string, token: string): Promise<void> {
    await scripts.endPoll.run(this.redis, [this.opts.prefix, queueId, token]);
  }

  /** Removes the queue (waking its poll); false when it does not exist or is not the owner's. */
  async delete(queueId: string, owner: QueueOwner): Promise<boolean> {
    return (await scripts.delete.run(this.redis, [this.opts.prefix, queueId, owner.userId, owner.realmId])) === 1;
  }

  async pruneTo(queueId: string, eventId: number): Promise<void> {
    await scripts.pruneTo.run(this.redis, [this.opts.prefix, queueId, eventId]);
  }

  /** The queue's descriptor, or null when it does not exist. */
  async descriptor(queueId: string): Promise<QueueDescriptor | null> {
    return toDescriptor(queueId, await this.redis.hgetall(`${this.opts.prefix}q:${queueId}`));
  }

  async descriptors(queueIds: string[]): Promise<Map<string, QueueDescriptor>> {
    const out = new Map<string, QueueDescriptor>();
    if (queueIds.length === 0) return out;
    const pipe = this.redis.pipeline();
    for (const id of queueIds) pipe.hgetall(`${this.opts.prefix}q:${id}`);
    const replies = (await pipe.exec()) ?? [];
    replies.forEach(([err, h], i) => {
      if (err) throw err;
      const d = toDescriptor(queueIds[i], h as Record<string, string>);
      if (d) out.set(queueIds[i], d);
    });
    return out;
  }

  /** The queues of these users, and (when asked) the realm's public-channel receivers. One round trip. */
  async targets(realmId: number, userIds: number[], realmWide: boolean): Promise<Targets> {
    return (await this.targetsMany([{ realmId, userIds, realmWide }]))[0];
  }

  /** `targets` for several audiences at once, in one round trip. */
  async targetsMany(audiences: Array<{ realmId: number; userIds: number[]; realmWide: boolean }>): Promise<Targets[]> {
    const pipe = this.redis.pipeline();
    for (const { realmId, userIds, realmWide } of audiences) {
      for (const uid of userIds) pipe.smembers(`${this.opts.prefix}u:${realmId}:${uid}`);
      if (realmWide) pipe.smembers(`${this.opts.prefix}r:${realmId}`);
    }
    const replies = (await pipe.exec()) ?? [];
    let next = 0;
    const take = (): string[] => {
      const [err, ids] = replies[next++];
      if (err) throw err;
      return ids as string[];
    };
    return audiences.map(({ userIds, realmWide }) => {
      const byUser = new Map<number, string[]>();
      for (const uid of userIds) byUser.set(uid, take());
      return { byUser, realm: realmWide ? take() : [] };
    });
  }

  /** How many queues the deployment holds (all instances share them). */
  async count(): Promise<number> {
    return this.redis.zcard(`${this.opts.prefix}expiry`);
  }

  /** Every queue id known to this deployment (restart notices only; not for hot paths). */
  async allQueueIds(): Promise<string[]> {
    return this.redis.zrange(`${this.opts.prefix}expiry`, 0, -1);
  }

  /**
   * Appends events to many queues in one atomic script call, at most once per envelope id.
   * `variants` are the distinct event lists (JSON, without ids); `pairs` name each queue's variant.
   */
  async fanOut(envelopeId: string, variants: string[][], pairs: Array<[string, number]>): Promise<number> {
    const parts = Math.ceil(pairs.length / FANOUT_PART);
    if (parts <= 1) return this.fanOutPart(envelopeId, variants, pairs);
    // A large fan-out goes in parts, one after another: Redis sends a part's wake-ups as soon as
    // that part has run, so this instance answers those polls while Redis writes the next part
    // (one script for 10,000 queues held Redis for about 240 ms before the first poll heard).
    // A queue's part follows from its id alone, so a redelivery puts it in the same part, and
    // each part is delivered at most once. The part count is in that key too: a redelivery
    // that finds so many more or fewer queues that the count changed delivers again
    // (duplicates, which clients drop by message id, rather than losses).
    const byPart: Array<Array<[string, number]>> = Array.from({ length: parts }, () => []);
    for (const pair of pairs) byPart[stringHash(pair[0]) % parts].push(pair);
    let written = -1;
    for (let i = 0; i < parts; i++) {
      const n = await this.fanOutPart(`${envelopeId}:${parts}:${i}`, variants, byPart[i]);
      if (n >= 0) written = Math.max(written, 0) + n;
    }
    return written;
  }

  /**
   * Several envelopes' `fanOut`s, in order: consecutive small ones go to Redis together, one
   * round trip for up to FANOUT_PART queues in all (Redis sends their wake-ups only after
   * running what one read brought, so a round trip's work stays about one part's), a large one
   * on its own, in parts. Returns each one's `fanOut` result.
   */
  async fanOutMany(items: FanOutItem[]): Promise<number[]> {
    const out: number[] = [];
    let small: FanOutItem[] = [];
    let queued = 0;
    const flush = async () => {
      if (small.length === 0) return;
      const argLists = small.filter((it) => it.pairs.length > 0).map((it) => this.fanOutArgs(it.envelopeId, it.variants, it.pairs));
      const replies = argLists.length > 0 ? await scripts.fanOut.runMany(this.redis, argLists) : [];
      let k = 0;
      for (const it of small) out.push(it.pairs.length > 0 ? Number(replies[k++]) : 0);
      small = [];
      queued = 0;
    };
    for (const it of items) {
      if (it.pairs.length > FANOUT_PART) {
        await flush();
        out.push(await this.fanOut(it.envelopeId, it.variants, it.pairs));
        continue;
      }
      if (queued + it.pairs.length > FANOUT_PART) await flush();
      small.push(it);
      queued += it.pairs.length;
    }
    await flush();
    return out;
  }

  private fanOutArgs(dedupeId: string, variants: string[][], pairs: Array<[string, number]>): Array<string | number> {
    const args: Array<string | number> = [this.opts.prefix, dedupeId, this.opts.dedupeTtlSeconds, this.opts.maxEvents, variants.length];
    for (const v of variants) args.push(v.length, ...v);
    for (const [q, v] of pairs) args.push(q, v + 1);
    return args;
  }

  private async fanOutPart(dedupeId: string, variants: string[][], pairs: Array<[string, number]>): Promise<number> {
    if (pairs.length === 0) return 0;
    return Number(await scripts.fanOut.run(this.redis, this.fanOutArgs(dedupeId, variants, pairs)));
  }

  async broadcast(eventJson: string, queueIds: string[]): Promise<number> {
    if (queueIds.length === 0) return 0;
    return Number(await scripts.broadcast.run(this.redis, [this.opts.prefix, eventJson, this.opts.maxEvents, ...queueIds]));
  }

  /**
   * Drops every queue of a user (their polls get BAD_EVENT_QUEUE_ID), once per `dedupeKey`.
   * Returns the number dropped, or -1 when that key was already used.
   */
  async dropUserQueues(realmId: number, userId: number, dedupeKey: string): Promise<number> {
    return Number(await scripts.dropUser.run(this.redis, [this.opts.prefix, dedupeKey, this.opts.dedupeTtlSeconds, realmId, userId]));
  }

  /** Drops those of the given queues that belong to the realm; returns how many. */
  async dropQueuesInRealm(realmId: number, queueIds: string[]): Promise<number> {
    if (queueIds.length === 0) return 0;
    return Number(await scripts.dropInRealm.run(this.redis, [this.opts.prefix, realmId, ...queueIds]));
  }

  /**
   * One page of every queue id (ZSCAN of the expiry index: a queue present for the whole scan
   * is returned at least once). Start with cursor "0"; the scan is done when it returns "0".
   */
  async scanQueueIds(cursor: string, count: number): Promise<{ cursor: string; ids: string[] }> {
    const [next, flat] = await this.redis.zscan(`${this.opts.prefix}expiry`, cursor, "COUNT", count);
    const ids: string[] = [];
    for (let i = 0; i < flat.length; i += 2) ids.push(flat[i]);
    return { cursor: next, ids };
  }

  /** Whether a marker was recorded (see `mark`). */
  async isMarked(key: string): Promise<boolean> {
    return (await this.redis.exists(`${this.opts.prefix}seen:${key}`)) === 1;
  }

  /** Records a handled domain event for the dedupe period. */
  async mark(key: string): Promise<void> {
    await this.redis.set(`${this.opts.prefix}seen:${key}`, "1", "EX", this.opts.dedupeTtlSeconds);
  }

  /** Removes up to `limit` expired queues; returns their ids. */
  async sweep(nowMs: number, limit: number): Promise<string[]> {
    return (await scripts.sweep.run(this.redis, [this.opts.prefix, nowMs, limit])) as string[];
  }

  /** Stores a deployment-wide value and returns the previous one, atomically. */
  async getSet(key: string, value: string): Promise<string | null> {
    return this.redis.set(this.opts.prefix + key, value, "GET");
  }
}
