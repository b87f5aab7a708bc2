import type { RouteDef } from "../route";
import * as attachments from "./attachments";
import * as internal from "./internal";
import * as scheduledMessages from "./scheduled-messages";
import * as server from "./server";

export * from "./attachments";
export * from "./internal";
export * from "./scheduled-messages";
export * from "./server";

const isRoute = (v: unknown): v is RouteDef =>
  typeof v === "object" && v !== null && "method" in v && "path" in v && "service" in v && "params" in v;

/**
 * Every route of every service. The gateway routes the public ones (auth "user" or "none") from
 * this table; tests validate responses against it. Add each resource module here.
 */
export const allRoutes: RouteDef[] = [internal, server, scheduledMessages, attachments].flatMap((m) => Object.values(m).filter(isRoute));

/** What the gateway exposes: everything but the service-to-service routes. */
export const publicRoutes = allRoutes.filter((r) => r.auth !== "internal" && !r.path.startsWith("/internal/"));
