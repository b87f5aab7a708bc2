import { z } from "zod";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/** Client event `alert_words`: the user's whole list after any change, to their own clients. */
export const AlertWordsEvent = z.strictObject({ type: z.literal("alert_words"), alert_words: z.array(z.string()) });

/**
 * A user's alert words changed. Messaging keeps a replica (to set `has_alert_word` on the
 * messages it delivers); `version` grows with every change, so a replica never goes back to an
 * older list.
 */
export const AccountsAlertWordsChanged = defineEvent(
  "accounts.alert_words.changed",
  z.object({
    user_id: z.number().int(),
    alert_words: z.array(z.string()),
    version: z.number().int(),
    client: noticeOf(AlertWordsEvent),
  }),
);
