import type { Mail } from "@chat/platform";
import { line, link, mailBody } from "./mail-body";

/**
 * The two mails of an email change (text and HTML, by mailBody): the link to the new address,
 * which proves the user owns it; then a notice to the old one, so that a change the owner did
 * not make does not go unnoticed. They carry the facts Zulip's carry (organization, both
 * addresses, the link). Both come from the organization's "account security" sender, as Zulip's
 * security mails.
 */

const securitySender = (realmName: string) => `${realmName} account security`;

export function confirmNewEmailMail(p: { to: string; oldEmail: string; realmName: string; realmUrl: string; link: string; validHours: number }): Mail {
  return {
    to: p.to,
    fromName: securitySender(p.realmName),
    subject: `Verify your new email address for ${p.realmName}`,
    ...mailBody([
      line`Someone (hopefully you) asked to change the email address of the account ${p.oldEmail} in ${p.realmName} (${link(p.realmUrl)}) to ${p.to}.`,
      "",
      "To confirm the change, open this link and press the button on the page:",
      link(p.link),
      "",
      `The link works for ${p.validHours} hours.`,
      "",
      "If you did not ask for this, you can ignore this mail: nothing changes until the link is used.",
    ]),
  };
}

export function emailChangedMail(p: { to: string; newEmail: string; realmName: string; realmUrl: string }): Mail {
  return {
    to: p.to,
    fromName: securitySender(p.realmName),
    subject: `Email address changed for ${p.realmName}`,
    ...mailBody([
      line`The email address of your account in ${p.realmName} (${link(p.realmUrl)}) was changed from ${p.to} to ${p.newEmail}.`,
      "",
      "If you did not make this change, contact the administrators of the organization at once.",
    ]),
  };
}
