import { escapeHtml, FOOTER_STYLE, link, mailPage, messageHtmlForMail, parseForMail } from "./email-html";
import { FLAG_BITS } from "./flags";
import type { Element } from "./html-tree";
import { topicNarrow } from "./markdown";
import { VISIBILITY } from "./visibility-policy";

/**
 * Zulip's missed-message email notifications (zerver/lib/email_notifications.py): which
 * recipients of a message may be mailed about it while away, and the mail one conversation's
 * unread messages make. Pure: the send path and the job (actions/missed-message-emails.ts) read
 * and write.
 */

/** Zulip's NotificationTriggers, in the order one is named as the reason of a mail. */
export const TRIGGERS = [
  "private_message",
  "mentioned",
  "topic_wildcard_mentioned_in_followed_topic",
  "stream_wildcard_mentioned_in_followed_topic",
  "topic_wildcard_mentioned",
  "stream_wildcard_mentioned",
  "followed_topic_email_notify",
  "stream_email_notify",
] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** How long after the last activity a user counts as away (Zulip's OFFLINE_THRESHOLD_SECS, as accounts has it). */
export const OFFLINE_THRESHOLD_SECS = 200;

/** What a send knows about one message's recipients. */
export interface NoticeInput {
  kind: "stream" | "private";
  senderId: number;
  /** Every recipient's flags as stored (read: the sender's own, muters of the sender, ...). */
  entries: Array<{ userId: number; flags: number }>;
  /** Known bots and deactivated users (direct message participants). */
  unmailable: Set<number>;
  /** Subscribers who muted the channel. */
  streamMuted: Set<number>;
  /** The topic's visibility policies, by user. */
  topicPolicies: Map<number, number>;
  /** Subscribers whose subscription (or default) turns channel email notifications on. */
  streamEmail: Set<number>;
}

/**
 * The recipients a message may be mailed to, each with its triggers (Zulip's
 * get_recipient_info and UserMessageNotificationsData): direct messages and personal or group
 * mentions always; wildcard mentions and channel email notifications only outside muted
 * channels and topics (a followed or unmuted topic of a muted channel is not muted); followed
 * topics. Never the sender, nor a recipient who has it read already (a muter of the sender).
 * The settings that turn each trigger off are judged when the mail is due.
 */
export function emailNoticesOf(input: NoticeInput): Array<{ userId: number; triggers: Trigger[] }> {
  const out: Array<{ userId: number; triggers: Trigger[] }> = [];
  for (const { userId, flags } of input.entries) {
    if (userId === input.senderId || flags & FLAG_BITS.read || input.unmailable.has(userId)) continue;
    const triggers: Trigger[] = [];
    if (input.kind === "private") {
      triggers.push("private_message");
    } else {
      const policy = input.topicPolicies.get(userId) ?? VISIBILITY.inherit;
      const followed = policy === VISIBILITY.followed;
      const muted = policy === VISIBILITY.muted || (input.streamMuted.has(userId) && policy !== VISIBILITY.unmuted && !followed);
      if (flags & FLAG_BITS.mentioned) triggers.push("mentioned");
      if (flags & FLAG_BITS.topic_wildcard_mentioned) {
        if (followed) triggers.push("topic_wildcard_mentioned_in_followed_topic");
        if (!muted) triggers.push("topic_wildcard_mentioned");
      }
      if (flags & FLAG_BITS.stream_wildcard_mentioned) {
        if (followed) triggers.push("stream_wildcard_mentioned_in_followed_topic");
        if (!muted) triggers.push("stream_wildcard_mentioned");
      }
      if (followed) triggers.push("followed_topic_email_notify");
      if (input.streamEmail.has(userId) && !muted) triggers.push("stream_email_notify");
    }
    if (triggers.length > 0) out.push({ userId, triggers });
  }
  return out;
}

/** The personal settings the mail's rules read (accounts' effective values). */
export interface EmailSettings {
  enableOfflineEmail: boolean;
  enableStreamEmail: boolean;
  enableFollowedTopicEmail: boolean;
  wildcardMentionsNotify: boolean;
  followedTopicWildcardMentionsNotify: boolean;
  messageContentInEmail: boolean;
  /** 1 automatic, 2 always, 3 never (Zulip's realm_name_in_email_notifications_policy). */
  realmNameInEmailPolicy: number;
  timezone: string;
}

export function emailSettingsOf(s: Record<string, unknown> | undefined): EmailSettings {
  const bool = (v: unknown, d: boolean) => (typeof v === "boolean" ? v : d);
  return {
    enableOfflineEmail: bool(s?.enable_offline_email_notifications, true),
    enableStreamEmail: bool(s?.enable_stream_email_notifications, false),
    enableFollowedTopicEmail: bool(s?.enable_followed_topic_email_notifications, true),
    wildcardMentionsNotify: bool(s?.wildcard_mentions_notify, true),
    followedTopicWildcardMentionsNotify: bool(s?.enable_followed_topic_wildcard_mentions_notify, true),
    messageContentInEmail: bool(s?.message_content_in_email_notifications, true),
    realmNameInEmailPolicy: typeof s?.realm_name_in_email_notifications_policy === "number" ? s.realm_name_in_email_notifications_policy : 1,
    timezone: typeof s?.timezone === "string" ? s.timezone : "",
  };
}

/** The subscription's own choices (null: the user's default). */
export interface SubscriptionNotify {
  emailNotifications: boolean | null;
  wildcardMentionsNotify: boolean | null;
}

/** The first of a message's triggers the user's settings let through now, or null. */
export function passingTrigger(triggers: Trigger[], s: EmailSettings, sub: SubscriptionNotify | null): Trigger | null {
  const wildcard = sub?.wildcardMentionsNotify ?? s.wildcardMentionsNotify;
  for (const t of TRIGGERS) {
    if (!triggers.includes(t)) continue;
    const passes =
      t === "private_message" || t === "mentioned"
        ? s.enableOfflineEmail
        : t === "topic_wildcard_mentioned" || t === "stream_wildcard_mentioned"
          ? s.enableOfflineEmail && wildcard
          : t === "topic_wildcard_mentioned_in_followed_topic" || t === "stream_wildcard_mentioned_in_followed_topic"
            ? s.enableOfflineEmail && s.enableFollowedTopicEmail && s.followedTopicWildcardMentionsNotify
            : t === "followed_topic_email_notify"
              ? s.enableFollowedTopicEmail
              : (sub?.emailNotifications ?? s.enableStreamEmail);
    if (passes) return t;
  }
  return null;
}

/** Whether the user was away when the message came: no activity within the offline threshold before it, nor since. */
export function wasAway(lastActive: Date | null, sentAt: Date): boolean {
  return lastActive === null || lastActive.getTime() < sentAt.getTime() - OFFLINE_THRESHOLD_SECS * 1000;
}

// ---------------------------------------------------------------------------------------------
// The mail

export interface MailMessage {
  id: number;
  senderId: number;
  senderName: string;
  sentAt: Date;
  renderedContent: string;
  trigger: Trigger;
}

/** One conversation of the user's, as the mail names and links it. */
export type MailConversation =
  | { kind: "private"; /** The other participants, by id. */ others: Array<{ id: number; fullName: string }> }
  | { kind: "stream"; streamId: number; streamName: string; topic: string };

export interface MailInput {
  realmName: string;
  realmUrl: string;
  /** Whether the subject starts with the organization's name. */
  realmNameInSubject: boolean;
  conversation: MailConversation;
  messages: MailMessage[];
  /** Why the content is left out, when it is. */
  contentHiddenBy: "user" | "organization" | null;
  timezone: string;
}

/** Zulip's personal_narrow_url slug: the id, then the name with URL-unsafe runs as `-`. */
function personalSlug(id: number, fullName: string): string {
  return `${id}-${fullName.replace(/[ "%/<>`\p{C}]+/gu, "-")}`;
}

/** The web client's link to the conversation (Zulip's narrow URLs). */
export function conversationUrl(realmUrl: string, c: MailConversation): string {
  if (c.kind === "stream") return `${realmUrl}/${topicNarrow({ id: c.streamId, name: c.streamName }, c.topic)}`;
  if (c.others.length === 1) return `${realmUrl}/#narrow/dm/${personalSlug(c.others[0].id, c.others[0].fullName)}`;
  return `${realmUrl}/#narrow/dm/${c.others.map((u) => u.id).sort((a, b) => a - b).join(",")}-group`;
}

