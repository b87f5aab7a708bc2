import type { Mail } from "@chat/platform";
import { line, link, mailBody } from "./mail-body";

/**
 * The mails accounts sends, as text with the same words in HTML beside it (mailBody; the links
 * are what matters). Written here; they carry the facts Zulip's mails carry (who invited whom to
 * which organization, until when the link works).
 */

function validity(expiresAt: Date | null, now: Date): string {
  if (!expiresAt) return "The link does not expire.";
  const days = Math.round((expiresAt.getTime() - now.getTime()) / 86_400_000);
  if (days >= 2) return `The link works for ${days} days.`;
  const hours = Math.max(1, Math.round((expiresAt.getTime() - now.getTime()) / 3_600_000));
  return `The link works for ${hours} hour${hours === 1 ? "" : "s"}.`;
}

export function invitationMail(p: {
  to: string;
  referrerName: string;
  referrerEmail: string;
  realmName: string;
  realmUrl: string;
  link: string;
  expiresAt: Date | null;
  now: Date;
}): Mail {
  return {
    to: p.to,
    fromName: `${p.referrerName} (via ${p.realmName})`,
    replyTo: p.referrerEmail,
    subject: `${p.referrerName} invited you to join ${p.realmName}`,
    ...mailBody([
      line`${p.referrerName} (${p.referrerEmail}) invited you to join ${p.realmName}, a team chat at ${link(p.realmUrl)}.`,
      "",
      "To create your account, open this link:",
      link(p.link),
      "",
      validity(p.expiresAt, p.now),
      "",
      "If you did not expect this invitation, you can ignore this mail.",
    ]),
  };
}

export function deactivationMail(p: { to: string; realmName: string; realmUrl: string; adminName: string; comment: string }): Mail {
  return {
    to: p.to,
    fromName: p.realmName,
    subject: `Your account in ${p.realmName} has been deactivated`,
    ...mailBody([
      line`${p.adminName} deactivated your account in ${p.realmName} (${link(p.realmUrl)}).`,
      ...(p.comment ? ["", "Their message:", "", p.comment] : []),
      "",
      "You can no longer log in there. If you think this is a mistake, ask the organization's administrators.",
    ]),
  };
}

/** What a User-Agent says of the device: its product and platform, as a person would name them. */
export function deviceOf(userAgent: string | undefined): string {
  if (!userAgent?.trim()) return "an unknown device";
  const product = userAgent.split("/", 1)[0].split("(", 1)[0].trim();
  const platforms: Array<[RegExp, string]> = [
    [/android/i, "Android"],
    [/iphone|ipad|ios/i, "iOS"],
    [/windows/i, "Windows"],
    [/mac ?os|macintosh/i, "macOS"],
    [/linux/i, "Linux"],
  ];
  const platform = platforms.find(([re]) => re.test(userAgent))?.[1];
  const name = product === "Mozilla" ? "a browser" : product || "an unknown client";
  return platform ? `${name} on ${platform}` : name;
}

function formatWhen(when: Date, timezone: string): string {
  const options: Intl.DateTimeFormatOptions = { dateStyle: "full", timeStyle: "long" };
  try {
    return new Intl.DateTimeFormat("en-US", { ...options, timeZone: timezone || "UTC" }).format(when);
  } catch {
    return new Intl.DateTimeFormat("en-US", { ...options, timeZone: "UTC" }).format(when);
  }
}

export function newLoginMail(p: { to: string; realmName: string; realmUrl: string; when: Date; timezone: string; userAgent: string | undefined }): Mail {
  return {
    to: p.to,
    fromName: p.realmName,
    subject: `New login to ${p.realmName}`,
    ...mailBody([
      line`Your account ${p.to} in ${p.realmName} (${link(p.realmUrl)}) was just logged in to.`,
      "",
      `When: ${formatWhen(p.when, p.timezone)}`,
      `Device: ${deviceOf(p.userAgent)}`,
      "",
      "If this was you, there is nothing to do. If not, change your password at once",
      line`(${link(`${p.realmUrl}/accounts/password/reset/`)}) and tell the organization's administrators.`,
      "",
      "You can turn these notices off in your notification settings.",
    ]),
  };
}
