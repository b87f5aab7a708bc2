import { z } from "zod";
import { p } from "../params";
import { route, success } from "../route";

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
