import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";
import { Narrow } from "./messages";

/** Spec 2.2's flags, in the order Zulip lists them on a message. */
export const MESSAGE_FLAGS = [
  "read",
  "starred",
  "collapsed",
  "mentioned",
  "stream_wildcard_mentioned",
  "topic_wildcard_mentioned",
  "has_alert_word",
  "historical",
  "wildcard_mentioned",
] as const;
export type MessageFlag = (typeof MESSAGE_FLAGS)[number];
/** The flags a client may change through POST /messages/flags. */
export const EDITABLE_MESSAGE_FLAGS: readonly MessageFlag[] = ["read", "starred", "collapsed"];

export const UpdateMessageFlags = route({
  method: "POST",
  path: "/messages/flags",
  service: "messaging",
  auth: "user",
  params: {
    messages: p.json(z.array(z.number().int())).required(),
    op: p.str().required(),
    flag: p.str().required(),
  },
  response: success({ messages: z.array(z.number().int()) }),
});

const NonNegative = z.number().int().min(0);

/** The flag over a range of a narrow (anchor and counts as in GET /messages); Zulip's feature level 155. */
export const UpdateMessageFlagsForNarrow = route({
  method: "POST",
  path: "/messages/flags/narrow",
  service: "messaging",
  auth: "user",
  params: {
    anchor: p.str().required(),
    include_anchor: p.bool().default(true),
    num_before: p.int(NonNegative).required(),
    num_after: p.int(NonNegative).required(),
    narrow: p.json(Narrow).required(),
    op: p.str().required(),
    flag: p.str().required(),
  },
  response: success({
    /** Messages of the narrow in the range. */
    processed_count: z.number().int(),
    /** Of those, the ones whose flag changed. */
    updated_count: z.number().int(),
    first_processed_id: z.number().int().nullable(),
    last_processed_id: z.number().int().nullable(),
    found_oldest: z.boolean(),
    found_newest: z.boolean(),
  }),
});

/**
 * The user's unread messages become read: Zulip's older endpoints, deprecated there in favour of
 * flags/narrow but still called by clients. Zulip marks in batches and may stop early; the
 * answer's `complete` says whether everything was marked.
 */
export const MarkAllAsRead = route({
  method: "POST",
  path: "/mark_all_as_read",
  service: "messaging",
  auth: "user",
  params: {},
  response: success({ complete: z.boolean() }),
});

/** The user's unread messages in one channel become read. */
export const MarkStreamAsRead = route({
  method: "POST",
  path: "/mark_stream_as_read",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().required() },
  response: empty,
});

/** The user's unread messages in one topic of a channel become read. */
export const MarkTopicAsRead = route({
  method: "POST",
  path: "/mark_topic_as_read",
  service: "messaging",
  auth: "user",
  params: { stream_id: p.int().required(), topic_name: p.str().required() },
  response: empty,
});
