import type { Mail } from "@chat/platform";
import { line, link, mailBody, type MailLine } from "./mail-body";

/**
 * The password reset mails (written here; they carry what Zulip's carry: which account of which
 * organization, the link, and that someone else may have asked).
 */

const FROM_NAME = "Account security";

/** The mail to an account: the link that sets its new password. */
export function passwordResetMail(p: { to: string; realmName: string; realmUrl: string; link: string; validHours: number }): Mail {
  return {
    to: p.to,
    fromName: FROM_NAME,
    subject: `Reset your password for ${p.realmName}`,
    ...mailBody([
      line`Someone (possibly you) asked to reset the password of the account ${p.to} in ${p.realmName} (${link(p.realmUrl)}).`,
      "",
      "To choose a new password, open this link:",
      link(p.link),
      "",
      `The link works once, for ${p.validHours} hours.`,
      "",
      "If you did not ask for this, you can ignore this mail: your password stays as it is.",
    ]),
  };
}

/**
 * The mail to an address with no account where the reset was asked (Zulip sends it too, so the
 * page can answer the same whatever the address); it names the organizations where the address
 * does have an account, if any.
 */
export function passwordResetNoAccountMail(p: { to: string; url: string; accountsElsewhere: Array<{ realmName: string; realmUrl: string }> }): Mail {
  const elsewhere: MailLine[] = p.accountsElsewhere.length
    ? [
        "",
        "This address does have an account in:",
        ...p.accountsElsewhere.map((a) => line`- ${a.realmName} (${link(a.realmUrl)})`),
        "To reset one of those passwords, ask again from that organization's address.",
      ]
    : [];
  return {
    to: p.to,
    fromName: FROM_NAME,
    subject: "Password reset request",
    ...mailBody([
      line`Someone (possibly you) asked to reset the password of an account with the address ${p.to} at ${link(p.url)}, but there is no account with this address there.`,
      ...elsewhere,
      "",
      "If you did not ask for this, you can ignore this mail.",
    ]),
  };
}
