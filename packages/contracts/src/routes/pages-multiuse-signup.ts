import { z } from "zod";
import { p } from "../params";
import { route } from "../route";

/**
 * The web pages of a reusable invitation link (answered in HTML; the keys in the paths are the
 * secrets). `/join/{key}/` asks for an address and mails it a confirmation link, which leads to
 * the sign-up form at `/accounts/do_confirm_signup/{key}`.
 *
 * The link is `/join/{key}/`, with Zulip's trailing slash; without it (typed by hand, or cut by
 * a chat client) the same page is served, as routes match paths segment by segment.
 */

const joinParams = { confirmation_key: p.str().path() };

/** The form asking for the address to sign up with. */
export const MultiuseSignupPage = route({
  method: "GET",
  path: "/join/{confirmation_key}/",
  service: "accounts",
  auth: "none",
  page: true,
  params: joinParams,
  response: z.any(),
});

export const MultiuseSignupPageWithoutSlash = route({ ...MultiuseSignupPage, path: "/join/{confirmation_key}" });

/** The address sent: checked, then mailed a confirmation link (the form shows again with what was wrong). */
export const SubmitMultiuseSignupPage = route({
  method: "POST",
  path: "/join/{confirmation_key}/",
  service: "accounts",
  auth: "none",
  page: true,
  params: { ...joinParams, email: p.str() },
  response: z.any(),
});

export const SubmitMultiuseSignupPageWithoutSlash = route({ ...SubmitMultiuseSignupPage, path: "/join/{confirmation_key}" });

/** The confirmation link's sign-up form (name and password). */
export const MultiuseSignupConfirmPage = route({
  method: "GET",
  path: "/accounts/do_confirm_signup/{confirmation_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { confirmation_key: p.str().path() },
  response: z.any(),
});

/** The sign-up form sent: creates the account through the reusable link. */
export const SubmitMultiuseSignupConfirmPage = route({
  method: "POST",
  path: "/accounts/do_confirm_signup/{confirmation_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { confirmation_key: p.str().path(), full_name: p.str(), password: p.str() },
  response: z.any(),
});
