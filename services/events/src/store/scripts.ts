import { createHash } from "node:crypto";
import type { Redis } from "@chat/platform";

/**
 * Lua scripts for the queue operations that must be atomic across events instances. Keys are
 * built inside the scripts from the deployment prefix (ARGV[1]), so one script call can touch any
 * number of queues (fan-out); this assumes a single Redis, not a cluster.
 *
 * Layout (P = prefix):
 *   P q:<id>          hash: the queue's descriptor, next_id, pruned, poll, last_connection, waiting_until,
 *                     fetched (Redis time, ms, of the last blocking fetch; see FETCH)
 *   P qe:<id>         sorted set: the queue's events, score = event id, member = the event's JSON
 *   P u:<realm>:<uid> set: the user's queue ids
 *   P r:<realm>       set: queues that also get the realm's public channel messages
 *   P expiry          sorted set: queue id -> the time (ms) it expires unless polled
 *   P seen:<envelope> a delivered domain event (redeliveries are skipped)
 *   channel P wake:<id>  "E<events>" new events, carried: their JSON texts, one per line;
 *                        "e" new events, not carried (published by instances from before
 *                        carried events); "r:<token>" a newer poll; "d" deleted; "x" dropped
 */

const PRELUDE = `
local P = ARGV[1]
local function qkey(q) return P .. 'q:' .. q end
local function ekey(q) return P .. 'qe:' .. q end
local function wake(q, msg) redis.call('PUBLISH', P .. 'wake:' .. q, msg) end

-- Keys carry a TTL a little past the queue's deadline, so nothing outlives an absent sweeper.
local function keep(key, ttl)
  local cur = redis.call('PTTL', key)
  if cur >= 0 and cur < ttl then redis.call('PEXPIRE', key, ttl) end
end

local function drop(q)
  local m = qkey(q)
  local f = redis.call('HMGET', m, 'user_id', 'realm_id')
  if f[1] then
    redis.call('SREM', P .. 'u:' .. f[2] .. ':' .. f[1], q)
    redis.call('SREM', P .. 'r:' .. f[2], q)
  end
  redis.call('DEL', m, ekey(q))
  redis.call('ZREM', P .. 'expiry', q)
end

-- An event's JSON without id as what follows the id in its queued text ('}' or ',...}').
local function after_id(json)
  local body = string.sub(json, 2)
  if body ~= '}' then body = ',' .. body end
  return body
end

-- Appends one event, given as after_id made it (a fan-out makes it once for all its queues:
-- Lua builds and interns every string, and for a long event that was a third of the
-- script's time per queue); returns its id and its JSON as queued.
local function push_after_id(q, body)
  local id = redis.call('HINCRBY', qkey(q), 'next_id', 1) - 1
  local text = '{"id":' .. id .. body
  redis.call('ZADD', ekey(q), id, text)
  return id, text
end

-- Appends one event (JSON without id); returns its id and its JSON as queued.
local function push(q, json)
  return push_after_id(q, after_id(json))
end

-- Events just pushed go to the queue's waiting poll in the wake-up itself (JSON texts never
-- hold a raw newline): the poll answers with them without reading the queue, so its wait ends
-- here, as a READ with events would end it. Only pushes after a poll's fetch reach it after
-- its own "r:" echo, so what a poll collects after its echo is exactly what its queue holds.
-- Without a waiting poll there is nobody to wake (the queue's next fetch returns the events),
-- and no wake-up is sent: a busy queue's client is mostly between two polls when its events
-- come, and each wake-up is the events' whole text again.
-- f: the queue's waiting_until, last_connection and lifespan, when the caller read them already.
local function deliver(q, texts, f)
  local m = qkey(q)
  f = f or redis.call('HMGET', m, 'waiting_until', 'last_connection', 'lifespan')
  if not f[1] then return end
  redis.call('HDEL', m, 'waiting_until')
  redis.call('ZADD', P .. 'expiry', tonumber(f[2]) + tonumber(f[3]) * 1000, q)
  wake(q, 'E' .. table.concat(texts, '\\n'))
end

-- After n pushes: drops the queue if it holds more than cap events (true when dropped), and
-- gives an event set that the pushes created the queue's expiry.
local function settle(q, n, cap)
  local e = ekey(q)
  local size = redis.call('ZCARD', e)
  if size > cap then
    wake(q, 'x')
    drop(q)
    return true
  end
  if size == n then redis.call('PEXPIRE', e, math.max(redis.call('PTTL', qkey(q)), 1000)) end
  return false
end

local function owned(q, uid, realm)
  local f = redis.call('HMGET', qkey(q), 'user_id', 'realm_id')
  return f[1] == uid and f[2] == realm
end

-- A poll ended: the queue's idle clock runs from its last wait again.
local function end_poll(q, token)
  local m = qkey(q)
  local f = redis.call('HMGET', m, 'poll', 'last_connection', 'lifespan')
  if f[1] == token then
    redis.call('HDEL', m, 'waiting_until')
    redis.call('ZADD', P .. 'expiry', tonumber(f[2]) + tonumber(f[3]) * 1000, q)
  end
end
`;

