import { exceedsChars } from "@chat/contracts";
import { badRequest } from "@chat/platform";

const EMAIL = /^[^\s@",<>()[\]\\;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** Longer than `max` characters (code points, as Python's `len`), not UTF-16 units. */
export const exceeds = exceedsChars;

export function isValidEmail(email: string): boolean {
  return !exceeds(email, 254) && EMAIL.test(email);
}

export const MAX_FULL_NAME_LENGTH = 100;
/** Zulip's UserProfile.MIN_NAME_LENGTH. */
export const MIN_FULL_NAME_LENGTH = 2;

/** The largest value of a PostgreSQL `integer` column. */
export const PG_INT_MAX = 2 ** 31 - 1;

/** The last instant Python's datetime (so Zulip and its clients) can represent: 9999-12-31. */
export const MAX_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * What two names are compared by where names must be unique: NFKC, then case folded (Zulip's
 * `unicodedata.normalize("NFKC", name).casefold()`; upper then lower case folds "ß" to "ss" too).
 */
export const fullNameKey = (name: string): string => name.normalize("NFKC").toUpperCase().toLowerCase();

/** Zulip's full-name rules: trimmed, 2-100 characters, no control or markup-breaking characters. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (exceeds(name, MAX_FULL_NAME_LENGTH)) throw badRequest("Name too long!");
  if ([...name].length < MIN_FULL_NAME_LENGTH) throw badRequest("Name too short!");
  // Control/format characters and the ones that break mention syntax, as Zulip refuses.
  if (/[\p{C}*`\\>"@]/u.test(name)) throw badRequest("Invalid characters in name!");
  return name;
}
