import type { UserSummary } from "@chat/contracts";
import { ApiError, InternalClient, serviceUnavailable, type Identity } from "@chat/platform";

export interface CheckedMessage {
  content: string;
  topic: string | null;
  rendered_content: string;
}

export interface OutgoingMessage {
  type: "stream" | "private";
  to: number | number[];
  topic?: string | null;
  content: string;
  read_by_sender?: boolean | null;
  idempotency_key: string;
}

/** What the scheduler asks of messaging (over its internal routes). */
export class MessagingClient {
  constructor(private readonly http: InternalClient) {}

  /** Validates and renders a message as `identity` would send it; throws messaging's ApiError. */
  async check(identity: Identity, m: { type: "stream" | "private"; to: number | number[]; topic: string | null; content: string }): Promise<CheckedMessage> {
    const res = await this.http.call<CheckedMessage>("POST", "/internal/messages/check", {
      identity,
      params: { type: m.type, to: JSON.stringify(m.to), content: m.content, topic: m.topic ?? undefined },
    });
    return { content: res.content, topic: res.topic, rendered_content: res.rendered_content };
  }

  /** Sends once per idempotency key: a repeated key answers the first message's id. */
  async send(identity: Identity, m: OutgoingMessage): Promise<number> {
    const res = await this.http.call<{ id: number }>("POST", "/internal/messages/send", {
      identity,
      params: {
        type: m.type,
        to: JSON.stringify(m.to),
        topic: m.topic ?? undefined,
        content: m.content,
        read_by_sender: m.read_by_sender ?? undefined,
        idempotency_key: m.idempotency_key,
      },
    });
    return res.id;
  }

  /**
   * The message a send with `key` became, or null if messaging accepted none (a send of that key
   * still in progress is waited for). Nothing is sent.
   */
  async sentWith(realmId: number, senderId: number, key: string): Promise<number | null> {
    try {
      const res = await this.http.call<{ id: number | null }>("GET", "/internal/messages/sent", {
        params: { realm_id: realmId, sender_id: senderId, idempotency_key: key },
      });
      return res.id;
    } catch (err) {
      // A messaging of an earlier release (a rolling update) lacks the route: the caller's
      // request is to be retried, not answered as if the user's scheduled message were missing.
      if (err instanceof ApiError && err.status === 404) throw serviceUnavailable();
      throw err;
    }
  }

  /** `keep`: path ids pending scheduled messages link (not deleted, whatever their age). */
  async cleanUpAttachments(uploadedBefore: number, limit: number, keep: string[]): Promise<{ deleted: number; files_removed: number }> {
    return this.http.call("POST", "/internal/attachments/clean_up", { params: { uploaded_before: uploadedBefore, limit, keep: JSON.stringify(keep) } });
  }
}

/** What the scheduler reads from accounts: users (for the sender's current role) and realms. */
export class AccountsClient {
  constructor(private readonly http: InternalClient) {}

  async getUser(realmId: number, userId: number): Promise<UserSummary | null> {
    const res = await this.http.call<{ users: UserSummary[] }>("GET", "/internal/users", {
      params: { realm_id: realmId, user_ids: [userId] },
    });
    return res.users.find((u) => u.user_id === userId && u.realm_id === realmId) ?? null;
  }

  /** What delivery needs of an organization: whether it is deactivated, and its notification bot. */
  async getRealm(realmId: number): Promise<{ deactivated: boolean; notificationBotId: number | null }> {
    const res = await this.http.call<{ realm: { deactivated?: boolean; notification_bot_id?: number | null } }>("GET", `/internal/realms/${realmId}`);
    return { deactivated: res.realm.deactivated === true, notificationBotId: res.realm.notification_bot_id ?? null };
  }

  /** The realm's notification bot, or null when accounts does not name one. */
  async getNotificationBotId(realmId: number): Promise<number | null> {
    return (await this.getRealm(realmId)).notificationBotId;
  }
}

/** The identity a user acts with on internal calls, from accounts' current data. */
export function identityOf(user: UserSummary, client: string): Identity {
  return {
    userId: user.user_id,
    realmId: user.realm_id,
    role: user.role as Identity["role"],
    isBot: user.is_bot,
    email: user.email,
    client,
  };
}

/**
 * Answers that say nothing about the message itself: a timeout or a rate limit (408, 429) passes
 * by itself, and an internal call refused as unauthenticated or unknown (401, 404: a wrong token,
 * a peer of another version) passes once an operator fixes it. The message waits and is retried.
 */
const RETRYABLE_STATUSES = [401, 404, 408, 429];

export function isRetryable(err: unknown): err is ApiError {
  return err instanceof ApiError && RETRYABLE_STATUSES.includes(err.status);
}

/** A refusal that will not change by retrying (bad request, permission): the message fails. */
export function isRefusal(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status >= 400 && err.status < 500 && !isRetryable(err);
}
