import { createHash } from "node:crypto";
import { MAX_STREAM_NAME_LENGTH, MessagingStreamDeleted } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { streamObject } from "../lib/format";
import { checkAdministrator } from "../lib/permissions";
import { streamWatchers } from "../queries/audiences";
import { removeDefaultStream } from "./default-streams";
import { findVisibleStreamById, trafficFor, viewerOf } from "../queries/streams";
import { deactivateStream, markStreamMessagesReadForEveryone, selectStreamForUpdate } from "../store/streams";
import { selectSubscriberIds } from "../store/subscriptions";
import { accessBeforeInTx, notifyAccessChangedInTx } from "./user-access";

/**
 * The name a deleted channel takes, as Zulip 9 renames it: 7 hex digits of the SHA-512 of its
 * id, `!DEACTIVATED:`, the old name, cut to the longest name allowed. The old name is free again.
 */
export function deactivatedStreamName(id: number, name: string): string {
  const hash = createHash("sha512").update(String(id)).digest("hex").slice(0, 7);
  return Array.from(`${hash}!DEACTIVATED:${name}`).slice(0, MAX_STREAM_NAME_LENGTH).join("");
}

/**
 * DELETE /streams/{stream_id} (Zulip's do_deactivate_stream): every subscription ends, what was
 * unread there becomes read, and everyone who could see the channel gets a stream delete with its
 * name and privacy as they were. Clients drop the subscription on that event; no subscription
 * remove is sent. A default channel stops being one first.
 */
export async function doDeactivateStream(deps: AppDeps, who: Identity, streamId: number): Promise<void> {
  checkAdministrator(who.role);
  const found = await findVisibleStreamById(deps.pool, viewerOf(who), streamId);
  if (!found) throw badRequest("Invalid channel ID");
  const traffic = (await trafficFor(deps, who.realmId, [found.stream])).get(found.stream.id) ?? null;
  const realm = await deps.accounts.getRealm(who.realmId);
  await withTx(deps.pool, async (tx) => {
    const stream = await selectStreamForUpdate(tx, who.realmId, streamId);
    if (!stream || stream.deactivated) throw badRequest("Invalid channel ID");
    const subscribers = (await selectSubscriberIds(tx, who.realmId, [stream.id])).get(stream.id) ?? [];
    const users = await streamWatchers(deps, stream, subscribers);
    await markStreamMessagesReadForEveryone(tx, who.realmId, stream.id);
    // Guests of an organization that limits them may lose access to users they shared only this channel with.
    const access = await accessBeforeInTx(tx, realm, [], [stream.id]);
    await deactivateStream(tx, who.realmId, stream.id, deactivatedStreamName(stream.id, stream.name));
    await removeDefaultStream(tx, deps, who.realmId, stream.id);
    const event = { type: "stream", op: "delete", streams: [streamObject(stream, traffic)] };
    await emitEvent(tx, {
      type: "messaging.stream.deleted",
      realmId: who.realmId,
      payload: MessagingStreamDeleted.parse({ stream_id: stream.id, client: { event, users } }),
    });
    await notifyAccessChangedInTx(tx, access);
  });
}
