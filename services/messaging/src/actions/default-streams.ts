import { MessagingDefaultStreamsUpdated } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { checkAdministrator, isGuestRole } from "../lib/permissions";
import { defaultStreamObjects } from "../queries/default-streams";
import { accessStreamById, viewerOf } from "../queries/streams";
import { getActiveRealmUsers } from "../queries/users";
import { deleteDefaultStream, insertDefaultStream } from "../store/default-streams";

/** The whole new list of default channels to every active non-guest user (Zulip's notify_default_streams). */
export async function notifyDefaultStreams(tx: Queryable, deps: AppDeps, realmId: number): Promise<void> {
  const event = { type: "default_streams", default_streams: await defaultStreamObjects(deps, tx, realmId) };
  const users = (await getActiveRealmUsers(deps, realmId)).filter((u) => !isGuestRole(u.role)).map((u) => u.id);
  await emitEvent(tx, {
    type: "messaging.default_streams.updated",
    realmId,
    payload: MessagingDefaultStreamsUpdated.parse({ client: { event, users } }),
  });
}

/** Makes a channel a default one inside the caller's transaction; says nothing if it already was. */
export async function addDefaultStream(tx: Queryable, deps: AppDeps, realmId: number, streamId: number): Promise<void> {
  if (await insertDefaultStream(tx, realmId, streamId)) await notifyDefaultStreams(tx, deps, realmId);
}

/** Inside the caller's transaction; says nothing if the channel was not a default one. */
export async function removeDefaultStream(tx: Queryable, deps: AppDeps, realmId: number, streamId: number): Promise<void> {
  if (await deleteDefaultStream(tx, realmId, streamId)) await notifyDefaultStreams(tx, deps, realmId);
}

/**
 * POST /default_streams: administrators only, a channel they can access (a private one only as a
 * subscriber, as Zulip's access_stream_by_id has it), and never a private one.
 */
export async function doAddDefaultStream(deps: AppDeps, who: Identity, streamId: number): Promise<void> {
  checkAdministrator(who.role);
  const { stream, sub } = await accessStreamById(deps.pool, viewerOf(who), streamId);
  if (stream.inviteOnly && !sub?.active) throw badRequest("Invalid channel ID");
  if (stream.inviteOnly) throw badRequest("Private channels cannot be made default.");
  await withTx(deps.pool, (tx) => addDefaultStream(tx, deps, who.realmId, stream.id));
}

/** DELETE /default_streams: administrators only; removing a channel that is not a default one is no error. */
export async function doRemoveDefaultStream(deps: AppDeps, who: Identity, streamId: number): Promise<void> {
  checkAdministrator(who.role);
  const { stream } = await accessStreamById(deps.pool, viewerOf(who), streamId);
  await withTx(deps.pool, (tx) => removeDefaultStream(tx, deps, who.realmId, stream.id));
}
