import { ConfirmEmailChangePage, SubmitEmailChangePage } from "@chat/contracts";
import { organizationUrl, registerRoute } from "@chat/platform";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { doConfirmEmailChange, getEmailChangeByKey, type EmailChangeLink } from "../actions/email-change";
import type { AccountsDeps } from "../deps";
import { html, sendPage, servesRealm } from "../lib/pages";

const TITLE = "Change your email address";
const EXPIRED_TITLE = "This link has expired";
const expiredBody = html`<p>The link you followed has expired or has already been used.</p>
<p class="muted">To change your email address, ask for the change again in your settings.</p>`;

/** Why the change cannot be made (the link stays usable, should the reason go away). */
const refusedBody = ({ change, problem }: EmailChangeLink) => html`<p class="error" role="alert">${problem}</p>
<p class="muted">The email address of your account is still <strong>${change.oldEmail}</strong>.</p>`;

/** The pages of an email change's link: a question with a button (GET), and the change (POST). */
export function emailChangePageRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  const expired = (req: FastifyRequest, reply: FastifyReply) => sendPage(req, reply, 404, EXPIRED_TITLE, expiredBody);

  // A GET changes nothing: mail scanners and link previews open links.
  registerRoute(app, ConfirmEmailChangePage, async ({ params, req, reply }) => {
    const link = await getEmailChangeByKey(deps, params.confirmation_key);
    if (!link || !servesRealm(req, link.realm)) return expired(req, reply);
    if (link.problem) return sendPage(req, reply, 400, TITLE, refusedBody(link));
    const { change, realm } = link;
    sendPage(
      req,
      reply,
      200,
      TITLE,
      html`<p>Change the email address of your account in <strong>${realm.name}</strong> from <strong>${change.oldEmail}</strong> to <strong>${change.newEmail}</strong>?</p>
<form method="post">
<button type="submit">Confirm the change</button>
</form>`,
    );
  });

  registerRoute(app, SubmitEmailChangePage, async ({ params, req, reply }) => {
    const pending = await getEmailChangeByKey(deps, params.confirmation_key);
    if (!pending || !servesRealm(req, pending.realm)) return expired(req, reply);
    const link = await doConfirmEmailChange(deps, params.confirmation_key);
    if (!link) return expired(req, reply);
    if (link.problem) return sendPage(req, reply, 400, TITLE, refusedBody(link));
    const { change, realm } = link;
    const url = organizationUrl(deps.config, realm.stringId);
    sendPage(
      req,
      reply,
      200,
      "Email address changed",
      html`<p>The email address of your account in <strong>${realm.name}</strong> is now <strong>${change.newEmail}</strong> (it was ${change.oldEmail}).</p>
<p>Log in at <a href="${url}">${url}</a> with the new address from now on.</p>`,
    );
  });
}
