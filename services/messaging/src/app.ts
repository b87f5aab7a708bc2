import { createPool, InternalClient, systemClock, createServer, type Clock, type Logger } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import type { MessagingConfig } from "./config";
import type { AppDeps, MessageHooks, RoutePlugin } from "./deps";
import { AccountsClient } from "./lib/accounts-client";
import { draftRoutes } from "./routes/drafts";
import { flagRoutes } from "./routes/flags";
import { groupSettingUseRoutes } from "./routes/group-setting-uses";
import { integrationRoutes } from "./routes/integrations";
import { messageQueryRoutes } from "./routes/message-queries";
import { messageRoutes } from "./routes/messages";
import { reactionRoutes } from "./routes/reactions";
import { savedSnippetRoutes } from "./routes/saved-snippets";
import { registerStateRoutes } from "./routes/register-state";
import { streamRoutes } from "./routes/streams";
import { subscriptionRoutes } from "./routes/subscriptions";
import { typingRoutes } from "./routes/typing";
import { userTopicRoutes } from "./routes/user-topics";

/** One plugin per resource. Extensions (attachments) add theirs to this list. */
export const ROUTE_PLUGINS: RoutePlugin[] = [
  messageRoutes,
  messageQueryRoutes,
  flagRoutes,
  streamRoutes,
  subscriptionRoutes,
  draftRoutes,
  savedSnippetRoutes,
  userTopicRoutes,
  typingRoutes,
  reactionRoutes,
  registerStateRoutes,
  groupSettingUseRoutes,
  integrationRoutes,
];

export interface BuildOptions {
  readiness?: Record<string, () => Promise<unknown>>;
  /** Defaults to ROUTE_PLUGINS. */
  plugins?: RoutePlugin[];
}

/** The messaging service's HTTP app. Never listens (main.ts or a test does). */
export function buildApp(deps: AppDeps, opts: BuildOptions = {}): FastifyInstance {
  const app = createServer({
    name: "messaging",
    logger: deps.log,
    internalToken: deps.config.INTERNAL_TOKEN,
    validateResponses: deps.config.VALIDATE_RESPONSES,
    readiness: { postgres: () => deps.pool.query("SELECT 1"), ...opts.readiness },
  });
  for (const plugin of opts.plugins ?? ROUTE_PLUGINS) plugin(app, deps);
  return app;
}

/** Wires the dependencies from configuration (main.ts and tests). */
export function createDeps(config: MessagingConfig, log: Logger, opts: { clock?: Clock; hooks?: MessageHooks } = {}): AppDeps {
  const clock = opts.clock ?? systemClock;
  const pool = createPool(config.DATABASE_URL, "messaging", config.DATABASE_POOL_SIZE);
  const accounts = new AccountsClient(new InternalClient(config.ACCOUNTS_URL, config.INTERNAL_TOKEN), clock, config.REALM_CACHE_MS);
  return { config, pool, log, clock, accounts, hooks: opts.hooks ?? {} };
}
