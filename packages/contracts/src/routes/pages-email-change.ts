import { z } from "zod";
import { p } from "../params";
import { route } from "../route";

/**
 * The page the link of an email change's mail opens (HTML, without credentials: the key in the
 * path is the secret; see pages.ts). Opening it changes nothing, since mail scanners follow
 * links; its button posts to the same path, which makes the change.
 */

/** Asks to confirm the change (or says why it can no longer be made). */
export const ConfirmEmailChangePage = route({
  method: "GET",
  path: "/accounts/confirm_new_email/{confirmation_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { confirmation_key: p.str().path() },
  response: z.any(),
});

/** The button pressed: the account's address becomes the new one; the key is used up. */
export const SubmitEmailChangePage = route({
  method: "POST",
  path: "/accounts/confirm_new_email/{confirmation_key}",
  service: "accounts",
  auth: "none",
  page: true,
  params: { confirmation_key: p.str().path() },
  response: z.any(),
});
