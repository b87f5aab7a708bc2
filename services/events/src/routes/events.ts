import type { FastifyInstance } from "fastify";
import { DeleteQueue, GetEvents, Register } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import { doDeleteQueue, doGetEvents, parsedPollResult } from "../actions/queues";
import { doRegister } from "../actions/register";
import type { EventsRuntime } from "../runtime";

/** POST /register, GET /events, DELETE /events. */
export function eventRoutes(app: FastifyInstance, rt: EventsRuntime): void {
  registerRoute(app, Register, ({ params, identity, req }) => doRegister(rt, identity, params, req.id));

  registerRoute(app, GetEvents, async ({ params, identity, reply }) => {
    // The client (or the gateway) hanging up ends the wait without a heartbeat.
    const left = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableEnded) left.abort();
    };
    reply.raw.on("close", onClose);
    try {
      return parsedPollResult(await doGetEvents(rt, identity, params, left.signal));
    } finally {
      reply.raw.off("close", onClose);
    }
  });

  registerRoute(app, DeleteQueue, async ({ params, identity }) => {
    await doDeleteQueue(rt, identity, params.queue_id);
    return {};
  });
}
