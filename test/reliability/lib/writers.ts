import type { ApiClient } from "@chat/testkit";
import { LOAD_MESSAGE_PREFIX, type Writes, type WriteSpec } from "./writes";

/**
 * The writers of the mixed-writes fault test, one step function per kind of write: step `n`
 * says which write comes next, which object it changes to which value, and which events it
 * causes for which clients. Each writer owns its objects, so the order of the writes to one
 * object is the order they were sent.
 */

export type Role = "owner" | "admin" | "moderator" | "member" | "member2";
/** The clients whose queues are read (all subscribed to the load's channels). */
export const CLIENTS: Role[] = ["owner", "admin", "moderator", "member", "member2"];
export const EMOJI = ["smile", "heart", "tada", "rocket", "octopus", "cat", "dog", "fire"];
const HOME_VIEWS = ["all_messages", "recent_topics", "inbox"];
const SCHEDULE_AHEAD_SECONDS = 3;

/** What the test set up for the writers. */
export interface World {
  as: Record<Role, ApiClient>;
  ids: Record<Role, number>;
  /** Every client is subscribed; the messages below are in it. */
  loadChannel: number;
  /** Renamed and re-described. */
  propsChannel: number;
  /** member2 joins and leaves these (created with the owner alone). */
  subChannels: Array<{ id: number; name: string }>;
  /** Messages whose content is edited and which move one by one. */
  editPool: number[];
  /** Messages in one topic that moves as a whole (propagate_mode change_all). */
  movePool: number[];
  /** Messages reacted to (member2) and flagged (owner). */
  reactPool: number[];
  groupId: number;
  initialHomeView: string;
  writes: Writes;
}

export type Step = (n: number) => { actor: Role; spec: WriteSpec; call: (signal: AbortSignal) => Promise<any> };

export const scheduledContent = (n: number) => `${LOAD_MESSAGE_PREFIX}${n}`;

