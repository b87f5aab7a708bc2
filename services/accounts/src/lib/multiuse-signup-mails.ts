import type { Mail } from "@chat/platform";
import { line, link, mailBody } from "./mail-body";

/**
 * The mail confirming an address given on a reusable invitation link's page (`/join/{key}/`).
 * Written here, in the manner of lib/mails.ts: the organization, the link, and how long it works.
 */
export function multiuseSignupMail(p: { to: string; realmName: string; realmUrl: string; link: string; validForHours: number }): Mail {
  return {
    to: p.to,
    fromName: p.realmName,
    subject: `Confirm your address to join ${p.realmName}`,
    ...mailBody([
      line`This address was given to join ${p.realmName}, a team chat at ${link(p.realmUrl)}.`,
      "",
      "To create your account, open this link:",
      link(p.link),
      "",
      `The link works for ${p.validForHours} hours.`,
      "",
      "If it was not you, you can ignore this mail: no account is made without the link.",
    ]),
  };
}
