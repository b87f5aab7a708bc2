import type { FastifyInstance } from "fastify";
import { createServer } from "@chat/platform";
import type { SchedulerConfig } from "./config";
import type { SchedulerDeps } from "./deps";
import { registerStateRoutes } from "./routes/register-state";
import { scheduledMessageRoutes } from "./routes/scheduled-messages";

export interface AppOptions {
  config: Pick<SchedulerConfig, "INTERNAL_TOKEN" | "VALIDATE_RESPONSES">;
  deps: SchedulerDeps;
  /** Extra `/ready` checks (main adds RabbitMQ). */
  readiness?: Record<string, () => Promise<unknown>>;
}

/** The scheduler's HTTP app: routes only; never listens (main and tests decide that). */
export function buildApp({ config, deps, readiness }: AppOptions): FastifyInstance {
  const app = createServer({
    name: "scheduler",
    logger: deps.log,
    internalToken: config.INTERNAL_TOKEN,
    validateResponses: config.VALIDATE_RESPONSES,
    readiness: { postgres: () => deps.pool.query("SELECT 1"), ...readiness },
  });
  for (const plugin of [scheduledMessageRoutes, registerStateRoutes]) plugin(app, deps);
  return app;
}
