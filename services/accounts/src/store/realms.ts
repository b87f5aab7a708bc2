import type { Queryable } from "@chat/platform";

export interface RealmRow {
  id: number;
  name: string;
  stringId: string;
  description: string;
  dateCreated: Date;
  deactivated: boolean;
  inviteRequired: boolean;
  inviteToRealmPolicy: number;
  inviteToStreamPolicy: number;
  wildcardMentionPolicy: number;
  createPublicStreamPolicy: number;
  createPrivateStreamPolicy: number;
  createWebPublicStreamPolicy: number;
  waitingPeriodThreshold: number;
  messageRetentionDays: number | null;
  mandatoryTopics: boolean;
  enableSpectatorAccess: boolean;
  allowMessageEditing: boolean;
  messageContentEditLimitSeconds: number | null;
  messageContentDeleteLimitSeconds: number | null;
  editTopicPolicy: number;
  moveMessagesBetweenStreamsPolicy: number;
  deleteOwnMessagePolicy: number;
  privateMessagePolicy: number;
  moveMessagesWithinStreamLimitSeconds: number | null;
  moveMessagesBetweenStreamsLimitSeconds: number | null;
  allowEditHistory: boolean;
  botCreationPolicy: number;
  addCustomEmojiPolicy: number;
  userGroupEditPolicy: number;
  defaultLanguage: string;
  digestEmailsEnabled: boolean;
  digestWeekday: number;
  emailChangesDisabled: boolean;
  nameChangesDisabled: boolean;
  avatarChangesDisabled: boolean;
  sendWelcomeEmails: boolean;
  messageContentAllowedInEmailNotifications: boolean;
  inlineImagePreview: boolean;
  inlineUrlEmbedPreview: boolean;
  videoChatProvider: number;
  giphyRating: number;
  enableReadReceipts: boolean;
  presenceDisabled: boolean;
  enableGuestUserIndicator: boolean;
  wantAdvertiseInCommunitiesDirectory: boolean;
  requireUniqueNames: boolean;
  /** New users' addresses must be in one of the organization's realm_domains. */
  emailsRestrictedToDomains: boolean;
  disallowDisposableEmailAddresses: boolean;
  defaultCodeBlockLanguage: string;
  orgType: number;
  /** Channel ids (messaging's); null when disabled. */
  newStreamAnnouncementsStreamId: number | null;
  signupAnnouncementsStreamId: number | null;
  zulipUpdateAnnouncementsStreamId: number | null;
  maxInvitesPerDay: number | null;
  notificationBotId: number | null;
  /** The organization's Jitsi Meet server; null uses the server's. */
  jitsiServerUrl: string | null;
  /** The system group (by name) whose members may create reusable invitation links. */
  createMultiuseInviteGroup: string;
  /** The system group (by name) whose members access every user: role:everyone or role:members. */
  canAccessAllUsersGroup: string;
}

function toRealm(r: any): RealmRow {
  return {
    id: r.id,
    name: r.name,
    stringId: r.string_id,
    description: r.description,
    dateCreated: r.date_created,
    deactivated: r.deactivated,
    inviteRequired: r.invite_required,
    inviteToRealmPolicy: r.invite_to_realm_policy,
    inviteToStreamPolicy: r.invite_to_stream_policy,
    wildcardMentionPolicy: r.wildcard_mention_policy,
    createPublicStreamPolicy: r.create_public_stream_policy,
    createPrivateStreamPolicy: r.create_private_stream_policy,
    createWebPublicStreamPolicy: r.create_web_public_stream_policy,
    waitingPeriodThreshold: r.waiting_period_threshold,
    messageRetentionDays: r.message_retention_days,
    mandatoryTopics: r.mandatory_topics,
    enableSpectatorAccess: r.enable_spectator_access,
    allowMessageEditing: r.allow_message_editing,
    messageContentEditLimitSeconds: r.message_content_edit_limit_seconds,
    messageContentDeleteLimitSeconds: r.message_content_delete_limit_seconds,
    editTopicPolicy: r.edit_topic_policy,
    moveMessagesBetweenStreamsPolicy: r.move_messages_between_streams_policy,
    deleteOwnMessagePolicy: r.delete_own_message_policy,
    privateMessagePolicy: r.private_message_policy,
    moveMessagesWithinStreamLimitSeconds: r.move_messages_within_stream_limit_seconds,
    moveMessagesBetweenStreamsLimitSeconds: r.move_messages_between_streams_limit_seconds,
    allowEditHistory: r.allow_edit_history,
    botCreationPolicy: r.bot_creation_policy,
    addCustomEmojiPolicy: r.add_custom_emoji_policy,
    userGroupEditPolicy: r.user_group_edit_policy,
    defaultLanguage: r.default_language,
    digestEmailsEnabled: r.digest_emails_enabled,
    digestWeekday: r.digest_weekday,
    emailChangesDisabled: r.email_changes_disabled,
    nameChangesDisabled: r.name_changes_disabled,
    avatarChangesDisabled: r.avatar_changes_disabled,
    sendWelcomeEmails: r.send_welcome_emails,
    messageContentAllowedInEmailNotifications: r.message_content_allowed_in_email_notifications,
    inlineImagePreview: r.inline_image_preview,
    inlineUrlEmbedPreview: r.inline_url_embed_preview,
    videoChatProvider: r.video_chat_provider,
    giphyRating: r.giphy_rating,
    enableReadReceipts: r.enable_read_receipts,
    presenceDisabled: r.presence_disabled,
    enableGuestUserIndicator: r.enable_guest_user_indicator,
    wantAdvertiseInCommunitiesDirectory: r.want_advertise_in_communities_directory,
    requireUniqueNames: r.require_unique_names,
    emailsRestrictedToDomains: r.emails_restricted_to_domains,
    disallowDisposableEmailAddresses: r.disallow_disposable_email_addresses,
    defaultCodeBlockLanguage: r.default_code_block_language,
    orgType: r.org_type,
    newStreamAnnouncementsStreamId: r.new_stream_announcements_stream_id === null ? null : Number(r.new_stream_announcements_stream_id),
    signupAnnouncementsStreamId: r.signup_announcements_stream_id === null ? null : Number(r.signup_announcements_stream_id),
    zulipUpdateAnnouncementsStreamId: r.zulip_update_announcements_stream_id === null ? null : Number(r.zulip_update_announcements_stream_id),
    maxInvitesPerDay: r.max_invites_per_day,
    notificationBotId: r.notification_bot_id,
    jitsiServerUrl: r.jitsi_server_url,
    createMultiuseInviteGroup: r.create_multiuse_invite_group,
    canAccessAllUsersGroup: r.can_access_all_users_group,
  };
}

