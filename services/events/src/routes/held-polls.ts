import type { IncomingHttpHeaders } from "node:http";
import { parse as parseQuery } from "fast-querystring";
import type { FastifyInstance } from "fastify";
import { fastifyPath, GetEvents } from "@chat/contracts";
import { INTERNAL_HEADERS, isShuttingDown, parseParams, RawResponder, readIdentity, tokenMatches, type RawRoute } from "@chat/platform";
import { pollQueue, pollResultJson } from "../actions/queues";
import type { EventsRuntime } from "../runtime";

const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});
const NO_RAW_HEADERS = Object.freeze([]) as unknown as string[];
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * Blocking `GET /events` polls, taken ahead of fastify. One events instance holds thousands of
 * them at once, and fastify's request and reply objects, its per-request logger and hooks were
 * most of each held poll's memory. Only requests this route understands whole are taken (the
 * internal token and identity present, parameters valid, a queue id, blocking, no body, none
 * ignored, not shutting down); everything else, errors included, goes to fastify's GetEvents
 * route, which runs the same `pollQueue`.
 */
export function heldPollRoute(app: FastifyInstance, rt: EventsRuntime): RawRoute {
  const path = fastifyPath(GetEvents);
  const responder = new RawResponder(app, GetEvents);
  const token = app.serverOptions.internalToken;
  return (req, res) => {
    const url = req.url ?? "";
    const q = url.indexOf("?");
    if (req.method !== "GET" || q !== path.length || !url.startsWith(path)) return false;
    const h = req.headers;
    if ((h["content-length"] !== undefined && h["content-length"] !== "0") || h["transfer-encoding"] !== undefined) return false;
    if (isShuttingDown(app) || !tokenMatches(h[INTERNAL_HEADERS.token], token)) return false;
    const who = readIdentity(h);
    if (!who) return false;
    let parsed;
    try {
      parsed = parseParams(GetEvents.params, { query: parseQuery(url.slice(q + 1)), body: {}, path: {} });
    } catch {
      return false;
    }
    const params = parsed.values;
    if (params.queue_id === undefined || params.dont_block || parsed.ignored.length > 0) return false;
    // Queue ids are printable ASCII; anything else gets fastify's answer (an unknown queue).
    if (!PRINTABLE_ASCII.test(params.queue_id)) return false;

    const exchange = responder.begin(req, res);
    // Everything the poll needs from its headers is read. Node would keep them (the raw list and
    // the parsed object, about a tenth of a held poll's memory) until the answer; drop them.
    req.headers = NO_HEADERS;
    req.rawHeaders = NO_RAW_HEADERS;
    // The URL too; the queue id read from it is copied (V8 may keep it as a slice of the URL).
    req.url = "";
    const queueId = Buffer.from(params.queue_id, "latin1").toString("latin1");
    let poll: ReturnType<typeof pollQueue>;
    try {
      poll = pollQueue(rt, { userId: who.userId, realmId: who.realmId }, queueId, params.last_event_id, true, (err, result) => {
        if (err) responder.fail(exchange, err);
        else responder.successJson(exchange, pollResultJson(result!));
      });
    } catch (err) {
      // Taken already (and its headers dropped): answer here; fastify could not read it now.
      responder.fail(exchange, err);
      return true;
    }
    // The client (or the gateway) hanging up ends the wait without a heartbeat.
    res.on("close", () => {
      if (!res.writableEnded) poll.leave();
    });
    return true;
  };
}
