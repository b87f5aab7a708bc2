import { ClientNotice, type DomainEnvelope } from "@chat/contracts";
import { InvalidMessageError, type Logger } from "@chat/platform";
import { eventsForQueue, type QueueDescriptor } from "../lib/queue-filter";
import type { QueueStore } from "../store/queues";

/** Queue descriptors never change after creation, so a bounded in-process cache is safe. */
const DESCRIPTOR_CACHE_SIZE = 20_000;

const registrationKeys = new WeakMap<QueueDescriptor, string>();

/** Everything of a queue's registration that decides the form of its copy (see eventsForQueue). */
function registrationKey(q: QueueDescriptor): string {
  let key = registrationKeys.get(q);
  if (key === undefined) {
    key = JSON.stringify([q.eventTypes, q.narrow, q.capabilities, q.applyMarkdown, q.clientGravatar, q.includeSubscribers]);
    registrationKeys.set(q, key);
  }
  return key;
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
  ) {}

  /** The consumer's handler: envelopes without `client` are not for clients. */
  async deliverEnvelope(envelope: DomainEnvelope): Promise<number> {
    const raw = envelope.payload.client;
    if (raw === undefined) return 0;
    const parsed = ClientNotice.safeParse(raw);
    if (!parsed.success) throw new InvalidMessageError(`invalid client notice: ${parsed.error.issues[0]?.message}`);
    return this.doDeliverNotice(envelope.id, envelope.realm_id, parsed.data);
  }

  async doDeliverNotice(envelopeId: string, realmId: number, notice: ClientNotice): Promise<number> {
    const flagsByUser = new Map<number, string[] | undefined>();
    for (const entry of notice.users) {
      if (typeof entry === "number") flagsByUser.set(entry, undefined);
      else flagsByUser.set(entry.id, entry.flags);
    }
    const realmWide = notice.event.type === "message" && notice.public_stream_id !== undefined;
    const { byUser, realm } = await this.store.targets(realmId, [...flagsByUser.keys()], realmWide);

    // Queue -> the receiving user's flags; addressed users override the realm-wide copy.
    const targets = new Map<string, { userId: number | null; flags: string[] | undefined }>();
    for (const q of realm) targets.set(q, { userId: null, flags: [] });
    for (const [userId, queues] of byUser) for (const q of queues) targets.set(q, { userId, flags: flagsByUser.get(userId) });

    const descriptors = await this.descriptors([...targets.keys()]);
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
