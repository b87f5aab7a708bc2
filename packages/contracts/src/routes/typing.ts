import { z } from "zod";
import { p } from "../params";
import { route, empty } from "../route";

/**
 * Zulip's typing notifications (POST /typing): `direct` (default; the legacy `private` still
 * accepted, spec section 9) needs `to`, a list of user ids; `stream` / `channel` needs
 * `stream_id` and `topic` (`subject` as everywhere). Which parameters a type needs is the
 * action's check, with Zulip's messages.
 */
export const SetTypingStatus = route({
  method: "POST",
  path: "/typing",
  service: "messaging",
  auth: "user",
  params: {
    type: p.str(z.enum(["direct", "private", "stream", "channel"])).default("direct"),
    op: p.str(z.enum(["start", "stop"])).required(),
    to: p.json(z.array(z.number().int())),
    stream_id: p.int(),
    topic: p.str().alias("subject"),
  },
  response: empty,
});
