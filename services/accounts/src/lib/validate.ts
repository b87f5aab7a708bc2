import { badRequest } from "@chat/platform";

const EMAIL = /^[^\s@",<>()[\]\\;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/**
 * Length in characters (code points), as Python's `len` counts them; `String#length` counts
 * UTF-16 units, two per emoji. Never more than `s.length`, so a short string costs nothing.
 */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Longer than `max` characters (code points). */
export const exceeds = (s: string, max: number): boolean => s.length > max && charLength(s) > max;

export function isValidEmail(email: string): boolean {
  return !exceeds(email, 254) && EMAIL.test(email);
}

export const MAX_FULL_NAME_LENGTH = 100;

/** The largest value of a PostgreSQL `integer` column. */
export const PG_INT_MAX = 2 ** 31 - 1;

/** The last instant Python's datetime (so Zulip and its clients) can represent: 9999-12-31. */
export const MAX_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Zulip's full-name rules: trimmed, 1-100 characters, no control or markup-breaking characters. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (exceeds(name, MAX_FULL_NAME_LENGTH)) throw badRequest("Name too long!");
  if (name.length === 0) throw badRequest("Name too short!");
  // Control/format characters and the ones that break mention syntax, as Zulip refuses.
  if (/[\p{C}*`\\>"@]/u.test(name)) throw badRequest("Invalid characters in name!");
  return name;
}