/** Zulip's names of a group conversation's other participants. */
function groupNames(names: string[]): string {
  if (names.length <= 2) return names.join(" and ");
  if (names.length === 3) return `${names[0]}, ${names[1]}, and ${names[2]}`;
  return `${names[0]}, ${names[1]}, and ${names.length - 2} others`;
}

/** The conversation as the subject and the HTML part's header name it. */
function conversationName(c: MailConversation): string {
  if (c.kind === "stream") return `#${c.streamName} > ${c.topic}`;
  return c.others.length === 1 ? `DMs with ${c.others[0].fullName}` : `Group DMs with ${groupNames(c.others.map((u) => u.fullName))}`;
}

export function mailSubject(input: Pick<MailInput, "conversation" | "realmName" | "realmNameInSubject" | "messages">): string {
  const name = conversationName(input.conversation);
  return input.realmNameInSubject ? `[${input.realmName}] ${name}` : name;
}

/**
 * Zulip's realm_name_in_email_notifications_policy: 2 always, 3 never, 1 (automatic) when the
 * recipient's address has accounts in other organizations of this server, whose mails the
 * organization's name tells apart.
 */
export function includeRealmNameInSubject(policy: number, hasAccountsInOtherRealms: boolean): boolean {
  return policy === 2 || (policy === 1 && hasAccountsInOtherRealms);
}

const REASONS: Record<Trigger, string> = {
  private_message: "you received direct messages while you were away",
  mentioned: "you were mentioned while you were away",
  topic_wildcard_mentioned_in_followed_topic: "everyone in a topic you follow was mentioned",
  stream_wildcard_mentioned_in_followed_topic: "everyone in a topic you follow was mentioned",
  topic_wildcard_mentioned: "everyone in the topic was mentioned while you were away",
  stream_wildcard_mentioned: "everyone in the channel was mentioned while you were away",
  followed_topic_email_notify: "you follow this topic",
  stream_email_notify: "you turned on email notifications for this channel",
};