export function writeSteps(w: World) {
  const { as, ids, loadChannel, propsChannel, subChannels, editPool, movePool, reactPool, groupId, initialHomeView, writes } = w;
  const others = (who: Role) => CLIENTS.filter((c) => c !== who);

  const editStep: Step = (n) => {
    const m = editPool[n % editPool.length];
    if (n % 2 === 0) {
      const value = `edited #${n}`;
      return {
        actor: "member",
        spec: { kind: "edit content", object: `content:${m}`, value, events: [{ key: `content:${m}:${value}`, to: CLIENTS }] },
        call: (signal) => as.member.patch(`/messages/${m}`, { content: value }, { signal }),
      };
    }
    const value = `moved #${n}`;
    const params = { topic: value, propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false };
    return {
      actor: "member",
      spec: { kind: "move topic", object: `topic:${m}`, value, events: [{ key: `topic:${m}:${value}`, to: CLIENTS }] },
      call: (signal) => as.member.patch(`/messages/${m}`, params, { signal }),
    };
  };

  const moveTopicStep: Step = (n) => {
    const value = `topic #${n}`;
    const params = { topic: value, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false };
    return {
      actor: "member",
      spec: { kind: "move whole topic", object: "topic of moves", value, events: movePool.map((id) => ({ key: `topic:${id}:${value}`, to: CLIENTS })) },
      call: (signal) => as.member.patch(`/messages/${movePool[0]}`, params, { signal }),
    };
  };

  const reactionStep: Step = (n) => {
    const combo = Math.floor(n / 2);
    const m = reactPool[combo % reactPool.length];
    const emoji = EMOJI[Math.floor(combo / reactPool.length) % EMOJI.length];
    const op = n % 2 === 0 ? "add" : "remove";
    return {
      actor: "member2",
      spec: {
        kind: `reaction ${op}`,
        object: `reaction:${m}:${emoji}`,
        value: op === "add" ? "present" : "absent",
        events: [{ key: `reaction:${op}:${m}:${emoji}:${ids.member2}`, to: CLIENTS }],
      },
      call: (signal) => (op === "add" ? as.member2.post : as.member2.delete)(`/messages/${m}/reactions`, { emoji_name: emoji }, { signal }),
    };
  };

  const flagStep: Step = (n) => {
    const combo = Math.floor(n / 2);
    const m = reactPool[combo % reactPool.length];
    const flag = Math.floor(combo / reactPool.length) % 2 === 0 ? "starred" : "read";
    const op = n % 2 === 0 ? "add" : "remove";
    return {
      actor: "owner",
      spec: {
        kind: `flag ${flag} ${op}`,
        object: `flag:${flag}:${m}`,
        value: op === "add" ? "on" : "off",
        events: [{ key: `flag:${op}:${flag}:${m}`, to: ["owner"] }],
        dependsOnPrevious: true,
      },
      call: (signal) => as.owner.post("/messages/flags", { messages: [m], op, flag }, { signal }),
    };
  };

  const subscriptionStep: Step = (n) => {
    const s = subChannels[Math.floor(n / 2) % subChannels.length];
    const join = n % 2 === 0;
    const [op, peer] = join ? ["add", "peer_add"] : ["remove", "peer_remove"];
    return {
      actor: "member2",
      spec: {
        kind: join ? "subscribe" : "unsubscribe",
        object: `sub:${s.id}`,
        value: join ? "in" : "out",
        events: [
          { key: `sub:${op}:${s.id}`, to: ["member2"] },
          { key: `${peer}:${s.id}:${ids.member2}`, to: others("member2") },
        ],
        changed: join ? (b) => Object.values(b.subscribed as Record<string, string[]>).flat().length > 0 : (b) => b.removed.length > 0,
      },
      call: (signal) =>
        join
          ? as.member2.post("/users/me/subscriptions", { subscriptions: [{ name: s.name }] }, { signal })
          : as.member2.delete("/users/me/subscriptions", { subscriptions: [s.name] }, { signal }),
    };
  };

  const channelStep: Step = (n) => {
    const property = n % 2 === 0 ? "description" : "name";
    const value = property === "description" ? `described #${n}` : `mixed props #${n}`;
    return {
      actor: "owner",
      spec: { kind: `channel ${property}`, object: `${property}:${propsChannel}`, value, events: [{ key: `stream:${propsChannel}:${property}:${value}`, to: CLIENTS }] },
      call: (signal) => as.owner.patch(`/streams/${propsChannel}`, property === "name" ? { new_name: value } : { description: value }, { signal }),
    };
  };

  const accountStep: Step = (n) => {
    if (n % 3 === 2) {
      // Each value differs from the one before, so an acknowledged change always changes it.
      const views = HOME_VIEWS.filter((v) => v !== initialHomeView);
      const value = Math.floor(n / 3) % 2 === 0 ? views[0] : views[1];
      return {
        actor: "moderator",
        spec: {
          kind: "setting",
          object: "web_home_view",
          value,
          events: [{ key: `setting:web_home_view:${value}`, to: ["moderator"] }],
          dependsOnPrevious: true,
        },
        call: (signal) => as.moderator.patch("/settings", { web_home_view: value }, { signal }),
      };
    }
    if (n % 3 === 0) {
      const value = `Moderator ${n}`;
      return {
        actor: "moderator",
        spec: { kind: "full name", object: "full_name", value, events: [{ key: `full_name:${ids.moderator}:${value}`, to: CLIENTS }] },
        call: (signal) => as.moderator.patch("/settings", { full_name: value }, { signal }),
      };
    }
    const value = `status #${n}`;
    return {
      actor: "moderator",
      spec: { kind: "status", object: "status", value, events: [{ key: `status:${ids.moderator}:${value}`, to: CLIENTS }] },
      call: (signal) => as.moderator.post("/users/me/status", { status_text: value }, { signal }),
    };
  };

  const groupStep: Step = (n) => {
    const g = groupId;
    if (n % 3 === 0) {
      const value = `group #${n}`;
      return {
        actor: "admin",
        spec: { kind: "group description", object: `group:${g}:description`, value, events: [{ key: `group:${g}:description:${value}`, to: CLIENTS }] },
        call: (signal) => as.admin.patch(`/user_groups/${g}`, { description: value }, { signal }),
      };
    }
    const u = ids[(["owner", "member", "member2"] as const)[Math.floor(n / 3) % 3]];
    const add = n % 3 === 1;
    return {
      actor: "admin",
      spec: {
        kind: add ? "group add member" : "group remove member",
        object: `group:${g}:member:${u}`,
        value: add ? "in" : "out",
        events: [{ key: `group:${g}:${add ? "add" : "remove"}:${u}`, to: CLIENTS }],
        dependsOnPrevious: true,
      },
      call: (signal) => as.admin.post(`/user_groups/${g}/members`, add ? { add: [u] } : { delete: [u] }, { signal }),
    };
  };

  const scheduleStep: Step = (n) => {
    const content = scheduledContent(n);
    // Its value is whether it was delivered: once, if the scheduling was acknowledged.
    writes.setInitial(`scheduled:${n}`, "absent");
    return {
      actor: "moderator",
      spec: {
        kind: "schedule message",
        object: `scheduled:${n}`,
        value: "delivered",
        events: [
          { key: `scheduled:add:${content}`, to: ["moderator"] },
          { key: `message:${content}`, to: CLIENTS },
        ],
      },
      call: (signal) =>
        as.moderator.post(
          "/scheduled_messages",
          { type: "stream", to: loadChannel, topic: "scheduled", content, scheduled_delivery_timestamp: Math.ceil(Date.now() / 1000) + SCHEDULE_AHEAD_SECONDS },
          { signal },
        ),
    };
  };

  return { editStep, moveTopicStep, reactionStep, flagStep, subscriptionStep, channelStep, accountStep, groupStep, scheduleStep };
}

/** A load task of a test: runs until stopped. */
export interface Task {
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs one writer until `stop()`; a failed write gets a longer pause, as a client backs off. */
export function runWriter(writes: Writes, step: Step, pauseMs: number): Task {
  let stopped = false;
  const task = (async () => {
    for (let n = 0; !stopped; n++) {
      const { actor, spec, call } = step(n);
      const rec = await writes.run(actor, spec, call);
      await sleep(rec.outcome === "acked" ? pauseMs : Math.max(pauseMs, 150));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await task;
    },
  };
}
