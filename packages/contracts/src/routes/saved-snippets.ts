import { z } from "zod";
import { maxChars, p } from "../params";
import { empty, route, success } from "../route";
import { MAX_MESSAGE_LENGTH } from "../version";

/** Zulip's SavedSnippet.MAX_TITLE_LENGTH. */
export const MAX_SAVED_SNIPPET_TITLE_LENGTH = 60;

/** A user's saved snippet (Zulip 10, feature level 297): text to insert into a message. */
export const SavedSnippet = z.strictObject({
  id: z.number().int(),
  title: z.string(),
  content: z.string(),
  date_created: z.number().int(),
});
export type SavedSnippet = z.infer<typeof SavedSnippet>;

export const GetSavedSnippets = route({
  method: "GET",
  path: "/saved_snippets",
  service: "messaging",
  auth: "user",
  params: {},
  response: success({ saved_snippets: z.array(SavedSnippet) }),
});

/** Lengths are checked before the values are stripped, as Zulip's typed_endpoint does. */
export const CreateSavedSnippet = route({
  method: "POST",
  path: "/saved_snippets",
  service: "messaging",
  auth: "user",
  params: {
    title: p.str(maxChars(MAX_SAVED_SNIPPET_TITLE_LENGTH)).required(),
    content: p.str(maxChars(MAX_MESSAGE_LENGTH)).required(),
  },
  response: success({ saved_snippet_id: z.number().int() }),
});

export const DeleteSavedSnippet = route({
  method: "DELETE",
  path: "/saved_snippets/{saved_snippet_id}",
  service: "messaging",
  auth: "user",
  params: { saved_snippet_id: p.int().path() },
  response: empty,
});
