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

/** Zulip's legacy form of the same news: the user's whole list of muted topics, [channel name, topic, time]. */
export const MutedTopicsClientEvent = z.strictObject({
  type: z.literal("muted_topics"),
  muted_topics: z.array(z.tuple([z.string(), z.string(), z.number().int()])),
});

export const MessagingMutedTopicsUpdated = defineEvent(
  "messaging.muted_topics.updated",
  z.object({ user_id: z.number().int(), client: noticeOf(MutedTopicsClientEvent) }),
);
