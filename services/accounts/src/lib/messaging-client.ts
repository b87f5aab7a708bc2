import {
  InternalConversationPartners,
  InternalGetRealmEmoji,
  InternalStreamGroupSettingUses,
  InternalSubscribeNewUser,
  MessagingRegisterState,
  type RealmEmojiDict,
} from "@chat/contracts";
import { InternalClient, type Identity } from "@chat/platform";

export interface StreamRef {
  stream_id: number;
  name: string;
  is_default?: boolean;
}

/**
 * The few messaging calls accounts makes: the channels an inviting user can access (asked as
 * that user, who is making the request), subscribing a user who accepted an invitation, the
 * notification bot's direct message, the newest message a user received, the channels whose
 * settings name a user group, and whom a user shares a channel or a conversation with.
 */
export class MessagingClient {
  private readonly http: InternalClient;
  constructor(baseUrl: string, token: string) {
    this.http = new InternalClient(baseUrl, token);
  }

  /**
   * Channels the user can access (public ones and private ones they are subscribed to); with
   * `allActive`, every channel of the organization (administrators only, as messaging checks).
   */
  async accessibleStreams(as: Identity, { allActive = false } = {}): Promise<StreamRef[]> {
    const params = { include_public: true, include_subscribed: true, include_all_active: allActive };
    const r = await this.http.call<{ streams: StreamRef[] }>("GET", "/streams", { identity: as, params });
    return r.streams;
  }

  /**
   * A new user joins these channels that still exist, and with `includeDefault` the
   * organization's default channels (no acting user).
   */
  async subscribeNewUser(realmId: number, userId: number, streamIds: number[], includeDefault = false): Promise<void> {
    if (!streamIds.length && !includeDefault) return;
    await this.http.call(InternalSubscribeNewUser.method, InternalSubscribeNewUser.path, {
      params: { realm_id: realmId, user_id: userId, stream_ids: streamIds, include_default: includeDefault },
    });
  }

  /** Channels whose group settings name one of these groups, with those settings (deactivating a group). */
  async channelsUsingGroups(realmId: number, groupIds: number[]): Promise<Array<{ channel_id: number; settings: string[] }>> {
    const r = await this.http.call<{ channels: Array<{ channel_id: number; settings: string[] }> }>(
      InternalStreamGroupSettingUses.method,
      InternalStreamGroupSettingUses.path,
      { params: { realm_id: realmId, group_ids: groupIds } },
    );
    return r.channels;
  }

  /**
   * The users who share an active channel subscription or a direct message conversation with
   * the user: whom a guest accesses where the organization limits guests.
   */
  async conversationPartners(realmId: number, userId: number): Promise<Set<number>> {
    const r = await this.http.call<{ user_ids: number[] }>(InternalConversationPartners.method, InternalConversationPartners.path, {
      params: { realm_id: realmId, user_id: userId },
    });
    return new Set(r.user_ids);
  }

  /** The organization's whole custom emoji dictionary (the replica's read-through). */
  async realmEmoji(realmId: number): Promise<RealmEmojiDict> {
    const r = await this.http.call<{ emoji: RealmEmojiDict }>(InternalGetRealmEmoji.method, InternalGetRealmEmoji.path, { params: { realm_id: realmId } });
    return r.emoji;
  }

  /** The id of the newest message the user received, -1 when none (the `message` state). */
  async maxMessageId(as: Identity): Promise<number> {
    const r = await this.http.call<{ max_message_id: number }>(MessagingRegisterState.method, MessagingRegisterState.path, {
      identity: as,
      params: { fetch_event_types: ["message"] },
      // Only a deprecated field waits on it (see getOwnUser).
      timeoutMs: 2000,
    });
    return r.max_message_id;
  }

  /** A direct message from the realm's notification bot (the agreed internal send, as that bot). */
  async sendDirect(as: Identity, to: number[], content: string, idempotencyKey: string): Promise<void> {
    await this.http.call("POST", "/internal/messages/send", {
      identity: as,
      params: { type: "private", to, content, idempotency_key: idempotencyKey },
    });
  }
}

/** The deps' messaging client, made from the configuration on first use. */
export function messagingOf(deps: { messaging?: MessagingClient; config: { MESSAGING_URL: string; INTERNAL_TOKEN: string } }): MessagingClient {
  deps.messaging ??= new MessagingClient(deps.config.MESSAGING_URL, deps.config.INTERNAL_TOKEN);
  return deps.messaging;
}