/** ARGV: P, qid, uid, realm, inRealmIndex, deadline, ttlMs, then field/value pairs of the hash. */
const CREATE = `
local q, uid, realm = ARGV[2], ARGV[3], ARGV[4]
local fields = {}
for i = 8, #ARGV do fields[#fields + 1] = ARGV[i] end
local m = qkey(q)
redis.call('HSET', m, unpack(fields))
local ttl = tonumber(ARGV[7])
redis.call('PEXPIRE', m, ttl)
local ukey = P .. 'u:' .. realm .. ':' .. uid
redis.call('SADD', ukey, q)
if redis.call('PTTL', ukey) < ttl then redis.call('PEXPIRE', ukey, ttl) end
if ARGV[5] == '1' then
  local rkey = P .. 'r:' .. realm
  redis.call('SADD', rkey, q)
  if redis.call('PTTL', rkey) < ttl then redis.call('PEXPIRE', rkey, ttl) end
end
redis.call('ZADD', P .. 'expiry', ARGV[6], q)
if redis.call('PTTL', P .. 'expiry') < ttl then redis.call('PEXPIRE', P .. 'expiry', ttl) end
return 1
`;

/**
 * A poll begins: acknowledge up to last_event_id (ARGV[5], '' = none), release any other poll,
 * return the remaining events; if there are none and the poll blocks, record that it waits.
 * An id older than the acknowledged ones gets {'PRUNED'} and changes nothing; one that was never
 * queued gets {'NOTIN'} after the queued events below it were dropped (Zulip's order).
 * A blocking poll that comes sooner than ARGV[11] ms (0 = never) after the queue's previous
 * blocking fetch changes nothing and gets {'PACE', ms to wait}: a queue that receives events
 * faster than its client polls is read at most once per that interval, and each answer carries
 * more events. Redis's own clock times it, the same for every events instance.
 * ARGV: P, qid, uid, realm, last, token, block, now, waitUntil, ttlMarginMs, paceMs.
 */
const FETCH = `
local q, uid, realm, last, token = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local m, e = qkey(q), ekey(q)
if not owned(q, uid, realm) then return {'BAD'} end
local ack = nil
if last ~= '' then
  local L = tonumber(last)
  -- Nothing acknowledged yet counts as -1 (Zulip's newest_pruned_id of a new queue).
  local pruned = tonumber(redis.call('HGET', m, 'pruned') or '-1')
  if L < pruned then return {'PRUNED'} end
  local top = redis.call('ZREVRANGEBYSCORE', e, L, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #top > 0 then
    local newest = tonumber(top[2])
    if newest ~= L then
      -- An id past the newest queued one (or between two): as Zulip does, the queued events
      -- up to it are dropped all the same, and then the poll is refused.
      redis.call('ZREMRANGEBYSCORE', e, '-inf', newest)
      redis.call('HSET', m, 'pruned', newest)
      return {'NOTIN'}
    end
    ack = L
  elseif pruned ~= L then
    return {'NOTIN'}
  end
end
local pace = tonumber(ARGV[11])
if ARGV[7] == '1' and pace > 0 then
  local t = redis.call('TIME')
  local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local prev = tonumber(redis.call('HGET', m, 'fetched'))
  if prev and now_ms < prev + pace then return {'PACE', prev + pace - now_ms} end
  redis.call('HSET', m, 'poll', token, 'fetched', now_ms)
else
  redis.call('HSET', m, 'poll', token)
end
if ack then
  redis.call('ZREMRANGEBYSCORE', e, '-inf', ack)
  redis.call('HSET', m, 'pruned', ack)
end
wake(q, 'r:' .. token)
local events = redis.call('ZRANGE', e, 0, -1)
if #events == 0 and ARGV[7] == '1' then
  local now, wait_until = tonumber(ARGV[8]), tonumber(ARGV[9])
  local lifespan = tonumber(redis.call('HGET', m, 'lifespan'))
  redis.call('HSET', m, 'last_connection', ARGV[8], 'waiting_until', ARGV[9])
  redis.call('ZADD', P .. 'expiry', math.max(now + lifespan * 1000, wait_until), q)
  local ttl = math.max(lifespan * 1000, wait_until - now) + tonumber(ARGV[10])
  redis.call('PEXPIRE', m, ttl)
  redis.call('PEXPIRE', e, ttl)
  keep(P .. 'u:' .. realm .. ':' .. uid, ttl)
  keep(P .. 'r:' .. realm, ttl)
  keep(P .. 'expiry', ttl)
end
return {'OK', events}
`;

