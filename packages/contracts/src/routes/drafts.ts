import { z } from "zod";
import { p } from "../params";
import { route, success, empty } from "../route";

/** A draft as a client submits it (spec 2.4): no `id`, unknown keys refused. */
export const DraftInput = z.strictObject({
  type: z.enum(["", "stream", "private"]),
  to: z.array(z.number().int()),
  topic: z.string(),
  content: z.string(),
  timestamp: z.number().optional(),
});
export type DraftInput = z.infer<typeof DraftInput>;

export const DraftObject = z.strictObject({
  id: z.number().int(),
  type: z.enum(["", "stream", "private"]),
  to: z.array(z.number().int()),
  topic: z.string(),
  content: z.string(),
  timestamp: z.number().int(),
});
export type DraftObject = z.infer<typeof DraftObject>;

export const GetDrafts = route({
  method: "GET",
  path: "/drafts",
  service: "messaging",
  auth: "user",
  params: {},
  response: success({ count: z.number().int(), drafts: z.array(DraftObject) }),
});

export const CreateDrafts = route({
  method: "POST",
  path: "/drafts",
  service: "messaging",
  auth: "user",
  params: { drafts: p.json(z.array(DraftInput)).default([]) },
  response: success({ ids: z.array(z.number().int()) }),
});

export const EditDraft = route({
  method: "PATCH",
  path: "/drafts/{draft_id}",
  service: "messaging",
  auth: "user",
  params: { draft_id: p.int().path(), draft: p.json(DraftInput).required() },
  response: empty,
});

export const DeleteDraft = route({
  method: "DELETE",
  path: "/drafts/{draft_id}",
  service: "messaging",
  auth: "user",
  params: { draft_id: p.int().path() },
  response: empty,
});
