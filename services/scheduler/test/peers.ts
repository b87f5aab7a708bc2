import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";

/**
 * Stand-ins for accounts and messaging, speaking their internal contracts, for scheduler tests
 * that must make a peer refuse, go down or come back on demand.
 */
export interface Peer {
  url: string;
  app: FastifyInstance;
  /** Sends accepted by messaging, one per distinct idempotency key. */
  messages: Array<{ id: number; sender: number; key: string; params: Record<string, string> }>;
  /** Every POST /internal/messages/send, repeats included. */
  sendCalls: number;
  streams: Set<number>;
  users: Map<number, { user_id: number; realm_id: number; email: string; role: number; is_active: boolean; is_bot: boolean }>;
  /** Channels messaging refuses to post to (as if the sender lost permission). */
  refusing: Set<number>;
  notificationBotId: number | null;
  /** Organizations accounts reports as deactivated. */
  deactivatedRealms: Set<number>;
  /** Milliseconds messaging takes to check a message with this content (default none). */
  checkDelays: Map<string, number>;
  /** Milliseconds messaging takes to accept a message with this content (default none). */
  sendDelays: Map<string, number>;
  /** Per sender, the most sends it ever had in progress at once. */
  maxInFlight: Map<number, number>;
  /** Error answers messaging gives to sends with this content (a rate limit, a timeout, ...). */
  sendErrors: Map<string, { status: number; code: string; extra?: Record<string, unknown> }>;
  /** Messaging of a release before the lookup of sends by key: its route is unknown (404). */
  lacksSentLookup: boolean;
  close(): Promise<void>;
}

export async function startPeer(token: string, port = 0): Promise<Peer> {
  const app = Fastify();
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const peer: Peer = {
    url: "",
    app,
    messages: [],
    sendCalls: 0,
    streams: new Set(),
    users: new Map(),
    refusing: new Set(),
    notificationBotId: null,
    deactivatedRealms: new Set(),
    checkDelays: new Map(),
    sendDelays: new Map(),
    maxInFlight: new Map(),
    sendErrors: new Map(),
    lacksSentLookup: false,
    close: () => app.close(),
  };
  const inFlight = new Map<number, number>();
  const err = (msg: string, extra: Record<string, unknown> = {}, code = "BAD_REQUEST", status = 400) => ({ status, body: { result: "error", msg, code, ...extra } });
  const addressCheck = (b: Record<string, string>) => {
    const to = JSON.parse(b.to);
    if (b.type === "stream") {
      if (!peer.streams.has(to)) return err(`Channel with ID '${to}' does not exist`, { stream_id: to }, "STREAM_DOES_NOT_EXIST");
      if (!b.topic) return err("Topic can't be empty!");
    } else {
      for (const id of to) if (!peer.users.has(id)) return err(`Invalid user ID ${id}`);
    }
    if (!b.content?.trim()) return err("Message must not be empty");
    return null;
  };
  app.addHook("onRequest", async (req, reply) => {
    if (req.headers["x-chat-internal-token"] !== token) return reply.status(401).send({ result: "error", msg: "token", code: "UNAUTHORIZED" });
  });
  app.post("/api/v1/internal/messages/check", async (req, reply) => {
    const b = req.body as Record<string, string>;
    const checkDelay = peer.checkDelays.get(b.content);
    if (checkDelay) await new Promise((r) => setTimeout(r, checkDelay));
    const bad = addressCheck(b);
    if (bad) return reply.status(bad.status).send(bad.body);
    const content = b.content.trimEnd();
    return { result: "success", msg: "", content, topic: b.type === "stream" ? b.topic : null, rendered_content: `<p>${content}</p>` };
  });
  app.post("/api/v1/internal/messages/send", async (req, reply) => {
    peer.sendCalls++;
    const b = req.body as Record<string, string>;
    const sender = Number(req.headers["x-chat-user-id"]);
    const delay = peer.sendDelays.get(b.content);
    if (delay) {
      const now = (inFlight.get(sender) ?? 0) + 1;
      inFlight.set(sender, now);
      peer.maxInFlight.set(sender, Math.max(peer.maxInFlight.get(sender) ?? 0, now));
      await new Promise((r) => setTimeout(r, delay));
      inFlight.set(sender, now - 1);
    }
    const error = peer.sendErrors.get(b.content);
    if (error) return reply.status(error.status).send({ result: "error", msg: `status ${error.status}`, code: error.code, ...error.extra });
    const seen = peer.messages.find((m) => m.sender === sender && m.key === b.idempotency_key);
    if (seen) return { result: "success", msg: "", id: seen.id };
    const bad = addressCheck(b);
    if (bad) return reply.status(bad.status).send(bad.body);
    if (b.type === "stream" && peer.refusing.has(JSON.parse(b.to))) {
      return reply.status(400).send({ result: "error", msg: "You do not have permission to post in this channel.", code: "BAD_REQUEST" });
    }
    const id = 1000 + peer.messages.length;
    peer.messages.push({ id, sender, key: b.idempotency_key, params: b });
    return { result: "success", msg: "", id };
  });
  app.get("/api/v1/internal/messages/sent", async (req, reply) => {
    if (peer.lacksSentLookup) return reply.code(404).send({ result: "error", code: "BAD_REQUEST", msg: "Not Found" });
    const q = req.query as Record<string, string>;
    const seen = peer.messages.find((m) => m.sender === Number(q.sender_id) && m.key === q.idempotency_key);
    return { result: "success", msg: "", id: seen?.id ?? null };
  });
  app.get("/api/v1/internal/users", async (req) => {
    const q = req.query as Record<string, string>;
    const ids: number[] = JSON.parse(q.user_ids ?? "[]");
    const users = ids
      .map((id) => peer.users.get(id))
      .filter((u) => u && u.realm_id === Number(q.realm_id))
      .map((u) => ({
        ...u!,
        delivery_email: u!.email,
        full_name: `User ${u!.user_id}`,
        bot_type: u!.is_bot ? 1 : null,
        bot_owner_id: null,
        date_joined: "2024-01-01T00:00:00Z",
        timezone: "",
      }));
    return { result: "success", msg: "", users };
  });
  app.get("/api/v1/internal/realms/:id", async (req) => {
    const id = Number((req.params as { id: string }).id);
    return { result: "success", msg: "", realm: { id, deactivated: peer.deactivatedRealms.has(id), notification_bot_id: peer.notificationBotId } };
  });
  await app.listen({ host: "127.0.0.1", port });
  peer.url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return peer;
}
