import { PATH_PARAM_PATTERNS, type HttpMethod, type RouteDef } from "@chat/contracts";

export const API_PREFIX = "/api/v1";

/**
 * Paths also served at the root, as Zulip does: the URL `POST /user_uploads` returns is
 * `/user_uploads/...`, and API clients fetch it with the same Basic credentials. Uploaded
 * avatars (`/user_avatars/...`, public) are served at the root the same way, and so are the web
 * pages mails and invitation links lead to (`/accounts/...`, `/join/...`).
 */
export const ROOT_ALIASES = ["/user_uploads/", "/user_avatars/", "/accounts/", "/join/"];

/** The URL the owning service knows a request by: root aliases gain the `/api/v1` prefix. */
export function upstreamUrl(url: string): string {
  return ROOT_ALIASES.some((prefix) => url.startsWith(prefix)) ? API_PREFIX + url : url;
}

type Segment = { literal: string } | { param: string; digitsOnly: boolean; pattern?: RegExp };

interface Pattern {
  path: string;
  segments: Segment[];
  byMethod: Map<HttpMethod, RouteDef>;
}

export type RouteMatch =
  | { kind: "route"; route: RouteDef }
  | { kind: "method_not_allowed"; allowed: HttpMethod[] }
  | { kind: "not_found" };

const DIGITS = /^[0-9]+$/;

function compile(def: RouteDef): Segment[] {
  return def.path
    .split("/")
    .slice(1)
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (!m) return { literal: part };
      // Integer ids only match digits, so `/users/me` never lands on `/users/{user_id}`.
      const pattern = PATH_PARAM_PATTERNS[m[1]];
      return { param: m[1], digitsOnly: def.params[m[1]]?.kind === "int", ...(pattern ? { pattern: new RegExp(pattern) } : {}) };
    });
}

/** Literal segments win over placeholders, and integer placeholders over string ones, left to right. */
function moreSpecific(a: Pattern, b: Pattern): number {
  const rank = (seg: Segment) => ("literal" in seg ? 0 : seg.digitsOnly || seg.pattern ? 1 : 2);
  for (let i = 0; i < a.segments.length; i++) {
    const d = rank(a.segments[i]) - rank(b.segments[i]);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Matches request paths against the contracts' route table. Built from the table at start, so a
 * route another team adds to `publicRoutes` is served without touching the gateway.
 */
export class Router {
  private readonly bySegmentCount = new Map<number, Pattern[]>();

  constructor(routes: readonly RouteDef[]) {
    const patterns = new Map<string, Pattern>();
    for (const def of routes) {
      // Service-to-service routes are never reachable from outside, whatever the table says.
      if (def.auth === "internal" || def.path.startsWith("/internal/")) continue;
      const segments = compile(def);
      const shape = segments.map((s) => ("literal" in s ? s.literal : s.digitsOnly ? "{int}" : s.pattern ? `{${s.pattern.source}}` : "{str}")).join("/");
      let pattern = patterns.get(shape);
      if (!pattern) {
        pattern = { path: def.path, segments, byMethod: new Map() };
        patterns.set(shape, pattern);
      }
      pattern.byMethod.set(def.method, def);
    }
    for (const pattern of patterns.values()) {
      const list = this.bySegmentCount.get(pattern.segments.length) ?? [];
      list.push(pattern);
      this.bySegmentCount.set(pattern.segments.length, list);
    }
    for (const list of this.bySegmentCount.values()) list.sort(moreSpecific);
  }

  /** `url` is the request URL (query string allowed). HEAD is served by the GET route. */
  match(method: string, url: string): RouteMatch {
    const candidates = this.candidates(url);
    if (candidates.length === 0) return { kind: "not_found" };
    const wanted = (method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase()) as HttpMethod;
    for (const pattern of candidates) {
      const route = pattern.byMethod.get(wanted);
      if (route) return { kind: "route", route };
    }
    const allowed = new Set<HttpMethod>();
    for (const pattern of candidates) for (const m of pattern.byMethod.keys()) allowed.add(m);
    return { kind: "method_not_allowed", allowed: [...allowed].sort() };
  }

  /** Whether the path of `url` is served with some method other than `method`. */
  servesOtherThan(method: HttpMethod, url: string): boolean {
    return this.candidates(url).some((p) => [...p.byMethod.keys()].some((m) => m !== method));
  }

  /** The patterns the path of `url` fits, most specific first. */
  private candidates(url: string): Pattern[] {
    const pathname = upstreamUrl(url).split("?", 1)[0];
    if (!pathname.startsWith(API_PREFIX + "/")) return [];
    const parts = pathname.slice(API_PREFIX.length).split("/").slice(1);
    let decoded: string[];
    try {
      decoded = parts.map((p) => decodeURIComponent(p));
    } catch {
      return [];
    }
    return (this.bySegmentCount.get(parts.length) ?? []).filter((p) => matches(p, decoded));
  }
}

function matches(pattern: Pattern, parts: string[]): boolean {
  return pattern.segments.every((seg, i) => {
    const part = parts[i];
    if ("literal" in seg) return seg.literal === part;
    return part !== "" && (!seg.digitsOnly || DIGITS.test(part)) && (!seg.pattern || seg.pattern.test(part));
  });
}