/** A waiting poll was woken: its events now. ARGV: P, qid, uid, realm, token. */
const READ = `
local q, uid, realm, token = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if not owned(q, uid, realm) then return {'BAD'} end
local events = redis.call('ZRANGE', ekey(q), 0, -1)
if #events > 0 then end_poll(q, token) end
return {'OK', events}
`;

/**
 * READ for many polls at once (a fan-out wakes thousands together): one reply per poll, in
 * order, each as READ's. ARGV: P, n, then n groups of qid, uid, realm, token.
 */
const READ_MANY = `
local out = {}
for i = 0, tonumber(ARGV[2]) - 1 do
  local b = 3 + i * 4
  local q, uid, realm, token = ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3]
  -- owned() and end_poll() in one read of the hash.
  local m = qkey(q)
  local f = redis.call('HMGET', m, 'user_id', 'realm_id', 'poll', 'last_connection', 'lifespan')
  if f[1] ~= uid or f[2] ~= realm then
    out[#out + 1] = {'BAD'}
  else
    local events = redis.call('ZRANGE', ekey(q), 0, -1)
    if #events > 0 and f[3] == token then
      redis.call('HDEL', m, 'waiting_until')
      redis.call('ZADD', P .. 'expiry', tonumber(f[4]) + tonumber(f[5]) * 1000, q)
    end
    out[#out + 1] = {'OK', events}
  end
end
return out
`;

/** The heartbeat interval passed: push a heartbeat and return everything. ARGV: P, qid, uid, realm, token, cap. */
const HEARTBEAT = `
local q, uid, realm, token = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if not owned(q, uid, realm) then return {'BAD'} end
push(q, '{"type":"heartbeat"}')
if settle(q, 1, tonumber(ARGV[6])) then return {'BAD'} end
end_poll(q, token)
return {'OK', redis.call('ZRANGE', ekey(q), 0, -1)}
`;

/** The client went away mid-poll. ARGV: P, qid, token. */
const END_POLL = `
if redis.call('EXISTS', qkey(ARGV[2])) == 1 then end_poll(ARGV[2], ARGV[3]) end
return 1
`;

/** DELETE /events. ARGV: P, qid, uid, realm. */
const DELETE = `
local q = ARGV[2]
if not owned(q, ARGV[3], ARGV[4]) then return 0 end
wake(q, 'd')
drop(q)
return 1
`;

/** Register applied events up to ARGV[3] to its state: they leave the queue. ARGV: P, qid, id. */
const PRUNE_TO = `
local q, id = ARGV[2], tonumber(ARGV[3])
if redis.call('EXISTS', qkey(q)) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', ekey(q), '-inf', id)
redis.call('HSET', qkey(q), 'pruned', id)
return 1
`;

/**
 * One domain event to many queues, at most once per envelope id.
 * ARGV: P, envelopeId, dedupeTtlSeconds, cap, nVariants, then per variant: count and that many
 * event JSONs, then pairs (queue id, variant index, 1-based).
 * Returns the number of queues written, or -1 when the envelope was already delivered.
 */
const FANOUT = `
if not redis.call('SET', P .. 'seen:' .. ARGV[2], '1', 'NX', 'EX', ARGV[3]) then return -1 end
local cap = tonumber(ARGV[4])
local variants = {}
local i = 6
for v = 1, tonumber(ARGV[5]) do
  local n = tonumber(ARGV[i])
  local list = {}
  for k = 1, n do list[k] = after_id(ARGV[i + k]) end
  variants[v] = list
  i = i + n + 1
end
local written = 0
while i < #ARGV do
  local q, v = ARGV[i], tonumber(ARGV[i + 1])
  i = i + 2
  -- One read tells whether the queue exists (every queue has a user_id) and what its wake-up needs.
  local f = redis.call('HMGET', qkey(q), 'user_id', 'waiting_until', 'last_connection', 'lifespan')
  if f[1] then
    local texts = {}
    for k, body in ipairs(variants[v]) do
      local _, text = push_after_id(q, body)
      texts[k] = text
    end
    if not settle(q, #variants[v], cap) then deliver(q, texts, {f[2], f[3], f[4]}) end
    written = written + 1
  end
end
return written
`;

/** Push one event into every given queue (restart notices). ARGV: P, json, cap, qids... */
const BROADCAST = `
local n = 0
for i = 4, #ARGV do
  local q = ARGV[i]
  if redis.call('EXISTS', qkey(q)) == 1 then
    local _, text = push(q, ARGV[2])
    if not settle(q, 1, tonumber(ARGV[3])) then deliver(q, {text}) end
    n = n + 1
  end
end
return n
`;

