import type { FastifyInstance } from "fastify";
import { SchedulerRegisterState } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { SchedulerDeps } from "../deps";
import { getScheduledMessages } from "../queries/scheduled-messages";

/** The scheduler's slice of POST /register: `scheduled_messages` when that event type is wanted. */
export function registerStateRoutes(app: FastifyInstance, deps: SchedulerDeps): void {
  registerRoute(app, SchedulerRegisterState, async ({ params, identity }) => {
    const wanted = params.fetch_event_types;
    if (wanted && !wanted.includes("scheduled_messages")) return {};
    return { scheduled_messages: await getScheduledMessages(deps.pool, identity) };
  });
}
