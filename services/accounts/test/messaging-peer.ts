import type { AddressInfo } from "node:net";
import { createLogger, type Identity } from "@chat/platform";
import { serviceClient, startProxy } from "@chat/testkit";
import type { FastifyInstance } from "fastify";
import { buildApp, createDeps } from "../../messaging/src/app";
import { loadMessagingConfig } from "../../messaging/src/config";
import { startAccounts, type TestUser } from "./helpers";

const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

/**
 * Accounts in-process with the real messaging app beside it, as messaging's own tests pair them
 * the other way round: one test database, both listening on free ports (each calls the other
 * over HTTP), the same clock. Accounts reaches messaging through a TCP proxy that a test blocks
 * to make messaging unreachable.
 */
export async function startAccountsWithMessaging(extraEnv: Record<string, string> = {}) {
  let messagingUrl = "";
  // Started first, so that accounts' configuration names it; the target is known once messaging listens.
  const proxy = await startProxy(() => messagingUrl);
  const t = await startAccounts({ ...extraEnv, MESSAGING_URL: `http://${proxy.host}:${proxy.port}` }, ["accounts", "messaging"]);
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  // No realm-change listener runs here, so messaging reads accounts' settings afresh each time.
  const config = loadMessagingConfig({ ...t.env.vars, ACCOUNTS_URL: urlOf(t.app), REALM_CACHE_MS: "0" });
  const deps = createDeps(config, createLogger("messaging", "silent"), { clock: t.clock });
  const app = buildApp(deps);
  await app.listen({ host: "127.0.0.1", port: 0 });
  messagingUrl = urlOf(app);
  const call = serviceClient(app, config.INTERNAL_TOKEN);

  const as = (who: TestUser | Identity) => ("as" in who ? who.as : who);

  /**
   * A channel made through POST /users/me/subscriptions by `creator` (who joins it with
   * `members`); its id. Options are the endpoint's (invite_only, is_default_stream, ...).
   */
  async function createChannel(creator: TestUser, name: string, members: TestUser[] = [], opts: Record<string, unknown> = {}): Promise<number> {
    const principals = [creator, ...members].map((u) => u.user_id);
    await t.ok(await call("POST", "/users/me/subscriptions", { as: creator.as, params: { subscriptions: [{ name }], principals, ...opts } }));
    return (await t.ok(await call("GET", "/get_stream_id", { as: creator.as, params: { stream: name } }))).stream_id;
  }

  /** GET /users/me/subscriptions: the user's channels as [id, name], by id. */
  async function subscriptions(who: TestUser | Identity): Promise<Array<[number, string]>> {
    const subs = (await t.ok(await call("GET", "/users/me/subscriptions", { as: as(who) }))).subscriptions as Array<{ stream_id: number; name: string }>;
    return subs.map((s): [number, string] => [s.stream_id, s.name]).sort((a, b) => a[0] - b[0]);
  }

  /** GET /messages: the user's newest messages (raw Markdown), oldest first, optionally narrowed. */
  async function messages(who: TestUser | Identity, narrow: unknown[] = []): Promise<any[]> {
    const params = { anchor: "newest", num_before: 100, num_after: 0, apply_markdown: false, narrow };
    return (await t.ok(await call("GET", "/messages", { as: as(who), params }))).messages;
  }

  return {
    t,
    app,
    deps,
    call,
    proxy,
    createChannel,
    subscriptions,
    messages,
    async close() {
      await proxy.close();
      await app.close();
      await deps.pool.end();
      await t.close();
    },
  };
}

export type WithMessaging = Awaited<ReturnType<typeof startAccountsWithMessaging>>;
