import { escapeHtml, FOOTER_STYLE, link, mailPage } from "./email-html";
import { htmlToText, conversationUrl } from "./missed-message-email";
import { topicNarrow } from "./markdown";

/**
 * Zulip's weekly digest emails (zerver/lib/digest.py): who gets one, what window it covers, which
 * conversations it calls hot, and the mail (text and HTML). Pure: actions/digest-emails.ts reads and
 * writes.
 */

/**
 * A user with no activity for this long gets a digest. The reference does not give Zulip's value;
 * Zulip's DIGEST_CUTOFF is 5 days, so the weekly mail goes to people who missed most of a week.
 */
export const DIGEST_INACTIVE_DAYS = 5;
/** A digest covers the time since the user's last activity, at most this long. */
export const DIGEST_WINDOW_DAYS = 7;
/** Zulip's MAX_HOT_TOPICS_TO_BE_INCLUDED_IN_DIGEST. */
export const MAX_HOT_TOPICS = 4;
/** Messages shown of each hot conversation (Zulip's teaser). */
export const TEASER_MESSAGES = 2;
/** Lines and characters of one teaser message. */
const TEASER_LINES = 3;
const TEASER_LINE_CHARS = 200;
/** New channels named in the mail; the others are counted. */
const MAX_NEW_CHANNELS = 5;

const DAY_MS = 24 * 3600 * 1000;

/** Zulip's weekday numbering (digest_weekday): 0 is Monday, in UTC. */
export function digestWeekday(now: Date): number {
  return (now.getUTCDay() + 6) % 7;
}

/** Active since this time: no digest (the user is not away). */
export function inactiveSince(now: Date): Date {
  return new Date(now.getTime() - DIGEST_INACTIVE_DAYS * DAY_MS);
}

/**
 * A digest made at or after this time is this week's: the start of the UTC day six days ago. A
 * day rather than exactly seven times 24 hours, so that last week's, made later in the day than
 * this week's pass, does not hold this week's back.
 */
export function lastWeekStart(now: Date): Date {
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(day - (DIGEST_WINDOW_DAYS - 1) * DAY_MS);
}

/** The start of the window a user's digest covers: the last activity, at most a week back. */
export function digestWindowStart(now: Date, lastActive: Date | null): Date {
  const weekAgo = now.getTime() - DIGEST_WINDOW_DAYS * DAY_MS;
  return new Date(lastActive ? Math.max(lastActive.getTime(), weekAgo) : weekAgo);
}

export interface TopicTraffic {
  streamId: number;
  streamName: string;
  topic: string;
  messages: number;
  senders: number;
  firstMessageId: number;
}

/**
 * Zulip's hot conversations: the two topics with the most senders, then the longest ones up to
 * MAX_HOT_TOPICS; ties go to the older conversation.
 */
export function pickHotTopics<T extends TopicTraffic>(topics: T[]): T[] {
  const byAge = (a: T, b: T) => a.firstMessageId - b.firstMessageId;
  const hot = [...topics].sort((a, b) => b.senders - a.senders || byAge(a, b)).slice(0, 2);
  for (const t of [...topics].sort((a, b) => b.messages - a.messages || byAge(a, b))) {
    if (hot.length >= MAX_HOT_TOPICS) break;
    if (!hot.includes(t)) hot.push(t);
  }
  return hot;
}

export interface DigestConversation extends TopicTraffic {
  teasers: Array<{ senderName: string; renderedContent: string }>;
}

export interface DigestInput {
  realmName: string;
  realmUrl: string;
  fullName: string;
  conversations: DigestConversation[];
  newChannels: Array<{ id: number; name: string }>;
  newUsers: number;
}

/** The channel's narrow link (the topic narrow without its topic). */
export function channelUrl(realmUrl: string, channel: { id: number; name: string }): string {
  const topic = topicNarrow(channel, "");
  return `${realmUrl}/${topic.slice(0, topic.lastIndexOf("/topic/"))}`;
}

