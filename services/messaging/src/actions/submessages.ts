import { MessagingSubmessageAdded } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { submessageDataProblem, widgetTypeOf } from "../lib/widgets";
import { messageActionAudience } from "../queries/message-event-audience";
import { firstSubmessage, insertSubmessage } from "../store/submessages";
import { accessLockedMessage } from "./reactions";

/**
 * POST /submessage, as Zulip's process_submessage: the message as for a reaction ("Invalid
 * message(s)"); someone other than its sender only adds to a widget its sender started ("You
 * cannot attach a submessage to this message."); the content must be JSON, and for a poll or a
 * todo list data of that widget's kinds. Then stored, and sent as a `submessage` event to those
 * who have the message.
 */
export async function doAddSubmessage(deps: AppDeps, who: Identity, req: { messageId: number; msgType: string; content: string }): Promise<void> {
  await withTx(deps.pool, async (tx) => {
    const { message } = await accessLockedMessage(tx, who, req.messageId);
    const first = await firstSubmessage(tx, who.realmId, message.id);
    if (message.senderId !== who.userId && (first === null || first.sender_id !== message.senderId)) {
      throw badRequest("You cannot attach a submessage to this message.");
    }
    let data: unknown;
    try {
      data = JSON.parse(req.content);
    } catch {
      throw badRequest("Invalid json for submessage");
    }
    const widget = widgetTypeOf(first);
    const problem = widget ? submessageDataProblem(widget, data, message.senderId === who.userId) : null;
    if (problem) throw badRequest(problem);
    const sub = await insertSubmessage(tx, who.realmId, { message_id: message.id, sender_id: who.userId, msg_type: req.msgType, content: req.content });
    const event = { type: "submessage" as const, msg_type: sub.msg_type, message_id: message.id, submessage_id: sub.id, sender_id: who.userId, content: sub.content };
    await emitEvent(tx, {
      type: "messaging.submessage.added",
      realmId: who.realmId,
      payload: MessagingSubmessageAdded.parse({ message_id: message.id, submessage_id: sub.id, client: { event, users: await messageActionAudience(tx, message) } }),
    });
  });
}
