import { ConfirmationPage, SubmitConfirmationPage } from "@chat/contracts";
import { ApiError, organizationUrl, registerRoute } from "@chat/platform";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { doAcceptInviteByKey, getInviteByKey, isLinkExpired } from "../actions/invites";
import type { AccountsDeps } from "../deps";
import { longEnoughPassword } from "../lib/credentials";
import { accountForm, html, sendPage, servesRealm, type Html } from "../lib/pages";
import type { InviteRow } from "../store/invites";
import type { RealmRow } from "../store/realms";

const EXPIRED_TITLE = "This link has expired";
const expiredBody = html`<p>The link you followed has expired or has already been used.</p>
<p class="muted">Ask whoever invited you for a new invitation.</p>`;

function signupForm(invite: InviteRow, realm: RealmRow, values: { fullName?: string; error?: string }): Html {
  return accountForm(html`<p>You were invited to join <strong>${realm.name}</strong> as <strong>${invite.email}</strong>.</p>`, values);
}

/** The pages an invitation's mail links to: the sign-up form and its answer. */
export function pageRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  const expired = (req: FastifyRequest, reply: FastifyReply) => sendPage(req, reply, 404, EXPIRED_TITLE, expiredBody);

  registerRoute(app, ConfirmationPage, async ({ params, req, reply }) => {
    const found = await getInviteByKey(deps, params.confirmation_key);
    if (!found || !servesRealm(req, found.realm)) return expired(req, reply);
    sendPage(req, reply, 200, `Join ${found.realm.name}`, signupForm(found.invite, found.realm, {}));
  });

  registerRoute(app, SubmitConfirmationPage, async ({ params, req, reply }) => {
    const found = await getInviteByKey(deps, params.confirmation_key);
    if (!found || !servesRealm(req, found.realm)) return expired(req, reply);
    const { invite, realm } = found;
    const fullName = params.full_name?.trim() ?? "";
    const password = params.password ?? "";
    const again = (error: string) => sendPage(req, reply, 400, `Join ${realm.name}`, signupForm(invite, realm, { fullName, error }));
    if (!fullName) return again("Please enter your name.");
    if (!longEnoughPassword(password)) return again("The password is too weak.");
    try {
      await doAcceptInviteByKey(deps, params.confirmation_key, { fullName, password });
    } catch (err) {
      if (isLinkExpired(err)) return expired(req, reply);
      // The account's own checks (the name, the organization's address rules) say what is wrong.
      if (err instanceof ApiError && err.status === 400) return again(err.message);
      throw err;
    }
    const url = organizationUrl(deps.config, realm.stringId);
    sendPage(
      req,
      reply,
      200,
      `Welcome to ${realm.name}`,
      html`<p>Your account <strong>${invite.email}</strong> is ready.</p>
<p>Log in at <a href="${url}">${url}</a> with this address and your password, in the app or the browser.</p>`,
    );
  });
}
