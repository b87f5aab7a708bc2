import type { FastifyRequest } from "fastify";

/**
 * The client's name as Zulip derives it: the `client` parameter when it is in the query string
 * (the body is streamed, not read here: the service takes a `client` in the body over this),
 * else the User-Agent's product name, else "Unspecified".
 */
export function clientName(req: FastifyRequest): string {
  const fromQuery = (req.query as Record<string, unknown> | undefined)?.client;
  if (typeof fromQuery === "string" && fromQuery.trim()) return fromQuery.trim();
  const agent = req.headers["user-agent"];
  if (typeof agent !== "string") return "Unspecified";
  const name = agent.split("/", 1)[0].split("(", 1)[0].trim();
  return name || "Unspecified";
}

/**
 * The address per-IP limits count against: the peer, or when `trustedHops` proxies stand in
 * front of the gateway, the address the outermost trusted one saw.
 */
export function clientIp(req: FastifyRequest, trustedHops: number): string {
  const peer = req.socket.remoteAddress ?? req.ip;
  if (trustedHops <= 0) return peer;
  const header = req.headers["x-forwarded-for"];
  const chain = (Array.isArray(header) ? header.join(",") : header ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  chain.push(peer);
  return chain[Math.max(0, chain.length - 1 - trustedHops)];
}
