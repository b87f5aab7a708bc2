import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded {
  method: string;
  path: string;
  userId: number;
  params: Record<string, string>;
}

/**
 * A stand-in for the messaging service (a test peer, not a mock of our code): answers the calls
 * accounts makes and records them. Channels visible to each user are set by the test.
 */
export async function startFakeMessaging() {
  const calls: Recorded[] = [];
  const visible = new Map<number, Array<{ stream_id: number; name: string; is_default?: boolean }>>();
  /** Channel id -> its can_remove_subscribers_group, as the test sets them. */
  const channelGroups = new Map<number, number>();
  let failNext = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const params = Object.fromEntries(new URLSearchParams(req.method === "GET" ? url.search : body));
      const userId = Number(req.headers["x-chat-user-id"]);
      calls.push({ method: req.method ?? "", path: url.pathname, userId, params });
      const send = (status: number, data: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(data));
      };
      if (failNext > 0) {
        failNext--;
        return send(503, { result: "error", msg: "down", code: "SERVICE_UNAVAILABLE" });
      }
      if (url.pathname === "/api/v1/streams") {
        const all = visible.get(userId) ?? [];
        const streams = params.include_default === "true" ? all.filter((s) => s.is_default) : all;
        return send(200, { result: "success", msg: "", streams });
      }
      if (url.pathname === "/api/v1/internal/subscriptions/new_user") {
        return send(200, { result: "success", msg: "", stream_ids: JSON.parse(params.stream_ids ?? "[]") });
      }
      if (url.pathname === "/api/v1/internal/streams/group_setting_uses") {
        const ids: number[] = JSON.parse(params.group_ids ?? "[]");
        const channels = [...channelGroups].filter(([, g]) => ids.includes(g)).map(([id]) => ({ channel_id: id, settings: ["can_remove_subscribers_group"] }));
        return send(200, { result: "success", msg: "", channels });
      }
      if (url.pathname === "/api/v1/internal/messages/send") return send(200, { result: "success", msg: "", id: 1 });
      if (url.pathname === "/api/v1/internal/register_state/messaging") return send(200, { result: "success", msg: "", max_message_id: 1000 + userId });
      send(404, { result: "error", msg: "Not Found", code: "BAD_REQUEST" });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    visible,
    channelGroups,
    failNext(n: number) {
      failNext = n;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
