import { z } from "zod";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

export const UserTopicClientEvent = z.strictObject({
  type: z.literal("user_topic"),
  stream_id: z.number().int(),
  topic_name: z.string(),
  last_updated: z.number().int(),
  visibility_policy: z.number().int().min(0).max(3),
});

export const MessagingUserTopicUpdated = defineEvent(
  "messaging.user_topic.updated",
  z.object({ user_id: z.number().int(), client: noticeOf(UserTopicClientEvent) }),
);
