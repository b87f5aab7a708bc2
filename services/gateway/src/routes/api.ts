import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import { fastifyPath, type ServiceName } from "@chat/contracts";
import { ApiError, identityHeaders, INTERNAL_HEADERS, MAX_REQUEST_BODY_BYTES, resourceNotFound, subdomainOfHost, type OrganizationHosts } from "@chat/platform";
import { clientIp } from "../client-info";
import type { Gate } from "../gate";
import type { UpstreamProxy } from "../proxy";
import { upstreamHeaders } from "../proxy";
import { isFormPost, readFormPost } from "../method-override";
import { API_PREFIX, ROOT_ALIASES, upstreamUrl, type Router } from "../router";

export interface ApiRouteDeps {
  router: Router;
  gate: Gate;
  proxy: UpstreamProxy;
  upstreams: Record<Exclude<ServiceName, "gateway">, string>;
  internalToken: string;
  /** The deployment's URL, and whether organizations have hosts of their own below it. */
  hosts: OrganizationHosts;
  /** Proxies in front of the gateway whose X-Forwarded-For entries are trusted (see clientIp). */
  trustProxyHops: number;
  /** How to compress large JSON answers for clients that accept it (the app registers @fastify/compress), or not at all. */
  compress: NonNullable<RouteOptions["compress"]>;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** An upload asked for below /api/v1 rather than at the root: the owner answers a temporary URL instead of the file. */
const apiForm = (url: string): Record<string, string> => (url.startsWith(`${API_PREFIX}/user_uploads/`) ? { [INTERNAL_HEADERS.apiForm]: "1" } : {});

const isMultipart = (req: FastifyRequest) => String(req.headers["content-type"] ?? "").toLowerCase().startsWith("multipart/form-data");

function isUploadPost(router: Router, url: string): boolean {
  const match = router.match("POST", url);
  return match.kind === "route" && match.route.upload === true;
}

/** The services' body limit (platform's createServer): past it, the gateway answers their 413 itself. */
const MAX_FORM_BODY_BYTES = MAX_REQUEST_BODY_BYTES;

/** Everything below /api/v1: match the contract table, admit, then stream to the owning service. */
export async function apiRoutes(app: FastifyInstance, deps: ApiRouteDeps): Promise<void> {
  // Bodies pass through unread (uploads included); the owning service parses them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_req, _payload, done) => done(null));

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    let method = req.method;
    let path = upstreamUrl(req.url);
    let form: Buffer | undefined;
    let formHeaders: Record<string, string> = {};
    // Zulip's method override; only paths that serve another method have the form read, and
    // not a file sent to an upload route (an avatar, an emoji): it streams through to the
    // owner's own size limit, whose message a client can show.
    if (isFormPost(req) && deps.router.servesOtherThan("POST", req.url) && !(isMultipart(req) && isUploadPost(deps.router, req.url))) {
      if (Number(req.headers["content-length"] ?? 0) > MAX_FORM_BODY_BYTES) {
        throw new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 });
      }
      const read = await readFormPost(req, path, MAX_FORM_BODY_BYTES);
      if (read.kind === "plain") form = read.body;
      else {
        ({ method, path, body: form } = read.override);
        formHeaders = form ? { "content-type": "application/x-www-form-urlencoded" } : {};
      }
    }
    const match = deps.router.match(method, req.url);
    // Thrown, not sent: the error handler answers a page's path with an HTML page.
    if (match.kind === "not_found") throw resourceNotFound("Not Found");
    // No route serves OPTIONS: Zulip answers it on any API path itself, before authentication,
    // with the methods the path serves (HEAD wherever GET).
    if (match.kind === "method_not_allowed" && req.method === "OPTIONS") {
      const allow = match.allowed.includes("GET") ? [...match.allowed, "HEAD"].sort() : match.allowed;
      return reply.status(204).header("Allow", allow.join(", ")).send();
    }
    if (match.kind === "method_not_allowed") {
      throw new ApiError(null, "Method Not Allowed", { status: 405, extra: { allowed_methods: match.allowed }, headers: { Allow: match.allowed.join(", ") } });
    }
    // One metrics series per contract route, not one for the whole wildcard.
    req.metricsRoute = fastifyPath(match.route);
    // Refused here, before streaming: a service that answers 413 mid-body closes the connection
    // and the gateway would only see a broken pipe (503). A file sent to an upload route has the
    // owner's own limit; anything else sent there is no file and has the services' body limit.
    const limited = !(match.route.upload && isMultipart(req));
    if (limited && Number(req.headers["content-length"] ?? 0) > MAX_FORM_BODY_BYTES) {
      throw new ApiError("REQUEST_TOO_LARGE", "Request body too large", { status: 413 });
    }
    const subdomain = subdomainOfHost(deps.hosts, req.headers.host);
    const admission = await deps.gate.admit(req, match.route, subdomain);
    const internal: Record<string, string> = admission.identity
      ? identityHeaders(admission.identity, deps.internalToken)
      : { [INTERNAL_HEADERS.token]: deps.internalToken };
    if (subdomain !== null) internal[INTERNAL_HEADERS.subdomain] = subdomain;
    // The services see the gateway as the peer; their per-IP limits count this address.
    internal[INTERNAL_HEADERS.clientIp] = clientIp(req, deps.trustProxyHops);
    return deps.proxy.forward(req, reply, {
      baseUrl: deps.upstreams[match.route.service as Exclude<ServiceName, "gateway">],
      method,
      path,
      headers: upstreamHeaders(req.headers, { ...internal, ...formHeaders, ...apiForm(req.url), [INTERNAL_HEADERS.requestId]: req.id }),
      body: admission.body ?? form,
      responseHeaders: admission.responseHeaders,
      onStatus: admission.onStatus,
      longPoll: match.route.longPoll === true,
      maxBodyBytes: limited ? MAX_FORM_BODY_BYTES : undefined,
    });
  };
  const { compress } = deps;
  app.route({ method: METHODS, url: "/api/v1/*", handler, compress });
  for (const prefix of ROOT_ALIASES) app.route({ method: METHODS, url: `${prefix}*`, handler, compress });
}
