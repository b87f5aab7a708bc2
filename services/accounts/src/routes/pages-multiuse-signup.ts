import {
  MultiuseSignupConfirmPage,
  MultiuseSignupPage,
  MultiuseSignupPageWithoutSlash,
  SubmitMultiuseSignupConfirmPage,
  SubmitMultiuseSignupPage,
  SubmitMultiuseSignupPageWithoutSlash,
} from "@chat/contracts";
import { ApiError, organizationUrl, registerRoute } from "@chat/platform";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isLinkExpired } from "../actions/invites";
import { doCompleteMultiuseSignup, doRequestMultiuseSignup, SIGNUP_CONFIRMATION_HOURS } from "../actions/multiuse-signup";
import type { AccountsDeps } from "../deps";
import { longEnoughPassword } from "../lib/credentials";
import { accountForm, errorLine, html, sendPage, servesRealm, visitorIp, type Html } from "../lib/pages";
import { getMultiuseLink, getMultiuseSignupByKey } from "../queries/multiuse-signup";
import type { RealmRow } from "../store/realms";

const EXPIRED_TITLE = "This link has expired";
const expiredBody = html`<p>The invitation link you followed has expired or has been deactivated.</p>
<p class="muted">Ask someone in the organization for a new one.</p>`;

function emailForm(realm: RealmRow, values: { email?: string; error?: string | Html }): Html {
  return html`<p>You have been invited to join <strong>${realm.name}</strong>. Enter your email address; we will mail you a link to create your account.</p>
${errorLine(values.error)}
<form method="post">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${values.email ?? ""}">
<button type="submit">Sign up</button>
</form>`;
}

function signupForm(realm: RealmRow, email: string, values: { fullName?: string; error?: string }): Html {
  return accountForm(html`<p>Create your account in <strong>${realm.name}</strong> as <strong>${email}</strong>.</p>`, values);
}

/** The pages of a reusable invitation link: the address form, then the mailed link's sign-up form. */
export function multiuseSignupPageRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  const expired = (req: FastifyRequest, reply: FastifyReply) => sendPage(req, reply, 404, EXPIRED_TITLE, expiredBody);

  for (const def of [MultiuseSignupPage, MultiuseSignupPageWithoutSlash]) {
    registerRoute(app, def, async ({ params, req, reply }) => {
      const found = await getMultiuseLink(deps, params.confirmation_key);
      if (!found || !servesRealm(req, found.realm)) return expired(req, reply);
      sendPage(req, reply, 200, `Join ${found.realm.name}`, emailForm(found.realm, {}));
    });
  }

  for (const def of [SubmitMultiuseSignupPage, SubmitMultiuseSignupPageWithoutSlash]) {
    registerRoute(app, def, async ({ params, req, reply }) => {
      const found = await getMultiuseLink(deps, params.confirmation_key);
      if (!found || !servesRealm(req, found.realm)) return expired(req, reply);
      const { realm } = found;
      const email = params.email ?? "";
      const again = (status: number, error: string | Html) => sendPage(req, reply, status, `Join ${realm.name}`, emailForm(realm, { email, error }));
      const outcome = await doRequestMultiuseSignup(deps, found, email, visitorIp(req));
      const url = organizationUrl(deps.config, realm.stringId);
      switch (outcome.kind) {
        case "expired":
          return expired(req, reply);
        case "refused":
          return again(400, outcome.error);
        case "registered":
          return again(400, html`${outcome.email} already has an account in ${realm.name}. Log in at <a href="${url}">${url}</a> instead.`);
        case "limited":
          return again(429, `Too many confirmation mails were sent to ${outcome.email} today. Use the link of one of them, or try again tomorrow.`);
        case "sent":
          return sendPage(req, reply, 200, "Check your email", html`<p>We mailed a link to <strong>${outcome.email}</strong>.</p>
<p>Open it to create your account in <strong>${realm.name}</strong>. It works for ${SIGNUP_CONFIRMATION_HOURS} hours.</p>
<p class="muted">No mail? Look in your spam folder, or send the address again.</p>`);
      }
    });
  }

  registerRoute(app, MultiuseSignupConfirmPage, async ({ params, req, reply }) => {
    const found = await getMultiuseSignupByKey(deps, params.confirmation_key);
    if (!found || !servesRealm(req, found.realm)) return expired(req, reply);
    sendPage(req, reply, 200, `Join ${found.realm.name}`, signupForm(found.realm, found.signup.email, {}));
  });

  registerRoute(app, SubmitMultiuseSignupConfirmPage, async ({ params, req, reply }) => {
    const found = await getMultiuseSignupByKey(deps, params.confirmation_key);
    if (!found || !servesRealm(req, found.realm)) return expired(req, reply);
    const { signup, realm } = found;
    const fullName = params.full_name?.trim() ?? "";
    const password = params.password ?? "";
    const again = (error: string) => sendPage(req, reply, 400, `Join ${realm.name}`, signupForm(realm, signup.email, { fullName, error }));
    if (!fullName) return again("Please enter your name.");
    if (!longEnoughPassword(password)) return again("The password is too weak.");
    try {
      await doCompleteMultiuseSignup(deps, params.confirmation_key, { fullName, password });
    } catch (err) {
      if (isLinkExpired(err)) return expired(req, reply);
      // The account's own checks (the name, the organization's address rules, an account made since) say what is wrong.
      if (err instanceof ApiError && err.status === 400) return again(err.message);
      throw err;
    }
    const url = organizationUrl(deps.config, realm.stringId);
    sendPage(req, reply, 200, `Welcome to ${realm.name}`, html`<p>Your account <strong>${signup.email}</strong> is ready.</p>
<p>Log in at <a href="${url}">${url}</a> with this address and your password, in the app or the browser.</p>`);
  });
}
