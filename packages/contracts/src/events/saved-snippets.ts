import { z } from "zod";
import { SavedSnippet } from "../routes/saved-snippets";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

export const SavedSnippetsAddClientEvent = z.strictObject({ type: z.literal("saved_snippets"), op: z.literal("add"), saved_snippet: SavedSnippet });
export const SavedSnippetsRemoveClientEvent = z.strictObject({ type: z.literal("saved_snippets"), op: z.literal("remove"), saved_snippet_id: z.number().int() });

/** A saved snippet was created or deleted; the client event goes to its owner's queues only. */
export const MessagingSavedSnippetAdded = defineEvent(
  "messaging.saved_snippet.added",
  z.object({ user_id: z.number().int(), client: noticeOf(SavedSnippetsAddClientEvent) }),
);
export const MessagingSavedSnippetRemoved = defineEvent(
  "messaging.saved_snippet.removed",
  z.object({ user_id: z.number().int(), client: noticeOf(SavedSnippetsRemoveClientEvent) }),
);
