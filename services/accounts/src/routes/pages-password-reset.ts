import {
  PasswordResetPage,
  PasswordResetPageWithoutSlash,
  SetPasswordPage,
  SubmitPasswordResetPage,
  SubmitPasswordResetPageWithoutSlash,
  SubmitSetPasswordPage,
} from "@chat/contracts";
import { ApiError, organizationUrl, readSubdomain, registerRoute } from "@chat/platform";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { doRequestPasswordReset, doResetPassword, getPasswordResetByKey, PASSWORD_RESET_VALIDITY_HOURS, type PasswordResetTarget } from "../actions/password-reset";
import type { AccountsDeps } from "../deps";
import { PASSWORD_MIN_LENGTH } from "../lib/credentials";
import { html, sendPage, visitorIp, type Html } from "../lib/pages";
import { realmOfSubdomain } from "../queries/server";
import type { RealmRow } from "../store/realms";

const REQUEST_TITLE = "Forgot your password?";
const SET_TITLE = "Set a new password";
const inRealm = (realm: RealmRow | null) => (realm ? html` in <strong>${realm.name}</strong>` : "");

function requestForm(realm: RealmRow | null, values: { email?: string; error?: string }): Html {
  return html`<p>Enter the email address of your account${inRealm(realm)}; we will mail you a link to set a new password.</p>
${values.error ? html`<p class="error" role="alert">${values.error}</p>` : ""}
<form method="post">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${values.email ?? ""}">
<button type="submit">Send reset link</button>
</form>`;
}

function setForm({ user, realm }: PasswordResetTarget, error?: string): Html {
  return html`<p>Choose a new password for <strong>${user.deliveryEmail}</strong> in <strong>${realm.name}</strong>.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post">
<label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}">
<label for="new_password_confirm">Confirm the new password</label>
<input id="new_password_confirm" name="new_password_confirm" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}">
<p class="muted">At least ${PASSWORD_MIN_LENGTH} characters.</p>
<button type="submit">Set password</button>
</form>`;
}

/** "Forgot your password?": the form asking for the address, and the form a reset mail's link opens. */
export function passwordResetPageRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  const expired = (req: FastifyRequest, reply: FastifyReply) =>
    sendPage(
      req,
      reply,
      404,
      "This link has expired",
      html`<p>The link you followed has expired or has already been used.</p>
<p><a href="/accounts/password/reset/">Ask for a new link</a></p>`,
    );

  /** The organization the host names (null on the deployment's host); a page says so when there is none. */
  const hostRealm = async (req: FastifyRequest, reply: FastifyReply): Promise<RealmRow | null | undefined> => {
    const subdomain = readSubdomain(req.headers);
    try {
      return subdomain === null ? null : await realmOfSubdomain(deps, subdomain);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "NONEXISTENT_SUBDOMAIN")) throw err;
      sendPage(req, reply, 404, "No such organization", html`<p>There is no organization at this address.</p>`);
      return undefined;
    }
  };

  for (const def of [PasswordResetPage, PasswordResetPageWithoutSlash]) {
    registerRoute(app, def, async ({ req, reply }) => {
      const realm = await hostRealm(req, reply);
      if (realm !== undefined) sendPage(req, reply, 200, REQUEST_TITLE, requestForm(realm, {}));
    });
  }

  for (const def of [SubmitPasswordResetPage, SubmitPasswordResetPageWithoutSlash]) registerRoute(app, def, async ({ params, req, reply }) => {
    const realm = await hostRealm(req, reply);
    if (realm === undefined) return;
    const email = params.email?.trim() ?? "";
    try {
      await doRequestPasswordReset(deps, email, realm, visitorIp(req));
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return sendPage(req, reply, 400, REQUEST_TITLE, requestForm(realm, { email, error: err.message }));
      throw err;
    }
    // The same page whether or not the address has an account.
    sendPage(
      req,
      reply,
      200,
      "Check your email",
      html`<p>If <strong>${email}</strong> has an account${inRealm(realm)}, we have mailed it a link to set a new password. The link works for ${PASSWORD_RESET_VALIDITY_HOURS} hours.</p>
<p class="muted">No mail? Look in your spam folder, and check that this is your account's address.</p>`,
    );
  });

  registerRoute(app, SetPasswordPage, async ({ params, req, reply }) => {
    const target = await getPasswordResetByKey(deps, params.reset_key, readSubdomain(req.headers));
    if (!target) return expired(req, reply);
    sendPage(req, reply, 200, SET_TITLE, setForm(target));
  });

  registerRoute(app, SubmitSetPasswordPage, async ({ params, req, reply }) => {
    const subdomain = readSubdomain(req.headers);
    const target = await getPasswordResetByKey(deps, params.reset_key, subdomain);
    if (!target) return expired(req, reply);
    let done: PasswordResetTarget | null;
    try {
      done = await doResetPassword(deps, params.reset_key, { newPassword: params.new_password ?? "", confirm: params.new_password_confirm ?? "" }, subdomain);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return sendPage(req, reply, 400, SET_TITLE, setForm(target, err.message));
      throw err;
    }
    if (!done) return expired(req, reply);
    const url = organizationUrl(deps.config, done.realm.stringId);
    sendPage(
      req,
      reply,
      200,
      "Password changed",
      html`<p>The password of <strong>${done.user.deliveryEmail}</strong> in <strong>${done.realm.name}</strong> is changed.</p>
<p>Log in at <a href="${url}">${url}</a> with this address and your new password, in the app or the browser.</p>`,
    );
  });
}
