import type { EditHistoryEntry, MessageHistorySnapshot } from "@chat/contracts";
import { badRequest, type Identity } from "@chat/platform";
import type { z } from "zod";
import type { AppDeps } from "../deps";
import { highlightHtmlDifferences } from "../lib/html-diff";
import type { MessageRow } from "../store/messages";
import { accessMessagesById } from "./message-access";
import { viewerOf } from "./streams";

type Snapshot = z.infer<typeof MessageHistorySnapshot>;

/**
 * GET /messages/{id}/history (Zulip's fill_edit_history_entries): each stored edit filled out
 * with the topic and content the message had after it, the original message first.
 */
export async function getMessageHistory(deps: AppDeps, who: Identity, messageId: number): Promise<{ message_history: Snapshot[] }> {
  // Checked first, as Zulip's get_message_edit_history does.
  if (!(await deps.accounts.getRealm(who.realmId)).settings.allow_edit_history) throw badRequest("Message edit history is disabled in this organization");
  const message = (await accessMessagesById(deps.pool, viewerOf(who), [messageId])).get(messageId)?.row;
  if (!message) throw badRequest("Invalid message(s)");
  return { message_history: fillEditHistory(message.editHistory ?? [], message).reverse() };
}

/** Newest first, as stored: walking back from the current content and topic. */
export function fillEditHistory(edits: EditHistoryEntry[], message: Pick<MessageRow, "id" | "content" | "renderedContent" | "topic" | "senderId" | "dateSent">): Snapshot[] {
  let content = message.content;
  let rendered = message.renderedContent;
  let topic = message.topic;
  const out: Snapshot[] = [];
  for (const edit of edits) {
    const entry: Snapshot = { content, rendered_content: rendered, timestamp: edit.timestamp, topic, user_id: edit.user_id };
    if (edit.prev_topic !== undefined) {
      topic = edit.prev_topic;
      entry.prev_topic = topic;
    }
    if (edit.prev_content !== undefined && edit.prev_rendered_content !== undefined) {
      entry.prev_content = edit.prev_content;
      entry.prev_rendered_content = edit.prev_rendered_content;
      entry.content_html_diff = highlightHtmlDifferences(edit.prev_rendered_content, rendered);
      content = edit.prev_content;
      rendered = edit.prev_rendered_content;
    }
    if (edit.prev_stream !== undefined && edit.stream !== undefined) {
      entry.prev_stream = edit.prev_stream;
      entry.stream = edit.stream;
    }
    out.push(entry);
  }
  out.push({ content, rendered_content: rendered, timestamp: Math.floor(message.dateSent.getTime() / 1000), topic, user_id: message.senderId });
  return out;
}
