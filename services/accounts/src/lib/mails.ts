import type { Mail } from "@chat/platform";

/**
 * The mails accounts sends, as text (every client shows it; the links are what matters). Written
 * here; they carry the facts Zulip's mails carry (who invited whom to which organization, until
 * when the link works).
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
    text: [
      `${p.referrerName} (${p.referrerEmail}) invited you to join ${p.realmName}, a team chat at ${p.realmUrl}.`,
      "",
      "To create your account, open this link:",
      p.link,
      "",
      validity(p.expiresAt, p.now),
      "",
      "If you did not expect this invitation, you can ignore this mail.",
    ].join("\n"),
  };
}

export function deactivationMail(p: { to: string; realmName: string; realmUrl: string; adminName: string; comment: string }): Mail {
  return {
    to: p.to,
    fromName: p.realmName,
    subject: `Your account in ${p.realmName} has been deactivated`,
    text: [
      `${p.adminName} deactivated your account in ${p.realmName} (${p.realmUrl}).`,
      ...(p.comment ? ["", "Their message:", "", p.comment] : []),
      "",
      "You can no longer log in there. If you think this is a mistake, ask the organization's administrators.",
    ].join("\n"),
  };
}
