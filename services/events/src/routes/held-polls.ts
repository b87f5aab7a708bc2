import type { IncomingHttpHeaders } from "node:http";
import type { IncomingHttpHeaders as Http2Headers, ServerHttp2Stream } from "node:http2";
import { parse as parseQuery } from "fast-querystring";
import type { FastifyInstance } from "fastify";
import { fastifyPath, GetEvents } from "@chat/contracts";
import {
  INTERNAL_HEADERS,
  isShuttingDown,
  parseParams,
  RawResponder,
  readIdentity,
  tokenMatches,
  type Identity,
  type RawExchange,
  type RawRoute,
  type StreamRoute,
} from "@chat/platform";
import { pollQueue, pollResultJson, type QueuePoll } from "../actions/queues";
import type { EventsRuntime } from "../runtime";

const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});
const NO_RAW_HEADERS = Object.freeze([]) as unknown as string[];
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** A blocking poll read whole from its request. */
interface HeldPoll {
  who: Identity;
  queueId: string;
  lastEventId: number | undefined;
}

/**
 * Blocking `GET /events` polls, taken ahead of fastify, over HTTP/1.1 (`heldPollRoute`) and as
 * HTTP/2 streams (`heldPollStreamRoute`, how the gateway sends them). One events instance holds
 * thousands at once, and fastify's request and reply objects, its per-request logger and hooks
 * were most of each held poll's memory. Only requests read whole here are taken (see
 * `readHeldPoll`); everything else, errors included, goes to fastify's GetEvents route (over
 * HTTP/2: a 421, and the gateway repeats the request over HTTP/1.1), which runs the same
 * `pollQueue`.
 */
export function heldPollRoute(app: FastifyInstance, rt: EventsRuntime): RawRoute {
  const responder = new RawResponder(app, GetEvents);
  const read = heldPollReader(app);
  return (req, res) => {
    const h = req.headers;
    if (h["transfer-encoding"] !== undefined) return false;
    const poll = read(req.method, req.url, h);
    if (!poll) return false;
    const exchange = responder.begin(req, res);
    // Everything the poll needs from its request is read. Node would keep its headers (the raw
    // list and the parsed object, about a tenth of a held poll's memory) and URL until the
    // answer; drop them.
    req.headers = NO_HEADERS;
    req.rawHeaders = NO_RAW_HEADERS;
    req.url = "";
    const started = startPoll(rt, responder, exchange, poll);
    // The client (or the gateway) hanging up ends the wait without a heartbeat.
    if (started) {
      res.on("close", () => {
        if (!res.writableEnded) started.leave();
      });
    }
    return true;
  };
}

/** The same polls as HTTP/2 streams: the gateway's, many to a connection. */
export function heldPollStreamRoute(app: FastifyInstance, rt: EventsRuntime): StreamRoute {
  const responder = new RawResponder(app, GetEvents);
  const read = heldPollReader(app);
  return (stream, headers) => {
    const poll = read(headers[":method"], headers[":path"], headers as Http2Headers & IncomingHttpHeaders);
    if (!poll) return false;
    const started = startPoll(rt, responder, responder.beginStream(stream, headers), poll);
    // The gateway cancels the stream when its client hangs up.
    if (started) {
      stream.on("close", () => {
        if (!stream.headersSent) started.leave();
      });
    }
    return true;
  };
}

/**
 * Reads a request this route takes whole, or null: the internal token and identity present,
 * valid parameters, a printable queue id, blocking, no body, no parameter ignored, and the
 * service not shutting down.
 */
function heldPollReader(app: FastifyInstance): (method: string | undefined, url: string | undefined, h: IncomingHttpHeaders) => HeldPoll | null {
  const path = fastifyPath(GetEvents);
  const token = app.serverOptions.internalToken;
  return (method, url = "", h) => {
    const q = url.indexOf("?");
    if (method !== "GET" || q !== path.length || !url.startsWith(path)) return null;
    if (h["content-length"] !== undefined && h["content-length"] !== "0") return null;
    if (isShuttingDown(app) || !tokenMatches(h[INTERNAL_HEADERS.token], token)) return null;
    const who = readIdentity(h);
    if (!who) return null;
    let parsed;
    try {
      parsed = parseParams(GetEvents.params, { query: parseQuery(url.slice(q + 1)), body: {}, path: {} });
    } catch {
      return null;
    }
    const params = parsed.values;
    if (params.queue_id === undefined || params.dont_block || parsed.ignored.length > 0) return null;
    // Queue ids are printable ASCII; anything else gets fastify's answer (an unknown queue).
    if (!PRINTABLE_ASCII.test(params.queue_id)) return null;
    // Copied: V8 may keep a parsed parameter as a slice of the whole URL.
    const queueId = Buffer.from(params.queue_id, "latin1").toString("latin1");
    return { who, queueId, lastEventId: params.last_event_id };
  };
}

/** Starts the poll; null when it is answered already (its start threw). */
function startPoll(rt: EventsRuntime, responder: RawResponder, exchange: RawExchange, p: HeldPoll): QueuePoll | null {
  try {
    return pollQueue(rt, { userId: p.who.userId, realmId: p.who.realmId }, p.queueId, p.lastEventId, true, (err, result) => {
      if (err) responder.fail(exchange, err);
      else responder.successJson(exchange, pollResultJson(result!));
    });
  } catch (err) {
    // Taken already (and its headers dropped): answer here; fastify could not read it now.
    responder.fail(exchange, err);
    return null;
  }
}
