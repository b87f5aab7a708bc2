import { z } from "zod";
import { p } from "../params";
import { route, success } from "../route";
import { Narrow } from "./messages";

/**
 * Which of the given messages match a narrow, for narrows a client cannot check itself (search):
 * each match keyed by its id, with the highlights GET /messages gives the same message.
 */
export const GetMessagesMatchNarrow = route({
  method: "GET",
  path: "/messages/matches_narrow",
  service: "messaging",
  auth: "user",
  params: {
    msg_ids: p.json(z.array(z.number().int())).required(),
    narrow: p.json(Narrow).required(),
  },
  response: success({
    messages: z.record(z.string(), z.strictObject({ match_content: z.string(), match_subject: z.string() })),
  }),
});

/** Who has read a message, as far as their privacy settings tell (Zulip's feature level 137). */
export const GetReadReceipts = route({
  method: "GET",
  path: "/messages/{message_id}/read_receipts",
  service: "messaging",
  auth: "user",
  params: { message_id: p.int().path() },
  response: success({ user_ids: z.array(z.number().int()) }),
});
