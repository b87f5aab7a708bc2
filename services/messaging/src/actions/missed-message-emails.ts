import { organizationUrl, queueMail, withTx, type Mail, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { FLAG_BITS } from "../lib/flags";
import {
  emailSettingsOf,
  includeRealmNameInSubject,
  missedMessageMail,
  passingTrigger,
  wasAway,
  type MailConversation,
  type MailMessage,
  type Trigger,
} from "../lib/missed-message-email";
import { getUsersByIds } from "../queries/users";
import {
  claimDueUser,
  deleteEmailRows,
  deleteEmailRowsTried,
  lockUserEmailRows,
  postponeUserEmailRows,
  tryLockUserBatch,
  type DueUser,
  type PendingEmailRow,
} from "../store/missed-message-emails";
import { selectDirectParticipants } from "../store/recipients";

/**
 * Zulip's missed-message emails, the job's side (jobs/missed-message-emails.ts): once a user's
 * earliest row is due (its message's time plus the user's batching period), all of the user's
 * rows are taken at once and each conversation's messages that are still unread, that the
 * user's settings still ask a mail for, and that came while the user was away make one mail.
 * The mails are queued in the transaction that deletes the rows, so a batch is mailed once.
 */

/** How long a batch whose mails could not be made (accounts unreachable, ...) waits before the next try. */
const RETRY_SECONDS = 60;
/**
 * Tries of a message's row before it is given up: about an hour of retries, as long as a queued
 * mail's (MailSender), so that a batch that cannot be mailed is not retried every minute forever.
 */
export const MISSED_MESSAGE_MAX_ATTEMPTS = 60;

/**
 * Mails the next due user's batch. `skip` collects the users this pass has looked at (another
 * process mails one of them, or it failed), so that a pass ends. False when nothing is due.
 */
export async function doMailNextDueBatch(deps: AppDeps, skip: number[]): Promise<boolean> {
  let claimed: DueUser | null = null;
  try {
    return await withTx(deps.pool, async (tx) => {
      const due = await claimDueUser(tx, deps.clock.now(), skip);
      if (!due) return false;
      claimed = due;
      skip.push(due.userId);
      if (!(await tryLockUserBatch(tx, due.userId))) return true;
      const rows = await lockUserEmailRows(tx, due.realmId, due.userId);
      await deleteEmailRows(tx, rows.map((r) => r.id));
      for (const mail of await missedMessageMails(deps, tx, due, rows)) await queueMail(tx, mail);
      return true;
    });
  } catch (err) {
    const failed = claimed as DueUser | null;
    if (!failed) throw err;
    await doPostponeFailedBatch(deps, failed, (err as Error).message);
    return true;
  }
}

/**
 * A batch that failed waits RETRY_SECONDS, each of its rows' tries counted; the rows tried
 * MISSED_MESSAGE_MAX_ATTEMPTS times are given up (rows added since keep their own count).
 */
async function doPostponeFailedBatch(deps: AppDeps, failed: DueUser, reason: string): Promise<void> {
  const { realmId, userId } = failed;
  const retryAt = new Date(deps.clock.now().getTime() + RETRY_SECONDS * 1000);
  await withTx(deps.pool, async (tx) => {
    const attempts = await postponeUserEmailRows(tx, realmId, userId, retryAt);
    if (attempts < MISSED_MESSAGE_MAX_ATTEMPTS) {
      deps.log.warn({ err: reason, userId, realmId, attempts, retryInSeconds: RETRY_SECONDS }, "missed-message email: batch failed; will retry");
      return;
    }
    const messages = await deleteEmailRowsTried(tx, realmId, userId, MISSED_MESSAGE_MAX_ATTEMPTS);
    deps.log.error({ err: reason, userId, realmId, attempts, messages }, "missed-message email: batch given up");
  });
}

/** The mails a user's batch makes: one per conversation with messages left to tell of. */
async function missedMessageMails(deps: AppDeps, tx: Queryable, due: DueUser, rows: PendingEmailRow[]): Promise<Mail[]> {
  const { realmId, userId } = due;
  const unread = rows.filter((r) => r.messageId !== null && r.flags !== null && (r.flags & FLAG_BITS.read) === 0);
  if (unread.length === 0) return [];
  const user = (await getUsersByIds(deps, realmId, [userId])).get(userId);
  if (!user || !user.isActive || user.isBot) return [];
  const [own] = await deps.accounts.getUserSettings(realmId, [userId]);
  const settings = emailSettingsOf(own?.settings);
  const state = await deps.accounts.getEmailNotificationState(realmId, [userId]);
  const lastActive = state.lastActive.get(userId) ?? null;
  const kept: Array<{ row: PendingEmailRow; trigger: Trigger }> = [];
  for (const row of unread) {
    const trigger = passingTrigger(row.triggers as Trigger[], settings, {
      emailNotifications: row.subEmailNotifications,
      wildcardMentionsNotify: row.subWildcardMentionsNotify,
    });
    if (trigger && wasAway(lastActive, row.dateSent)) kept.push({ row, trigger });
  }
  if (kept.length === 0) return [];

  const realm = await deps.accounts.getRealm(realmId);
  const realmUrl = organizationUrl(deps.config, realm.string_id);
  const direct = await selectDirectParticipants(tx, realmId, [...new Set(kept.filter((k) => k.row.streamId === null).map((k) => k.row.recipientId))]);
  const named = new Set(kept.map((k) => k.row.senderId));
  for (const ids of direct.values()) for (const id of ids) named.add(id);
  const users = await getUsersByIds(deps, realmId, [...named]);
  const nameOf = (id: number) => users.get(id)?.fullName ?? "Unknown user";

  const conversations = new Map<string, { conversation: MailConversation; messages: MailMessage[] }>();
  for (const { row, trigger } of kept) {
    const key = row.streamId === null ? `dm:${row.recipientId}` : `channel:${row.streamId}:${row.topic.toLowerCase()}`;
    let entry = conversations.get(key);
    if (!entry) {
      const conversation: MailConversation =
        row.streamId === null
          ? { kind: "private", others: (direct.get(row.recipientId) ?? [row.senderId]).filter((id) => id !== userId).map((id) => ({ id, fullName: nameOf(id) })) }
          : { kind: "stream", streamId: row.streamId, streamName: row.streamName ?? "", topic: row.topic };
      entry = { conversation, messages: [] };
      conversations.set(key, entry);
    }
    entry.messages.push({ id: row.messageId!, senderId: row.senderId, senderName: nameOf(row.senderId), sentAt: row.dateSent, renderedContent: row.renderedContent, trigger });
  }
  const contentHiddenBy = !state.contentAllowed ? "organization" : !settings.messageContentInEmail ? "user" : null;
  return [...conversations.values()].map(({ conversation, messages }) => {
    const { subject, text, html } = missedMessageMail({
      realmName: realm.name,
      realmUrl,
      realmNameInSubject: includeRealmNameInSubject(settings.realmNameInEmailPolicy, state.inOtherRealms.has(userId)),
      conversation,
      messages,
      contentHiddenBy,
      timezone: settings.timezone,
    });
    return { to: user.deliveryEmail, subject, text, html, fromName: realm.name };
  });
}
