import { z } from "zod";
import { RealmExport } from "../routes/realm-exports";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/** Every export of the organization, sent whenever one starts, finishes, fails or is deleted. */
export const RealmExportClientEvent = z.strictObject({ type: z.literal("realm_export"), exports: z.array(RealmExport) });

/** An export changed; the client event goes to the administrator who asked for it (Zulip's notify_realm_export). */
export const MessagingRealmExportChanged = defineEvent(
  "messaging.realm_export.changed",
  z.object({ export_id: z.number().int(), client: noticeOf(RealmExportClientEvent) }),
);