export async function insertRealm(db: Queryable, name: string, stringId: string, now: Date): Promise<RealmRow> {
  const { rows } = await db.query(
    "INSERT INTO realms (name, string_id, date_created) VALUES ($1, $2, $3) RETURNING *",
    [name, stringId, now],
  );
  return toRealm(rows[0]);
}

export async function realmStringIdTaken(db: Queryable, stringId: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM realms WHERE lower(string_id) = lower($1)", [stringId]);
  return (rowCount ?? 0) > 0;
}

export async function getRealm(db: Queryable, realmId: number): Promise<RealmRow | null> {
  const { rows } = await db.query("SELECT * FROM realms WHERE id = $1", [realmId]);
  return rows[0] ? toRealm(rows[0]) : null;
}

/** The organization of a subdomain (its string_id), deactivated or not. */
export async function getRealmByStringId(db: Queryable, stringId: string): Promise<RealmRow | null> {
  const { rows } = await db.query("SELECT * FROM realms WHERE lower(string_id) = lower($1)", [stringId]);
  return rows[0] ? toRealm(rows[0]) : null;
}

/** Locks the realm row: serializes changes that must see a consistent set of users (last owner). */
export async function lockRealm(db: Queryable, realmId: number): Promise<RealmRow | null> {
  const { rows } = await db.query("SELECT * FROM realms WHERE id = $1 FOR UPDATE", [realmId]);
  return rows[0] ? toRealm(rows[0]) : null;
}

export async function setNotificationBot(db: Queryable, realmId: number, botId: number): Promise<void> {
  await db.query("UPDATE realms SET notification_bot_id = $2 WHERE id = $1", [realmId, botId]);
}

/** Organizations not deactivated whose new members wait before they are full members. */
export async function realmIdsWithWaitingPeriod(db: Queryable): Promise<number[]> {
  const { rows } = await db.query("SELECT id FROM realms WHERE NOT deactivated AND waiting_period_threshold > 0 ORDER BY id");
  return rows.map((r) => Number(r.id));
}

/** The only realm, when there is exactly one (server_settings reports it, as a single-org host would). */
export async function getSoleRealm(db: Queryable): Promise<RealmRow | null> {
  const { rows } = await db.query("SELECT * FROM realms WHERE NOT deactivated ORDER BY id LIMIT 2");
  return rows.length === 1 ? toRealm(rows[0]) : null;
}

/**
 * Sets organization settings, each the column of its name. The names are PATCH /realm's
 * contract parameters (never request input), so they may be spliced into the statement.
 */
export async function updateRealmSettings(db: Queryable, realmId: number, values: Map<string, unknown>): Promise<void> {
  if (!values.size) return;
  const names = [...values.keys()];
  for (const name of names) if (!/^[a-z_]+$/.test(name)) throw new Error(`not a realm column: ${name}`);
  const sets = names.map((name, i) => `${name} = $${i + 2}`).join(", ");
  await db.query(`UPDATE realms SET ${sets} WHERE id = $1`, [realmId, ...values.values()]);
}

/** The announcement settings that named a now deleted channel become disabled; returns their names. */
export async function clearAnnouncementChannel(db: Queryable, realmId: number, streamId: number): Promise<string[]> {
  const names = ["new_stream_announcements_stream_id", "signup_announcements_stream_id", "zulip_update_announcements_stream_id"];
  const cleared: string[] = [];
  for (const name of names) {
    const { rowCount } = await db.query(`UPDATE realms SET ${name} = NULL WHERE id = $1 AND ${name} = $2`, [realmId, streamId]);
    if (rowCount) cleared.push(name);
  }
  return cleared;
}
