import { INACCESSIBLE_USER_AVATAR_PATH, INACCESSIBLE_USER_NAME, inaccessibleUserEmail, type MessageObject } from "@chat/contracts";
import type { AppDeps } from "../deps";
import { messageObject, reactionObject } from "../lib/format";
import { compileLinkifiers, topicLinks } from "../lib/linkifiers";
import type { MessageRow } from "../store/messages";
import { selectReactions, type ReactionRow } from "../store/reactions";
import { selectDirectParticipants } from "../store/recipients";
import { selectStreamsByIds } from "../store/streams";
import { selectSubmessages, type SubmessageRow } from "../store/submessages";
import { getUsersByIds } from "./users";
import { inaccessibleUsers } from "./user-access";

export interface FormatOptions {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** Who reads them: a guest of an organization that limits guests sees no name of a user they do not access. */
  viewer?: { userId: number; role: number };
}

/** Message dictionaries for one viewer, with their flags (historical ones read + historical). */
export async function formatMessages(
  deps: AppDeps,
  realmId: number,
  items: Array<{ row: MessageRow; flags: number; extra?: Partial<MessageObject> }>,
  opts: FormatOptions,
): Promise<MessageObject[]> {
  if (items.length === 0) return [];
  const realm = await deps.accounts.getRealm(realmId);
  const rows = items.map((i) => i.row);
  const streams = new Map((await selectStreamsByIds(deps.pool, realmId, [...new Set(rows.filter((r) => r.streamId !== null).map((r) => r.streamId!))])).map((s) => [s.id, s]));
  const participants = await selectDirectParticipants(deps.pool, realmId, [...new Set(rows.filter((r) => r.streamId === null).map((r) => r.recipientId))]);
  // All the messages' reactions and submessages in a statement each, however many messages there are.
  const messageIds = rows.map((m) => m.id);
  const [reactionRows, submessageRows] = await Promise.all([selectReactions(deps.pool, realmId, messageIds), selectSubmessages(deps.pool, realmId, messageIds)]);
  const reactions = new Map<number, ReactionRow[]>();
  for (const r of reactionRows) {
    const list = reactions.get(r.messageId);
    if (list) list.push(r);
    else reactions.set(r.messageId, [r]);
  }
  const submessages = new Map<number, SubmessageRow[]>();
  for (const sub of submessageRows) {
    const list = submessages.get(sub.message_id);
    if (list) list.push(sub);
    else submessages.set(sub.message_id, [sub]);
  }
  const userIds = new Set<number>(rows.map((r) => r.senderId));
  for (const ids of participants.values()) for (const id of ids) userIds.add(id);
  for (const list of reactions.values()) for (const r of list) userIds.add(r.userId);
  const users = await getUsersByIds(deps, realmId, [...userIds]);
  const hidden = opts.viewer ? await inaccessibleUsers(deps.pool, realm, opts.viewer, users.values()) : new Set<number>();
  const linkifiers = streams.size > 0 ? compileLinkifiers(await deps.accounts.getLinkifiers(realmId)) : [];
  const formatted = items.map(({ row, flags, extra }) => ({
    ...messageObject(row, {
      sender: users.get(row.senderId),
      streamName: row.streamId !== null ? streams.get(row.streamId)?.name : undefined,
      participants: row.streamId === null ? (participants.get(row.recipientId) ?? []).map((id) => users.get(id)!).filter(Boolean) : undefined,
      realmStr: realm.string_id,
      applyMarkdown: opts.applyMarkdown,
      clientGravatar: opts.clientGravatar,
      flags,
      topicLinks: row.streamId !== null ? topicLinks(row.topic, linkifiers) : [],
      reactions: (reactions.get(row.id) ?? []).map((r) => {
        const reaction = reactionObject(r, users.get(r.userId));
        // Zulip's stand-in for a user the viewer does not access: only the id is real.
        if (hidden.has(r.userId)) reaction.user = { ...reaction.user, email: inaccessibleUserEmail(r.userId, realm.string_id), full_name: INACCESSIBLE_USER_NAME };
        return reaction;
      }),
      allowEditHistory: realm.settings.allow_edit_history,
      submessages: submessages.get(row.id),
      notificationBotId: realm.notification_bot_id,
    }),
    ...extra,
  }));
  if (hidden.size === 0) return formatted;
  for (const m of formatted) {
    if (!hidden.has(m.sender_id)) continue;
    m.sender_full_name = INACCESSIBLE_USER_NAME;
    m.sender_email = inaccessibleUserEmail(m.sender_id, realm.string_id);
    m.avatar_url = INACCESSIBLE_USER_AVATAR_PATH;
  }
  return formatted;
}
