import type { FastifyInstance } from "fastify";
import { DeleteQueue, GetEvents, Register } from "@chat/contracts";
import { JsonText, registerRoute } from "@chat/platform";
import { doDeleteQueue, doRegisterByPoll, parsedPollResult, pollQueue, type PollResult } from "../actions/queues";
import { doRegister } from "../actions/register";
import type { EventsRuntime } from "../runtime";

/** POST /register, GET /events, DELETE /events. */
export function eventRoutes(app: FastifyInstance, rt: EventsRuntime): void {
  registerRoute(app, Register, async ({ params, identity, req }) => new JsonText(await doRegister(rt, identity, params, req.id)));

  // Blocking polls over HTTP normally reach heldPollRoute (./held-polls.ts) instead; this route
  // takes the rest (registration, dont_block, ignored parameters, in-process calls).
  registerRoute(app, GetEvents, async ({ params, identity, reply }) => {
    if (params.queue_id === undefined) return parsedPollResult(await doRegisterByPoll(rt, identity, params));
    const queueId = params.queue_id;
    const result = await new Promise<PollResult>((resolve, reject) => {
      const owner = { userId: identity.userId, realmId: identity.realmId };
      const poll = pollQueue(rt, owner, queueId, params.last_event_id, !params.dont_block, (err, r) => (err ? reject(err) : resolve(r!)));
      // The client (or the gateway) hanging up ends the wait without a heartbeat.
      reply.raw.on("close", () => {
        if (!reply.raw.writableEnded) poll.leave();
      });
    });
    return parsedPollResult(result);
  });

  registerRoute(app, DeleteQueue, async ({ params, identity }) => {
    await doDeleteQueue(rt, identity, params.queue_id);
    return {};
  });
}
