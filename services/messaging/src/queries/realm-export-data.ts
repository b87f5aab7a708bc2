import type { Queryable } from "@chat/platform";

/**
 * What a public data export holds of messaging's tables (Zulip's public export): the public
 * channels with their subscribers, their messages with reactions and widget submessages, the
 * uploads those messages link to, and the custom emoji. Private channels and direct messages
 * are left out.
 */

const seconds = (d: Date | null) => (d === null ? null : Math.floor(d.getTime() / 1000));

export async function selectPublicChannels(db: Queryable, realmId: number) {
  const { rows } = await db.query(
    `SELECT s.*, COALESCE((SELECT array_agg(sub.user_id ORDER BY sub.user_id) FROM subscriptions sub
                            WHERE sub.stream_id = s.id AND sub.active), '{}') AS subscribers
       FROM streams s WHERE s.realm_id = $1 AND NOT s.invite_only ORDER BY s.id`,
    [realmId],
  );
  return rows.map((r) => ({
    stream_id: Number(r.id),
    name: r.name as string,
    description: r.description as string,
    date_created: seconds(r.date_created),
    creator_id: r.creator_id === null ? null : Number(r.creator_id),
    is_web_public: r.is_web_public as boolean,
    history_public_to_subscribers: r.history_public_to_subscribers as boolean,
    message_retention_days: r.message_retention_days as number | null,
    subscribers: (r.subscribers as string[]).map(Number),
  }));
}

export type ExportedMessage = Awaited<ReturnType<typeof selectPublicMessagesPage>>[number];

/** Up to `limit` messages of the public channels with ids above `afterId`, oldest first. */
export async function selectPublicMessagesPage(db: Queryable, realmId: number, afterId: number, limit: number) {
  const { rows } = await db.query(
    `SELECT m.id, m.sender_id, m.stream_id, m.topic, m.content, m.rendered_content, m.sending_client, m.date_sent, m.last_edit_time,
            COALESCE((SELECT json_agg(json_build_object('user_id', r.user_id, 'emoji_name', r.emoji_name, 'emoji_code', r.emoji_code,
                                                        'reaction_type', r.reaction_type) ORDER BY r.id)
                        FROM reactions r WHERE r.message_id = m.id), '[]') AS reactions,
            COALESCE((SELECT json_agg(json_build_object('id', sm.id, 'sender_id', sm.sender_id, 'msg_type', sm.msg_type,
                                                        'content', sm.content) ORDER BY sm.id)
                        FROM submessages sm WHERE sm.message_id = m.id), '[]') AS submessages
       FROM messages m JOIN streams s ON s.id = m.stream_id
      WHERE m.realm_id = $1 AND s.realm_id = $1 AND NOT s.invite_only AND m.id > $2
      ORDER BY m.id LIMIT $3`,
    [realmId, afterId, limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    sender_id: Number(r.sender_id),
    stream_id: Number(r.stream_id),
    topic: r.topic as string,
    content: r.content as string,
    rendered_content: r.rendered_content as string,
    sending_client: r.sending_client as string,
    date_sent: seconds(r.date_sent),
    last_edit_time: seconds(r.last_edit_time),
    reactions: (r.reactions as Array<Record<string, unknown>>).map((x) => ({ ...x, user_id: Number(x.user_id) })),
    submessages: (r.submessages as Array<Record<string, unknown>>).map((x) => ({ ...x, id: Number(x.id), sender_id: Number(x.sender_id) })),
  }));
}

/** The uploads linked from messages of the public channels, with those messages' ids. */
export async function selectPublicAttachments(db: Queryable, realmId: number) {
  const { rows } = await db.query(
    `SELECT a.*, array_agg(am.message_id ORDER BY am.message_id) AS message_ids
       FROM attachments a
       JOIN attachment_messages am ON am.attachment_id = a.id
       JOIN messages m ON m.id = am.message_id
       JOIN streams s ON s.id = m.stream_id
      WHERE a.realm_id = $1 AND NOT s.invite_only
      GROUP BY a.id ORDER BY a.id`,
    [realmId],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    path_id: r.path_id as string,
    file_name: r.file_name as string,
    content_type: r.content_type as string,
    size: Number(r.size),
    create_time: seconds(r.create_time),
    owner_id: Number(r.owner_id),
    message_ids: (r.message_ids as string[]).map(Number),
  }));
}

/** How much a public export of the organization would hold: its messages and linked uploads' bytes. */
export async function publicExportSize(db: Queryable, realmId: number): Promise<{ messages: number; uploadBytes: number }> {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM messages m JOIN streams s ON s.id = m.stream_id WHERE m.realm_id = $1 AND NOT s.invite_only)::bigint AS messages,
            (SELECT COALESCE(sum(size), 0) FROM attachments WHERE realm_id = $1)::bigint AS upload_bytes`,
    [realmId],
  );
  return { messages: Number(rows[0].messages), uploadBytes: Number(rows[0].upload_bytes) };
}
