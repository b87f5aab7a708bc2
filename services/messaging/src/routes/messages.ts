import { DeleteMessage, GetMessage, GetMessages, InternalCheckMessage, InternalSendMessage, RenderMessage, SendMessage } from "@chat/contracts";
import { outboxPublished, registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doDeleteMessage } from "../actions/message-delete";
import { checkMessage, doSendMessage, type SendRequest } from "../actions/messages";
import { renderMarkdown } from "../lib/markdown";
import { buildMentionDirectory } from "../queries/mentions";
import { getMessageById, getMessages } from "../queries/messages";
import { viewerOf } from "../queries/streams";

const sendRequest = (p: { type: string; to: string; content: string; topic?: string; queue_id?: string; local_id?: string; read_by_sender?: boolean }): SendRequest => ({
  type: p.type,
  to: p.to,
  content: p.content,
  topic: p.topic,
  queueId: p.queue_id,
  localId: p.local_id,
  readBySender: p.read_by_sender,
});

export const messageRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, SendMessage, ({ params, identity }) => doSendMessage(deps, identity, sendRequest(params)));

  // The caller (the scheduler) publishes its own events about the message after this answer
  // (a scheduled message's removal): they must reach clients after the message's, and events
  // of two services' outboxes keep no order between them. So the answer waits until this
  // process has published the message's event (bounded by outboxPublished's timeout).
  registerRoute(app, InternalSendMessage, async ({ params, identity }) => {
    const sent = await doSendMessage(deps, identity, sendRequest(params), params.idempotency_key);
    await outboxPublished();
    return sent;
  });

  // The scheduler validates and renders a message it will send later.
  registerRoute(app, InternalCheckMessage, ({ params, identity }) => checkMessage(deps, identity, sendRequest(params)));

  registerRoute(app, GetMessages, ({ params, identity }) =>
    getMessages(deps, identity, {
      anchor: params.anchor,
      includeAnchor: params.include_anchor,
      numBefore: params.num_before,
      numAfter: params.num_after,
      narrow: params.narrow,
      clientGravatar: params.client_gravatar,
      applyMarkdown: params.apply_markdown,
      useFirstUnreadAnchor: params.use_first_unread_anchor,
      messageIds: params.message_ids,
    }),
  );

  registerRoute(app, GetMessage, ({ params, identity }) => getMessageById(deps, identity, params.message_id, params.apply_markdown));

  registerRoute(app, DeleteMessage, async ({ params, identity }) => {
    await doDeleteMessage(deps, identity, params.message_id);
    return {};
  });

  registerRoute(app, RenderMessage, async ({ params, identity }) => {
    const dir = await buildMentionDirectory(deps, viewerOf(identity), params.content);
    return { rendered: renderMarkdown(params.content, dir).html };
  });
};
