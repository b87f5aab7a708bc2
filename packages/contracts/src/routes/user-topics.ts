import { z } from "zod";
import { p } from "../params";
import { route, empty } from "../route";

/** 0 none (inherit), 1 muted, 2 unmuted, 3 followed. */
export const VISIBILITY_POLICIES = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;

export const UpdateUserTopic = route({
  method: "POST",
  path: "/user_topics",
  service: "messaging",
  auth: "user",
  params: {
    stream_id: p.int().required(),
    topic: p.str().required(),
    /** Anything but 0 to 3 is `Invalid visibility_policy`, as Zulip's check_int_in says. */
    visibility_policy: p
      .int(
        z
          .number()
          .int()
          .refine((v) => v >= 0 && v <= 3, { message: "Invalid {name}" }),
      )
      .required(),
  },
  response: empty,
});

/** Deprecated (feature level 170) for POST /user_topics: mutes or unmutes one topic. */
export const UpdateMutedTopic = route({
  method: "PATCH",
  path: "/users/me/subscriptions/muted_topics",
  service: "messaging",
  auth: "user",
  params: {
    stream_id: p.int(),
    stream: p.str(),
    topic: p.str().required(),
    op: p.str(z.enum(["add", "remove"])).required(),
  },
  response: empty,
});
