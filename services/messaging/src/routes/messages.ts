import {
  DeleteMessage,
  GetMessage,
  GetMessageHistory,
  GetMessages,
  InternalCheckMessage,
  InternalSendMessage,
  InternalSentMessage,
  RenderMessage,
  SendMessage,
  UpdateMessage,
} from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { doDeleteMessage } from "../actions/message-delete";
import { doUpdateMessage } from "../actions/message-edit";
import { checkMessage, doInternalSend, doSendMessage, type SendRequest } from "../actions/messages";
import { renderMessageContent } from "../lib/markdown";
import { buildMentionDirectory } from "../queries/mentions";
import { getMessageHistory } from "../queries/message-history";
import { getMessageById, getMessages } from "../queries/messages";
import { getSentMessageId } from "../queries/sent-messages";
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

  registerRoute(app, InternalSendMessage, ({ params, identity }) => doInternalSend(deps, identity, sendRequest(params), params.idempotency_key));

  registerRoute(app, InternalSentMessage, async ({ params }) => ({
    id: await getSentMessageId(deps, params.realm_id, params.sender_id, params.idempotency_key),
  }));

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

  registerRoute(app, UpdateMessage, async ({ params, identity }) => {
    await doUpdateMessage(deps, identity, {
      messageId: params.message_id,
      content: params.content,
      topic: params.topic,
      streamId: params.stream_id,
      propagateMode: params.propagate_mode as "change_one" | "change_later" | "change_all",
      notifyOldThread: params.send_notification_to_old_thread,
      notifyNewThread: params.send_notification_to_new_thread,
    });
    return {};
  });

  registerRoute(app, GetMessageHistory, ({ params, identity }) => getMessageHistory(deps, identity, params.message_id));

  registerRoute(app, DeleteMessage, async ({ params, identity }) => {
    await doDeleteMessage(deps, identity, params.message_id);
    return {};
  });

  registerRoute(app, RenderMessage, async ({ params, identity }) => {
    const dir = await buildMentionDirectory(deps, viewerOf(identity), params.content);
    return { rendered: renderMessageContent(params.content, dir).html };
  });
};
