import type { FastifyInstance } from "fastify";
import { CreateScheduledMessage, DeleteScheduledMessage, GetScheduledMessages, UpdateScheduledMessage } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import { doDeleteScheduledMessage, doEditScheduledMessage, doScheduleMessage } from "../actions/scheduled-messages";
import type { SchedulerDeps } from "../deps";
import { getScheduledMessages } from "../queries/scheduled-messages";

export function scheduledMessageRoutes(app: FastifyInstance, deps: SchedulerDeps): void {
  registerRoute(app, CreateScheduledMessage, async ({ params, identity }) => {
    const id = await doScheduleMessage(deps, identity, {
      type: params.type,
      to: params.to,
      content: params.content,
      topic: params.topic,
      scheduledDeliveryTimestamp: params.scheduled_delivery_timestamp,
      readBySender: params.read_by_sender,
    });
    return { scheduled_message_id: id };
  });

  registerRoute(app, GetScheduledMessages, async ({ identity }) => ({
    scheduled_messages: await getScheduledMessages(deps.pool, identity),
  }));

  registerRoute(app, UpdateScheduledMessage, async ({ params, identity }) => {
    await doEditScheduledMessage(deps, identity, params.scheduled_message_id, {
      type: params.type,
      to: params.to,
      content: params.content,
      topic: params.topic,
      scheduledDeliveryTimestamp: params.scheduled_delivery_timestamp,
    });
    return {};
  });

  registerRoute(app, DeleteScheduledMessage, async ({ params, identity }) => {
    await doDeleteScheduledMessage(deps, identity, params.scheduled_message_id);
    return {};
  });
}
