import { z } from "zod";
import { DraftObject } from "../routes/drafts";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

export const DraftsAddClientEvent = z.strictObject({ type: z.literal("drafts"), op: z.literal("add"), drafts: z.array(DraftObject) });
export const DraftsUpdateClientEvent = z.strictObject({ type: z.literal("drafts"), op: z.literal("update"), draft: DraftObject });
export const DraftsRemoveClientEvent = z.strictObject({ type: z.literal("drafts"), op: z.literal("remove"), draft_id: z.number().int() });

export const MessagingDraftsAdded = defineEvent(
  "messaging.draft.added",
  z.object({ user_id: z.number().int(), client: noticeOf(DraftsAddClientEvent) }),
);
export const MessagingDraftUpdated = defineEvent(
  "messaging.draft.updated",
  z.object({ user_id: z.number().int(), client: noticeOf(DraftsUpdateClientEvent) }),
);
export const MessagingDraftRemoved = defineEvent(
  "messaging.draft.removed",
  z.object({ user_id: z.number().int(), client: noticeOf(DraftsRemoveClientEvent) }),
);
