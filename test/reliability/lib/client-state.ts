/**
 * The part of a client's state the mixed-writes test compares: its subscriptions (with their
 * names, descriptions and subscribers), its unread and starred messages, and the organization's
 * user groups. A client registers, keeps this model up to date from its events the way a Zulip
 * client does, and at the end it must equal the same model read from a fresh register.
 *
 * Written here rather than borrowed from the events service's own applier, so that a mistake in
 * that applier cannot hide the same mistake in the events.
 */

/** The register's `fetch_event_types` that give every key `fromRegister` reads. */
export const MODEL_FETCH_TYPES = ["message", "update_message_flags", "subscription", "starred_messages", "realm_user_groups"];

export interface ClientModel {
  subscriptions: Map<number, { name: string; description: string; subscribers: Set<number> }>;
  unread: Set<number>;
  starred: Set<number>;
  groups: Map<number, { name: string; description: string; members: Set<number> }>;
}

export function fromRegister(state: any): ClientModel {
  const unread = new Set<number>();
  for (const part of ["streams", "huddles", "pms"] as const) {
    for (const c of state.unread_msgs[part] ?? []) for (const id of c.unread_message_ids) unread.add(id);
  }
  return {
    subscriptions: new Map(
      state.subscriptions.map((s: any) => [s.stream_id, { name: s.name, description: s.description, subscribers: new Set<number>(s.subscribers) }]),
    ),
    unread,
    starred: new Set<number>(state.starred_messages),
    groups: new Map(state.realm_user_groups.map((g: any) => [g.id, { name: g.name, description: g.description, members: new Set<number>(g.members) }])),
  };
}

/** Applies one event to the model; false when the model cannot follow it (the comparison would be meaningless). */
export function applyToModel(m: ClientModel, e: any): boolean {
  switch (e.type) {
    case "message":
      if (!e.flags.includes("read")) m.unread.add(e.message.id);
      if (e.flags.includes("starred")) m.starred.add(e.message.id);
      return true;
    case "update_message_flags": {
      if (e.all) return false;
      const set = e.flag === "read" ? m.unread : e.flag === "starred" ? m.starred : null;
      if (!set) return true;
      // Read is kept as its opposite: a read message leaves the unread set.
      const adds = (e.op === "add") !== (e.flag === "read");
      for (const id of e.messages) adds ? set.add(id) : set.delete(id);
      return true;
    }
    case "subscription":
      if (e.op === "add") {
        for (const s of e.subscriptions) m.subscriptions.set(s.stream_id, { name: s.name, description: s.description, subscribers: new Set(s.subscribers) });
      } else if (e.op === "remove") {
        for (const s of e.subscriptions) m.subscriptions.delete(s.stream_id);
      } else if (e.op === "peer_add" || e.op === "peer_remove") {
        for (const id of e.stream_ids) {
          const sub = m.subscriptions.get(id);
          for (const u of e.user_ids) e.op === "peer_add" ? sub?.subscribers.add(u) : sub?.subscribers.delete(u);
        }
      }
      return true;
    case "stream": {
      if (e.op !== "update") return true;
      const sub = m.subscriptions.get(e.stream_id);
      if (sub && e.property === "name") sub.name = e.value;
      if (sub && e.property === "description") sub.description = e.value;
      return true;
    }
    case "user_group": {
      const g = m.groups.get(e.group_id);
      if (e.op === "add") m.groups.set(e.group.id, { name: e.group.name, description: e.group.description, members: new Set(e.group.members) });
      else if (e.op === "remove") m.groups.delete(e.group_id);
      else if (!g) return e.op === "add_subgroups" || e.op === "remove_subgroups";
      else if (e.op === "update") Object.assign(g, pick(e.data, ["name", "description"]));
      else if (e.op === "add_members") for (const u of e.user_ids) g.members.add(u);
      else if (e.op === "remove_members") for (const u of e.user_ids) g.members.delete(u);
      return true;
    }
    default:
      return true;
  }
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}

/** The model as plain sorted data, for `toEqual` and readable diffs. */
export function snapshot(m: ClientModel) {
  const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);
  return {
    subscriptions: [...m.subscriptions].sort((a, b) => a[0] - b[0]).map(([id, s]) => ({ id, ...s, subscribers: sorted(s.subscribers) })),
    unread: sorted(m.unread),
    starred: sorted(m.starred),
    groups: [...m.groups].sort((a, b) => a[0] - b[0]).map(([id, g]) => ({ id, ...g, members: sorted(g.members) })),
  };
}
