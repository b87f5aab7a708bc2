import { z } from "zod";
import { p } from "../params";
import { route } from "../route";

/**
 * The password reset pages ("Forgot your password?"), at Zulip's paths: clients send users to
 * `{realm_url}/accounts/password/reset/`. HTML pages without credentials, as the other pages
 * mails lead to (see pages.ts); the key in the path of the second is the secret.
 */

/** The form asking for the account's address. */
export const PasswordResetPage = route({
  method: "GET",
  path: "/accounts/password/reset/",
  service: "accounts",
  auth: "none",
  page: true,
  params: {},
  response: z.any(),
});

/** The form sent: mails a reset link to the address's accounts; the page says the same whatever the address. */
export const SubmitPasswordResetPage = route({
  method: "POST",
  path: "/accounts/password/reset/",
  service: "accounts",
  auth: "none",
  page: true,
  params: { email: p.str() },
  response: z.any(),
});

/** The same form without the trailing slash, as a person may type the address. */
export const PasswordResetPageWithoutSlash = route({ ...PasswordResetPage, path: "/accounts/password/reset" });
export const SubmitPasswordResetPageWithoutSlash = route({ ...SubmitPasswordResetPage, path: "/accounts/password/reset" });

/** The form setting a new password, from a reset mail's link. */
export const SetPasswordPage = route({
  method: "GET",
  path: "/accounts/password/reset/{reset_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { reset_key: p.str().path() },
  response: z.any(),
});

/** The new password sent: set when both fields agree and it is long enough (the form shows again otherwise). */
export const SubmitSetPasswordPage = route({
  method: "POST",
  path: "/accounts/password/reset/{reset_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { reset_key: p.str().path(), new_password: p.str(), new_password_confirm: p.str() },
  response: z.any(),
});
