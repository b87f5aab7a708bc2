import { z } from "zod";

/*
 * Django's URLValidator, which Zulip's `check_url` uses: an http, https, ftp or ftps URL whose
 * host is an IP address, `localhost` or a name with a top-level domain (so `http://bot:8080`
 * is refused, as Zulip refuses it), at most 2048 characters, no tabs or line breaks.
 */
const UL = "\\u00a1-\\uffff";
const IPV4_PART = "(?:0|25[0-5]|2[0-4][0-9]|1[0-9]?[0-9]?|[1-9][0-9]?)";
const IPV4 = `${IPV4_PART}(?:\\.${IPV4_PART}){3}`;
const IPV6 = "\\[[0-9a-f:.]+\\]";
const HOSTNAME = `[a-z${UL}0-9](?:[a-z${UL}0-9-]{0,61}[a-z${UL}0-9])?`;
const DOMAIN = `(?:\\.(?!-)[a-z${UL}0-9-]{1,63}(?<!-))*`;
const TLD = `\\.(?!-)(?:[a-z${UL}-]{2,63}|xn--[a-z0-9]{1,59})(?<!-)\\.?`;
const HOST = `(?:${HOSTNAME}${DOMAIN}${TLD}|localhost)`;
const URL_PATTERN = new RegExp(
  `^[a-z0-9.+-]*://(?:[^\\s:@/]+(?::[^\\s:@/]*)?@)?(${IPV4}|${IPV6}|${HOST})(?::[0-9]{1,5})?(?:[/?#][^\\s]*)?$`,
  "i",
);
const SCHEMES = new Set(["http", "https", "ftp", "ftps"]);

export function isUrl(value: string): boolean {
  if (value.length > 2048 || /[\t\r\n]/.test(value)) return false;
  if (!SCHEMES.has(value.split("://")[0].toLowerCase())) return false;
  const host = URL_PATTERN.exec(value)?.[1];
  if (host === undefined || host.length > 253) return false;
  // Django checks a bracketed IPv6 address separately; the WHATWG parser does the same job.
  return !host.startsWith("[") || URL.canParse(value);
}

/** A URL parameter; a failure reads as Zulip's `<param> is not a URL`. */
export const UrlString = z.string().refine(isUrl, { message: "{name} is not a URL" });