function formatTime(d: Date, timezone: string): string {
  const options: Intl.DateTimeFormatOptions = { year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" };
  try {
    return new Intl.DateTimeFormat("en-US", { ...options, timeZone: timezone || "UTC", timeZoneName: "short" }).format(d);
  } catch {
    return new Intl.DateTimeFormat("en-US", { ...options, timeZone: "UTC", timeZoneName: "short" }).format(d);
  }
}

/** The notice that stands in for the messages when their content is hidden. */
function hiddenContentNotice(input: MailInput): [string, string] {
  const count = input.messages.length;
  const senders = [...new Set(input.messages.map((m) => m.senderName))];
  return [
    `You have ${count} new ${count === 1 ? "message" : "messages"} from ${groupNames(senders)}.`,
    input.contentHiddenBy === "user"
      ? "Message content is not included: you turned it off in your email notification settings."
      : "Message content is not included: your organization does not allow it in email notifications.",
  ];
}

/** The mail of one conversation's unread messages, oldest first: plain text and HTML alike. */
export function missedMessageMail(input: MailInput): { subject: string; text: string; html: string } {
  const lines: string[] = [];
  const url = conversationUrl(input.realmUrl, input.conversation);
  if (input.contentHiddenBy) {
    const [summary, why] = hiddenContentNotice(input);
    lines.push(summary, "", why);
  } else {
    for (const m of input.messages) {
      lines.push(`${m.senderName} (${formatTime(m.sentAt, input.timezone)}):`, htmlToText(m.renderedContent, input.realmUrl), "");
    }
  }
  const reason = REASONS[input.messages[0].trigger];
  lines.push("", "--", `View or reply in ${input.realmName}: ${url}`, `You are receiving this because ${reason}.`);
  lines.push(`Manage email notifications: ${input.realmUrl}/#settings/notifications`);
  const text = lines.join("\n").replace(/\n{3,}/g, "\n\n").trim() + "\n";
  return { subject: mailSubject(input), text, html: missedMessageHtml(input, url) };
}

/** The HTML part: the same as the text, each message as its rendered HTML. */
function missedMessageHtml(input: MailInput, url: string): string {
  const parts = [`<h3 style="margin: 0 0 12px;">${link(url, conversationName(input.conversation))}</h3>`];
  if (input.contentHiddenBy) {
    for (const line of hiddenContentNotice(input)) parts.push(`<p>${escapeHtml(line)}</p>`);
  } else {
    for (const m of input.messages) {
      parts.push(
        '<div style="margin: 0 0 16px;">',
        `<div style="color: #666;"><b style="color: #222;">${escapeHtml(m.senderName)}</b> (${escapeHtml(formatTime(m.sentAt, input.timezone))})</div>`,
        `<div>${messageHtmlForMail(m.renderedContent, input.realmUrl)}</div>`,
        "</div>",
      );
    }
  }
  parts.push(
    `<hr style="border: 0; border-top: 1px solid #ddd;">`,
    `<p style="${FOOTER_STYLE}">${link(url, `View or reply in ${input.realmName}`)}<br>`,
    `You are receiving this because ${escapeHtml(REASONS[input.messages[0].trigger])}.<br>`,
    `${link(`${input.realmUrl}/#settings/notifications`, "Manage email notifications")}</p>`,
  );
  return mailPage(parts.join("\n"));
}

const BLOCK_TAGS = new Set(["p", "div", "pre", "blockquote", "ul", "ol", "li", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "hr"]);

/**
 * A rendered message as plain text: blocks on their own lines, links with their address,
 * spoilers without their content (as in the HTML part).
 */
export function htmlToText(html: string, realmUrl: string): string {
  const out: string[] = [];
  const walk = (el: Element, inPre: boolean) => {
    const block = BLOCK_TAGS.has(el.tag);
    if (block) out.push("\n");
    if (el.tag === "li") out.push("- ");
    if (el.tag === "br") out.push("\n");
    const pre = inPre || el.tag === "pre";
    const start = out.length;
    out.push(pre ? el.text : el.text.replace(/\s+/g, " "));
    for (const child of el.children) walk(child, pre);
    if (el.tag === "blockquote") {
      const quoted = out.splice(start).join("").trim().replace(/^/gm, "> ");
      out.push(quoted);
    }
    if (el.tag === "a") {
      const href = el.attrs.find(([k]) => k === "href")?.[1];
      const shown = out.slice(start).join("").trim();
      if (href && href !== shown && !href.startsWith("mailto:")) out.push(` (${href.startsWith("/") ? realmUrl + href : href})`);
    }
    if (block) out.push("\n");
    out.push(inPre ? el.tail : el.tail.replace(/\s+/g, " "));
  };
  walk(parseForMail(html), false);
  return out
    .join("")
    .split("\n")
    .map((l) => l.replace(/[ \t]+$/, ""))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
