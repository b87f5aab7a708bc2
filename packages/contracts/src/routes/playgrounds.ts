import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/** A code playground (Zulip's RealmPlayground): where code blocks of a language can be opened. */
export const RealmPlayground = z.strictObject({
  id: z.number().int(),
  name: z.string(),
  pygments_language: z.string(),
  url_template: z.string(),
});
export type RealmPlayground = z.infer<typeof RealmPlayground>;

/** Administrators only; `url_template` is RFC 6570 with `code` as its only variable. */
export const CreatePlayground = route({
  method: "POST",
  path: "/realm/playgrounds",
  service: "accounts",
  auth: "user",
  params: { name: p.str().required(), pygments_language: p.str().required(), url_template: p.str().required() },
  response: success({ id: z.number().int() }),
});

export const DeletePlayground = route({
  method: "DELETE",
  path: "/realm/playgrounds/{playground_id}",
  service: "accounts",
  auth: "user",
  params: { playground_id: p.int().path() },
  response: empty,
});
