import { badRequest, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { accessStreamById, viewerOf, type AccessedStream } from "../queries/streams";
import { hasRowsInTopic, markUnreadRowsRead, type ReadScope } from "../store/usermessages-read";
import { notifyMessageFlagsUpdated } from "./flags";

/**
 * POST /mark_all_as_read, and the channel and topic ones: the user's unread messages in scope
 * become read, announced as POST /messages/flags announces it. Zulip's do_mark_all_as_read sends
 * `all: true` with no message ids (clients drop every unread), even when nothing was unread; its
 * do_mark_stream_messages_as_read lists the ids, and sends nothing when none changed. Returns the
 * ids that changed.
 */
export async function doMarkAsRead(deps: AppDeps, who: Identity, scope: ReadScope): Promise<number[]> {
  const all = scope.streamId === undefined;
  return withTx(deps.pool, async (tx) => {
    const changed = await markUnreadRowsRead(tx, who.realmId, who.userId, scope);
    if (all || changed.length > 0) {
      await notifyMessageFlagsUpdated(tx, who, { op: "add", flag: "read", messages: all ? [] : changed, all });
    }
    return changed;
  });
}

/**
 * POST /mark_stream_as_read and /mark_topic_as_read (Zulip's views of the same names). A topic
 * the user has no message in is refused; an empty topic name means the whole channel, as in
 * Zulip, whose checks skip an empty name.
 */
export async function doMarkStreamAsRead(deps: AppDeps, who: Identity, streamId: number, topicName?: string): Promise<void> {
  const { stream } = await accessStreamForMarking(deps, who, streamId);
  const topic = topicName ? topicName : undefined;
  if (topic !== undefined && !(await hasRowsInTopic(deps.pool, who.realmId, who.userId, stream.id, topic))) {
    throw badRequest(`No such topic '${topic}'`);
  }
  await doMarkAsRead(deps, who, { streamId: stream.id, topic });
}

/**
 * Zulip's access_stream_by_id with its defaults: no exception for administrators, so a private
 * channel is for its subscribers only; anything else is `Invalid channel ID`.
 */
async function accessStreamForMarking(deps: AppDeps, who: Identity, streamId: number): Promise<AccessedStream> {
  const found = await accessStreamById(deps.pool, viewerOf(who), streamId);
  if (found.stream.inviteOnly && !found.sub?.active) throw badRequest("Invalid channel ID");
  return found;
}
