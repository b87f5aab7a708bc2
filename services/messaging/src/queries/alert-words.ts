import { FLAG_BITS } from "../lib/flags";
import { usersAlerted } from "../lib/alert-words";
import type { Queryable } from "@chat/platform";
import { selectAlertWords } from "../store/alert-words";

/**
 * Sets `has_alert_word` on the recipients whose alert words (messaging's replica of accounts'
 * lists) appear in the message's Markdown.
 */
export async function markAlertWords(
  db: Queryable,
  realmId: number,
  content: string,
  entries: Array<{ userId: number; flags: number }>,
  /** The recipients' lists, when already read (a channel send's context). */
  known?: Map<number, string[]>,
): Promise<void> {
  const words = known ?? (await selectAlertWords(db, realmId, entries.map((e) => e.userId)));
  if (!words.size) return;
  const alerted = usersAlerted(content, words);
  for (const e of entries) if (alerted.has(e.userId)) e.flags |= FLAG_BITS.has_alert_word;
}
