import { z } from "zod";
import type { DomainEnvelope } from "@chat/contracts";
import { InvalidMessageError, type Logger } from "@chat/platform";
import type { QueueStore } from "../store/queues";

/** Queue ids read per ZSCAN page when an organization's queues are looked for. */
const REALM_SCAN_PAGE = 1000;

// Only the ids matter here; the full payload schemas are strict, and a field added to them
// must not stop queues from being dropped.
const UserDeactivated = z.object({ user: z.object({ user_id: z.number().int(), realm_id: z.number().int() }) });
const RealmDeactivated = z.object({ realm_id: z.number().int() });

/** Routing keys after which queues must go. */
export const DEACTIVATION_TYPES = ["accounts.user.deactivated", "accounts.realm.deactivated"] as const;

/**
 * A deactivated account (or organization) keeps no event queue: each is dropped, so a waiting
 * poll ends with BAD_EVENT_QUEUE_ID, later polls get the same, and nothing more is delivered to
 * it. Runs in the client-events consumer after the envelope's own notice was delivered, so it is
 * ordered with every other client event. Once per envelope id: a redelivery after the user was
 * reactivated must not drop their new queues. Returns the number of queues dropped.
 */
export async function doDropDeactivatedQueues(store: QueueStore, log: Logger, envelope: DomainEnvelope): Promise<number> {
  const dedupeKey = `${envelope.id}:drop`;
  if (envelope.type === "accounts.user.deactivated") {
    const parsed = UserDeactivated.safeParse(envelope.payload);
    if (!parsed.success) throw new InvalidMessageError(`invalid ${envelope.type} payload: ${parsed.error.issues[0]?.message}`);
    const { user_id: userId, realm_id: realmId } = parsed.data.user;
    const n = await store.dropUserQueues(realmId, userId, dedupeKey);
    if (n > 0) log.info({ realmId, userId, queues: n }, "event queues of a deactivated user dropped");
    return Math.max(n, 0);
  }
  if (envelope.type === "accounts.realm.deactivated") {
    const parsed = RealmDeactivated.safeParse(envelope.payload);
    if (!parsed.success) throw new InvalidMessageError(`invalid ${envelope.type} payload: ${parsed.error.issues[0]?.message}`);
    if (await store.isMarked(dedupeKey)) return 0;
    const realmId = parsed.data.realm_id;
    // No index holds an organization's queues (only its users' sets), and this is rare: scan all.
    // A crash midway leaves no mark, so the redelivery scans again; dropping is idempotent.
    let dropped = 0;
    let cursor = "0";
    do {
      const page = await store.scanQueueIds(cursor, REALM_SCAN_PAGE);
      dropped += await store.dropQueuesInRealm(realmId, page.ids);
      cursor = page.cursor;
    } while (cursor !== "0");
    await store.mark(dedupeKey);
    log.info({ realmId, queues: dropped }, "event queues of a deactivated organization dropped");
    return dropped;
  }
  return 0;
}
