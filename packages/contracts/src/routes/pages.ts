import { z } from "zod";
import { p } from "../params";
import { route } from "../route";

/**
 * The few web pages a mail links to (answered in HTML, not JSON, and without credentials: the key
 * in the path is the secret). Served at the root like Zulip's (`/accounts/...`), so links in mails
 * look as Zulip's do.
 */

/** The sign-up form of an email invitation's link. */
export const ConfirmationPage = route({
  method: "GET",
  path: "/accounts/do_confirm/{confirmation_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { confirmation_key: p.str().path() },
  response: z.any(),
});

/** The sign-up form sent: creates the account (the form shows again with what was wrong). */
export const SubmitConfirmationPage = route({
  method: "POST",
  path: "/accounts/do_confirm/{confirmation_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { confirmation_key: p.str().path(), full_name: p.str(), password: p.str() },
  response: z.any(),
});