/**
 * A user was deactivated: every queue of theirs goes, and its waiting poll gets BAD_EVENT_QUEUE_ID.
 * At most once per envelope (ARGV[2], '' = always), so a late redelivery cannot drop the queues
 * of a user reactivated since. ARGV: P, dedupeKey, dedupeTtlSeconds, realm, uid.
 * Returns the number of queues dropped, or -1 when this envelope was already handled.
 */
const DROP_USER = `
if ARGV[2] ~= '' and not redis.call('SET', P .. 'seen:' .. ARGV[2], '1', 'NX', 'EX', ARGV[3]) then return -1 end
local realm, uid = ARGV[4], ARGV[5]
local ukey = P .. 'u:' .. realm .. ':' .. uid
local n = 0
for _, q in ipairs(redis.call('SMEMBERS', ukey)) do
  if redis.call('EXISTS', qkey(q)) == 1 then n = n + 1 end
  wake(q, 'x')
  drop(q)
end
redis.call('DEL', ukey)
return n
`;

/**
 * The given queues that belong to the realm are dropped (organization deactivated); others are
 * left alone. ARGV: P, realm, qids... Returns the number dropped.
 */
const DROP_IN_REALM = `
local n = 0
for i = 3, #ARGV do
  local q = ARGV[i]
  if redis.call('HGET', qkey(q), 'realm_id') == ARGV[2] then
    wake(q, 'x')
    drop(q)
    n = n + 1
  end
end
return n
`;

/**
 * Removes queues whose deadline passed and that no poll waits on; a queue with a waiting poll is
 * put back at the end of that wait. Atomic per call, so any number of instances may sweep.
 * ARGV: P, now, limit. Returns the removed queue ids.
 */
const SWEEP = `
local now = tonumber(ARGV[2])
local due = redis.call('ZRANGEBYSCORE', P .. 'expiry', '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local removed = {}
for _, q in ipairs(due) do
  local wu = redis.call('HGET', qkey(q), 'waiting_until')
  if wu and tonumber(wu) > now then
    redis.call('ZADD', P .. 'expiry', wu, q)
  else
    wake(q, 'x')
    drop(q)
    removed[#removed + 1] = q
  end
end
return removed
`;

export class LuaScript {
  readonly sha: string;
  readonly source: string;
  constructor(body: string) {
    this.source = PRELUDE + body;
    this.sha = createHash("sha1").update(this.source).digest("hex");
  }

  /** Queues an EVALSHA on a pipeline (see `runMany` for NOSCRIPT). */
  addTo(pipeline: ReturnType<Redis["pipeline"]>, args: Array<string | number>): void {
    pipeline.evalsha(this.sha, 0, ...args);
  }

  /**
   * The script once per argument list, in order, in one round trip; the replies in the same
   * order. After a NOSCRIPT (a restarted or new Redis) the script is loaded and every call is
   * sent again, so only scripts that may run twice (dedupe keys) belong here.
   */
  async runMany(redis: Redis, argLists: Array<Array<string | number>>): Promise<unknown[]> {
    for (let attempt = 0; ; attempt++) {
      const pipe = redis.pipeline();
      for (const args of argLists) this.addTo(pipe, args);
      const replies = (await pipe.exec()) ?? [];
      const failed = replies.find(([err]) => err);
      if (!failed) return replies.map(([, reply]) => reply);
      if (attempt > 0 || !String(failed[0]!.message).includes("NOSCRIPT")) throw failed[0];
      await redis.script("LOAD", this.source);
    }
  }

  /** EVALSHA, loading the script on the first NOSCRIPT (a restarted or new Redis). */
  async run(redis: Redis, args: Array<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, 0, ...args);
    } catch (err) {
      if (!String((err as Error).message).includes("NOSCRIPT")) throw err;
      return redis.eval(this.source, 0, ...args);
    }
  }
}

export const scripts = {
  create: new LuaScript(CREATE),
  fetch: new LuaScript(FETCH),
  read: new LuaScript(READ),
  readMany: new LuaScript(READ_MANY),
  heartbeat: new LuaScript(HEARTBEAT),
  endPoll: new LuaScript(END_POLL),
  delete: new LuaScript(DELETE),
  pruneTo: new LuaScript(PRUNE_TO),
  fanOut: new LuaScript(FANOUT),
  broadcast: new LuaScript(BROADCAST),
  sweep: new LuaScript(SWEEP),
  dropUser: new LuaScript(DROP_USER),
  dropInRealm: new LuaScript(DROP_IN_REALM),
};