/** A few lines of a rendered message as plain text. */
function teaserText(html: string, realmUrl: string): string[] {
  const lines = htmlToText(html, realmUrl)
    .split("\n")
    .filter((l) => l.trim() !== "");
  const shown = lines.slice(0, TEASER_LINES).map((l) => (l.length > TEASER_LINE_CHARS ? `${l.slice(0, TEASER_LINE_CHARS - 1)}…` : l));
  if (lines.length > TEASER_LINES) shown.push("…");
  return shown;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The digest mail, or null when there is nothing to tell. */
export function digestMail(input: DigestInput): { subject: string; text: string; html: string } | null {
  if (input.conversations.length === 0 && input.newChannels.length === 0 && input.newUsers === 0) return null;
  const lines: string[] = [`Hello ${input.fullName},`, "", `Here is what happened in ${input.realmName} while you were away.`, ""];
  if (input.conversations.length > 0) {
    lines.push("Hot conversations", "");
    for (const c of input.conversations) {
      lines.push(`${topicName(c)} (${trafficOf(c)})`);
      for (const t of c.teasers) {
        lines.push(`  ${t.senderName}:`);
        for (const l of teaserText(t.renderedContent, input.realmUrl)) lines.push(`    ${l}`);
      }
      const more = c.messages - c.teasers.length;
      if (more > 0) lines.push(`  … and ${plural(more, "more message", "more messages")}`);
      lines.push(`  ${topicUrl(input.realmUrl, c)}`, "");
    }
  }
  if (input.newChannels.length > 0) {
    lines.push("New channels", "");
    for (const s of input.newChannels.slice(0, MAX_NEW_CHANNELS)) lines.push(`#${s.name}: ${channelUrl(input.realmUrl, s)}`);
    const more = input.newChannels.length - MAX_NEW_CHANNELS;
    if (more > 0) lines.push(`… and ${plural(more, "more channel", "more channels")}`);
    lines.push("");
  }
  if (input.newUsers > 0) {
    lines.push(`${plural(input.newUsers, "new person", "new people")} joined ${input.realmName}.`, "");
  }
  lines.push("--", `Catch up in ${input.realmName}: ${input.realmUrl}`);
  lines.push(`${STOP_NOTE} notification settings:`);
  lines.push(`${input.realmUrl}/#settings/notifications`);
  return { subject: `${input.realmName} weekly digest`, text: lines.join("\n") + "\n", html: digestHtml(input) };
}

const STOP_NOTE = "You get this weekly digest because you were away. To stop it, turn off digest emails in your";
const topicName = (c: DigestConversation) => `#${c.streamName} > ${c.topic}`;
const topicUrl = (realmUrl: string, c: DigestConversation) =>
  conversationUrl(realmUrl, { kind: "stream", streamId: c.streamId, streamName: c.streamName, topic: c.topic });
const trafficOf = (c: DigestConversation) => `${plural(c.messages, "message", "messages")}, ${plural(c.senders, "person", "people")}`;

/** The HTML part: the text's lists, the conversations and channels as links. */
function digestHtml(input: DigestInput): string {
  const e = escapeHtml;
  const parts = [`<p>Hello ${e(input.fullName)},</p>`, `<p>Here is what happened in ${e(input.realmName)} while you were away.</p>`];
  if (input.conversations.length > 0) {
    parts.push('<h3 style="margin: 16px 0 8px;">Hot conversations</h3>');
    for (const c of input.conversations) {
      parts.push('<div style="margin: 0 0 16px;">', `<div><b>${link(topicUrl(input.realmUrl, c), topicName(c))}</b> (${e(trafficOf(c))})</div>`);
      for (const t of c.teasers) {
        const body = teaserText(t.renderedContent, input.realmUrl).map(e).join("<br>");
        parts.push(`<div style="margin: 4px 0 0 16px;"><b>${e(t.senderName)}</b>:<br>${body}</div>`);
      }
      const more = c.messages - c.teasers.length;
      if (more > 0) parts.push(`<div style="margin: 4px 0 0 16px; color: #666;">… and ${plural(more, "more message", "more messages")}</div>`);
      parts.push("</div>");
    }
  }
  if (input.newChannels.length > 0) {
    parts.push('<h3 style="margin: 16px 0 8px;">New channels</h3>', "<ul>");
    for (const s of input.newChannels.slice(0, MAX_NEW_CHANNELS)) parts.push(`<li>${link(channelUrl(input.realmUrl, s), `#${s.name}`)}</li>`);
    const more = input.newChannels.length - MAX_NEW_CHANNELS;
    if (more > 0) parts.push(`<li>… and ${plural(more, "more channel", "more channels")}</li>`);
    parts.push("</ul>");
  }
  if (input.newUsers > 0) parts.push(`<p>${plural(input.newUsers, "new person", "new people")} joined ${e(input.realmName)}.</p>`);
  parts.push(
    '<hr style="border: 0; border-top: 1px solid #ddd;">',
    `<p style="${FOOTER_STYLE}">${link(input.realmUrl, `Catch up in ${input.realmName}`)}<br>`,
    `${e(STOP_NOTE)} ${link(`${input.realmUrl}/#settings/notifications`, "notification settings")}.</p>`,
  );
  return mailPage(parts.join("\n"));
}
