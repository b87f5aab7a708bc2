import { z } from "zod";
import { ClientNotice } from "../envelope";
import { Attachment } from "../routes/attachments";
import { defineEvent } from "./index";

/** Client events (GET /events) to an upload's owner. */
export const AttachmentAddEvent = z.strictObject({
  type: z.literal("attachment"),
  op: z.literal("add"),
  attachment: Attachment,
  upload_space_used: z.number().int(),
});
export const AttachmentUpdateEvent = z.strictObject({
  type: z.literal("attachment"),
  op: z.literal("update"),
  attachment: Attachment,
  upload_space_used: z.number().int(),
});
export const AttachmentRemoveEvent = z.strictObject({
  type: z.literal("attachment"),
  op: z.literal("remove"),
  attachment: z.strictObject({ id: z.number().int() }),
  upload_space_used: z.number().int(),
});
export const AttachmentEvent = z.union([AttachmentAddEvent, AttachmentUpdateEvent, AttachmentRemoveEvent]);
export type AttachmentEvent = z.infer<typeof AttachmentEvent>;

const notice = <E extends z.ZodType>(event: E) => ClientNotice.extend({ event });

/** A file was uploaded. */
export const MessagingAttachmentUploaded = defineEvent(
  "messaging.attachment.uploaded",
  z.object({ attachment_id: z.number().int(), owner_id: z.number().int(), client: notice(AttachmentAddEvent) }),
);
/** The set of messages linking to an upload changed (claimed by a send, or a linking message deleted). */
export const MessagingAttachmentUpdated = defineEvent(
  "messaging.attachment.updated",
  z.object({ attachment_id: z.number().int(), owner_id: z.number().int(), client: notice(AttachmentUpdateEvent) }),
);
/** Deleted: by its owner, with the last message linking it, or never used and expired. */
export const MessagingAttachmentDeleted = defineEvent(
  "messaging.attachment.deleted",
  z.object({
    attachment_id: z.number().int(),
    owner_id: z.number().int(),
    reason: z.enum(["owner", "unreferenced", "unclaimed"]),
    client: notice(AttachmentRemoveEvent),
  }),
);
