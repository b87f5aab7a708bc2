import { InternalClient, type Identity } from "@chat/platform";

export interface StreamRef {
  stream_id: number;
  name: string;
  is_default?: boolean;
}

/**
 * The few messaging calls accounts makes (channel access checks for invitations, subscribing a
 * new user, the notification bot's direct message), made as a given user.
 */
export class MessagingClient {
  private readonly http: InternalClient;
  constructor(baseUrl: string, token: string) {
    this.http = new InternalClient(baseUrl, token);
  }

  /** Channels the user can access (public ones and private ones they are subscribed to). */
  async accessibleStreams(as: Identity): Promise<StreamRef[]> {
    const r = await this.http.call<{ streams: StreamRef[] }>("GET", "/streams", { identity: as, params: { include_public: true, include_subscribed: true } });
    return r.streams;
  }

  /** The organization's default channels, as the user sees them. */
  async defaultStreams(as: Identity): Promise<StreamRef[]> {
    const r = await this.http.call<{ streams: StreamRef[] }>("GET", "/streams", {
      identity: as,
      params: { include_public: false, include_subscribed: false, include_default: true },
    });
    return r.streams;
  }

  async subscribe(as: Identity, names: string[], userId: number): Promise<void> {
    if (!names.length) return;
    await this.http.call("POST", "/users/me/subscriptions", {
      identity: as,
      params: { subscriptions: names.map((name) => ({ name })), principals: [userId] },
    });
  }

  async sendDirect(as: Identity, to: number[], content: string, idempotencyKey: string): Promise<void> {
    await this.http.call("POST", "/internal/messages/send", {
      identity: as,
      params: { type: "private", to, content, idempotency_key: idempotencyKey },
    });
  }
}
