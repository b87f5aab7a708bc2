import type { InternalRealm, RealmSettings } from "@chat/contracts";
import { badRequest } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { getRealm, type RealmRow } from "../store/realms";
import { systemGroupIds } from "../store/user-groups";

export function realmSettings(r: RealmRow, defaultInviteLimit: number): RealmSettings {
  return {
    wildcard_mention_policy: r.wildcardMentionPolicy,
    invite_to_realm_policy: r.inviteToRealmPolicy,
    invite_to_stream_policy: r.inviteToStreamPolicy,
    create_public_stream_policy: r.createPublicStreamPolicy,
    create_private_stream_policy: r.createPrivateStreamPolicy,
    create_web_public_stream_policy: r.createWebPublicStreamPolicy,
    waiting_period_threshold: r.waitingPeriodThreshold,
    message_retention_days: r.messageRetentionDays,
    invite_required: r.inviteRequired,
    mandatory_topics: r.mandatoryTopics,
    enable_spectator_access: r.enableSpectatorAccess,
    allow_message_editing: r.allowMessageEditing,
    message_content_edit_limit_seconds: r.messageContentEditLimitSeconds,
    message_content_delete_limit_seconds: r.messageContentDeleteLimitSeconds,
    edit_topic_policy: r.editTopicPolicy,
    move_messages_between_streams_policy: r.moveMessagesBetweenStreamsPolicy,
    delete_own_message_policy: r.deleteOwnMessagePolicy,
    private_message_policy: r.privateMessagePolicy,
    max_invites_per_day: r.maxInvitesPerDay ?? defaultInviteLimit,
    enable_read_receipts: r.enableReadReceipts,
    add_custom_emoji_policy: r.addCustomEmojiPolicy,
    move_messages_within_stream_limit_seconds: r.moveMessagesWithinStreamLimitSeconds,
    move_messages_between_streams_limit_seconds: r.moveMessagesBetweenStreamsLimitSeconds,
    allow_edit_history: r.allowEditHistory,
    new_stream_announcements_stream_id: r.newStreamAnnouncementsStreamId,
    can_access_all_users_group: r.canAccessAllUsersGroup,
    default_code_block_language: r.defaultCodeBlockLanguage,
  };
}

export async function accessRealm(deps: AccountsDeps, realmId: number): Promise<RealmRow> {
  const realm = await getRealm(deps.pool, realmId);
  if (!realm) throw badRequest("Invalid organization");
  return realm;
}

export async function getInternalRealm(deps: AccountsDeps, realmId: number): Promise<InternalRealm> {
  const realm = await accessRealm(deps, realmId);
  return {
    id: realm.id,
    name: realm.name,
    string_id: realm.stringId,
    deactivated: realm.deactivated,
    date_created: Math.floor(realm.dateCreated.getTime() / 1000),
    settings: realmSettings(realm, deps.config.INVITES_DAILY_LIMIT),
    system_groups: await systemGroupIds(deps.pool, realm.id),
    notification_bot_id: realm.notificationBotId ?? 0,
  };
}
