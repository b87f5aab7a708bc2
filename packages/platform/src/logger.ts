import pino, { type Logger } from "pino";

export type { Logger };

/**
 * Paths whose last part is a bearer secret: the keys of the links mails carry (sign-up, password
 * reset, email change, reusable invitations) and a data export's token. Whoever reads the logs
 * must not be able to follow them.
 */
const SECRET_PATHS = [
  /^((?:\/api\/v1)?\/(?:accounts\/(?:do_confirm|do_confirm_signup|confirm_new_email|password\/reset)|join)\/)[^/?#]+/,
  /^((?:\/api\/v1)?\/user_avatars\/exports\/[^/]+\/)[^/?#]+/,
];

/** An integration URL's key (`/external/json?api_key=...`), a credential in the query string. */
const SECRET_PARAMS = new Set(["api_key"]);

/** A request URL as the logs show it: the secret of a link path replaced, and any `api_key`. */
export function redactUrl(url: string): string {
  const query = redactQuery(url);
  for (const re of SECRET_PATHS) if (re.test(query)) return query.replace(re, "$1[secret]");
  return query;
}

/**
 * The values of secret parameters replaced, their names compared decoded as the query parser
 * decodes them: `api%5Fkey=...` is the key too.
 */
function redactQuery(url: string): string {
  const start = url.indexOf("?");
  if (start < 0) return url;
  const params = url.slice(start + 1).split("&");
  let changed = false;
  for (let i = 0; i < params.length; i++) {
    const eq = params[i].indexOf("=");
    if (eq < 0 || !SECRET_PARAMS.has(decodeName(params[i].slice(0, eq)))) continue;
    params[i] = `${params[i].slice(0, eq)}=[secret]`;
    changed = true;
  }
  return changed ? `${url.slice(0, start + 1)}${params.join("&")}` : url;
}

function decodeName(name: string): string {
  if (!name.includes("%") && !name.includes("+")) return name;
  try {
    return decodeURIComponent(name.replace(/\+/g, " "));
  } catch {
    return name;
  }
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  hostname?: string;
  ip?: string;
  remoteAddress?: string;
  socket?: { remotePort?: number };
}

/** fastify's request serializer's fields (a FastifyRequest or the raw routes' plain object), the URL redacted. */
function serializeRequest(req: LoggedRequest) {
  return {
    method: req.method,
    url: req.url === undefined ? undefined : redactUrl(req.url),
    host: req.host ?? req.hostname,
    remoteAddress: req.ip ?? req.remoteAddress,
    remotePort: req.socket?.remotePort,
  };
}

/** JSON logs on stdout (or `destination`, which tests use to read what was logged). */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime, serializers: { req: serializeRequest } };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger whose lines land in `lines` as parsed objects: for tests that assert what was logged. */
export function createMemoryLogger(service = "test", level = "debug"): { log: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const log = createLogger(service, level, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}
