import { publicRoutes, type RouteDef } from "@chat/contracts";
import type { Identity, Role } from "@chat/platform";
import { findUsers } from "./accounts";
import { callPublic, callRoute, CliError } from "./clients";
import type { CliConfig } from "./config";

const findRoute = (method: string, path: string): RouteDef | undefined =>
  publicRoutes.find((r) => r.method === method && r.path === path);

/** Channels come with the messaging service; builds without its routes cannot create them. */
export const channelsSupported = () => Boolean(findRoute("POST", "/users/me/subscriptions") && findRoute("GET", "/get_stream_id"));

export interface ChannelSpec {
  realmId: number;
  name: string;
  description?: string;
  inviteOnly: boolean;
  /** Subscribers besides the acting user (ids). */
  subscriberIds: number[];
  /** Who creates it: an owner or administrator. With `apiKey` it goes through the gateway. */
  actor: { email: string; userId?: number; apiKey?: string };
}

/**
 * Creates a channel and subscribes the actor plus `subscriberIds`, as Zulip clients do:
 * `POST /users/me/subscriptions` with `principals` and `invite_only`, then `GET /get_stream_id`.
 * With the actor's API key the calls go through the gateway; without it, straight to the
 * messaging service with the internal token and the actor's identity (same contract routes).
 */
export async function createChannel(cfg: CliConfig, spec: ChannelSpec): Promise<{ stream_id: number; name: string }> {
  const subscribe = findRoute("POST", "/users/me/subscriptions");
  const getId = findRoute("GET", "/get_stream_id");
  if (!subscribe || !getId) throw new CliError("this build has no channel routes yet (they come with the messaging service)");
  const { actor } = spec;
  const user = actor.userId && actor.apiKey ? null : (await findUsers(cfg, spec.realmId, [actor.email]))[0];
  const actorId = actor.userId ?? user!.user_id;
  const params = {
    subscriptions: [{ name: spec.name, description: spec.description ?? "" }],
    invite_only: spec.inviteOnly,
    principals: [...new Set([actorId, ...spec.subscriberIds])],
  };
  if (actor.apiKey) {
    const creds = { email: actor.email, apiKey: actor.apiKey };
    await callPublic(cfg.GATEWAY_URL, creds, subscribe.method, subscribe.path, params);
    const found = await callPublic(cfg.GATEWAY_URL, creds, getId.method, getId.path, { stream: spec.name });
    return { stream_id: Number(found.stream_id), name: spec.name };
  }
  const identity: Identity = {
    userId: user!.user_id,
    realmId: user!.realm_id,
    role: user!.role as Role,
    isBot: user!.is_bot,
    email: user!.email,
    client: "ChatAdminCLI",
  };
  const messaging = { name: "messaging", url: cfg.MESSAGING_URL, token: cfg.INTERNAL_TOKEN };
  await callRoute(messaging, subscribe, params, identity);
  const found = (await callRoute(messaging, getId, { stream: spec.name }, identity)) as { stream_id: number };
  return { stream_id: found.stream_id, name: spec.name };
}
