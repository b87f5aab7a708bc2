import { ClientNotice, type DomainEnvelope } from "@chat/contracts";
import { InvalidMessageError, observeDeliveryLag, systemClock, type Clock, type Logger } from "@chat/platform";
import { eventsForQueue, type QueueDescriptor } from "../lib/queue-filter";
import type { QueueStore, Targets } from "../store/queues";

/** Queue descriptors never change after creation, so a bounded in-process cache is safe. */
const DESCRIPTOR_CACHE_SIZE = 20_000;

const registrationKeys = new WeakMap<QueueDescriptor, string>();

/** Everything of a queue's registration that decides the form of its copy (see eventsForQueue). */
function registrationKey(q: QueueDescriptor): string {
  let key = registrationKeys.get(q);
  if (key === undefined) {
    key = JSON.stringify([q.eventTypes, q.narrow, q.capabilities, q.applyMarkdown, q.clientGravatar, q.includeSubscribers, q.slimPresence]);
    registrationKeys.set(q, key);
  }
  return key;
}

/** An envelope's client notice; null when it has none (not for clients). */
function clientNotice(envelope: DomainEnvelope): ClientNotice | null {
  const raw = envelope.payload.client;
  if (raw === undefined) return null;
  const parsed = ClientNotice.safeParse(raw);
  if (!parsed.success) throw new InvalidMessageError(`invalid client notice: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** Whom a notice addresses: users with their flags, and whether realm-wide receivers get it too. */
function audienceOf(realmId: number, notice: ClientNotice) {
  const flagsByUser = new Map<number, string[] | undefined>();
  for (const entry of notice.users) {
    if (typeof entry === "number") flagsByUser.set(entry, undefined);
    else flagsByUser.set(entry.id, entry.flags);
  }
  return { realmId, flagsByUser, realmWide: notice.event.type === "message" && notice.public_stream_id !== undefined };
}

type TargetQueues = Map<string, { userId: number | null; flags: string[] | undefined }>;

/** Queue -> the receiving user's flags; addressed users override the realm-wide copy. */
function targetQueues(found: Targets, flagsByUser: Map<number, string[] | undefined>): TargetQueues {
  const targets: TargetQueues = new Map();
  for (const q of found.realm) targets.set(q, { userId: null, flags: [] });
  for (const [userId, queues] of found.byUser) for (const q of queues) targets.set(q, { userId, flags: flagsByUser.get(userId) });
  return targets;
}

/**
 * Each target queue's copy of the notice (filters, markdown, flags, local echo) as the
 * distinct event lists (`variants`, JSON texts) and which one each queue gets (`pairs`).
 */
function shapeCopies(realmId: number, notice: ClientNotice, targets: TargetQueues, descriptors: Map<string, QueueDescriptor>) {
  const variants: string[][] = [];
  const variantIndex = new Map<string, number>();
  // Queues registered alike whose users got the same flags receive the same copy: it is
  // shaped and serialized once per such group (-1: the group takes nothing), not per queue.
  const byShape = new Map<string, number>();
  const variantFor = (events: string[]): number => {
    if (events.length === 0) return -1;
    const key = events.join("\n");
    let index = variantIndex.get(key);
    if (index === undefined) {
      index = variants.length;
      variants.push(events);
      variantIndex.set(key, index);
    }
    return index;
  };
  const pairs: Array<[string, number]> = [];
  for (const [queueId, target] of targets) {
    const queue = descriptors.get(queueId);
    if (!queue || queue.realmId !== realmId || (target.userId !== null && queue.userId !== target.userId)) continue;
    // The sender's own queue gets its local echo ids: a copy of its own.
    const shape = notice.sender_queue?.queue_id === queueId ? null : `${target.flags?.join(",") ?? "-"}|${registrationKey(queue)}`;
    let index = shape === null ? undefined : byShape.get(shape);
    if (index === undefined) {
      index = variantFor(eventsForQueue(queue, notice, target.flags).map((e) => JSON.stringify(e)));
      if (shape !== null) byShape.set(shape, index);
    }
    if (index >= 0) pairs.push([queueId, index]);
  }
  return { variants, pairs };
}

/**
 * Delivers client notices into queues: resolves the audience's queues (one round trip), shapes
 * the event per queue (filters, markdown, flags, local echo), then writes every queue's copy in
 * one atomic script call that also records the envelope id, so a redelivery writes nothing.
 */
export class Deliverer {
  private readonly cache = new Map<string, QueueDescriptor>();

  constructor(
    private readonly store: QueueStore,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  /** `events_delivery_lag_seconds` for an envelope whose copies were just written. */
  private delivered(envelope: Pick<DomainEnvelope, "occurred_at">): void {
    const created = Date.parse(envelope.occurred_at);
    if (Number.isFinite(created)) observeDeliveryLag((this.clock.now().getTime() - created) / 1000);
  }

  /** The consumer's handler: envelopes without `client` are not for clients. */
  async deliverEnvelope(envelope: DomainEnvelope): Promise<number> {
    const notice = clientNotice(envelope);
    if (!notice) return 0;
    const written = await this.doDeliverNotice(envelope.id, envelope.realm_id, notice);
    if (written > 0) this.delivered(envelope);
    return written;
  }

  /**
   * The consumer's batch handler: several envelopes' notices, in order, with one Redis round
   * trip for all their audiences and one for all their writes (a large fan-out still goes on
   * its own, in parts). Each envelope is still written at most once.
   */
  async deliverEnvelopes(envelopes: DomainEnvelope[]): Promise<void> {
    const notices: Array<{ envelope: DomainEnvelope; notice: ClientNotice }> = [];
    for (const envelope of envelopes) {
      const notice = clientNotice(envelope);
      if (notice) notices.push({ envelope, notice });
    }
    if (notices.length === 0) return;
    const audiences = notices.map(({ envelope, notice }) => audienceOf(envelope.realm_id, notice));
    const targets = await this.store.targetsMany(audiences.map((a) => ({ realmId: a.realmId, userIds: [...a.flagsByUser.keys()], realmWide: a.realmWide })));
    const queued = targets.map((t, i) => targetQueues(t, audiences[i].flagsByUser));
    const descriptors = await this.descriptors([...new Set(queued.flatMap((q) => [...q.keys()]))]);
    const items = notices.map(({ envelope, notice }, i) => ({
      envelopeId: envelope.id,
      ...shapeCopies(envelope.realm_id, notice, queued[i], descriptors),
    }));
    const written = await this.store.fanOutMany(items);
    written.forEach((n, i) => {
      if (n < 0) this.log.debug({ envelopeId: items[i].envelopeId }, "client notice already delivered; skipped");
      else if (n > 0) this.delivered(notices[i].envelope);
    });
  }

  async doDeliverNotice(envelopeId: string, realmId: number, notice: ClientNotice): Promise<number> {
    const audience = audienceOf(realmId, notice);
    const found = await this.store.targets(realmId, [...audience.flagsByUser.keys()], audience.realmWide);
    const targets = targetQueues(found, audience.flagsByUser);
    const descriptors = await this.descriptors([...targets.keys()]);
    const { variants, pairs } = shapeCopies(realmId, notice, targets, descriptors);
    if (pairs.length === 0) return 0;
    const written = await this.store.fanOut(envelopeId, variants, pairs);
    if (written < 0) this.log.debug({ envelopeId }, "client notice already delivered; skipped");
    return Math.max(written, 0);
  }

  private async descriptors(queueIds: string[]): Promise<Map<string, QueueDescriptor>> {
    const out = new Map<string, QueueDescriptor>();
    const missing: string[] = [];
    for (const id of queueIds) {
      const d = this.cache.get(id);
      if (d) out.set(id, d);
      else missing.push(id);
    }
    const loaded = await this.store.descriptors(missing);
    for (const [id, d] of loaded) {
      out.set(id, d);
      if (this.cache.size >= DESCRIPTOR_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(id, d);
    }
    return out;
  }
}
