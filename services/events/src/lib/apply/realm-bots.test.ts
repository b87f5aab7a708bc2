import { describe, expect, it } from "vitest";
import { applyEvent, type ApplyContext } from "./index";

const ctx: ApplyContext = { userId: 5, fetchTypes: null, includeSubscribers: false, clientGravatar: true };
const bot = (user_id: number, extra: Record<string, unknown> = {}) => ({
  email: `b${user_id}-bot@x.invalid`,
  user_id,
  full_name: `Bot ${user_id}`,
  bot_type: 1,
  is_active: true,
  default_sending_stream: null,
  default_events_register_stream: null,
  default_all_public_streams: false,
  owner_id: 5,
  avatar_url: "https://secure.gravatar.com/avatar/x?d=identicon&version=1",
  services: [],
  ...extra,
});

describe("realm_bot events", () => {
  it("add keeps one copy (a register may see it twice), by id as register lists them", () => {
    const state = { realm_bots: [bot(30)] };
    const added = { id: 1, type: "realm_bot", op: "add", bot: bot(20) };
    expect(applyEvent(state, added, ctx)).toBe(true);
    expect(applyEvent(state, { ...added, id: 2 }, ctx)).toBe(true);
    expect(state.realm_bots).toEqual([bot(20), bot(30)]);
  });

  it("update sets the fields it carries, of a bot in the list only; delete drops it", () => {
    const state = { realm_bots: [bot(20), bot(30)] };
    const service = { base_url: "https://h.example.com", interface: 2, token: "t" };
    for (const [id, change] of [{ full_name: "Renamed" }, { owner_id: 7 }, { is_active: false }, { services: [service] }].entries()) {
      expect(applyEvent(state, { id, type: "realm_bot", op: "update", bot: { user_id: 20, ...change } }, ctx)).toBe(true);
    }
    expect(applyEvent(state, { id: 9, type: "realm_bot", op: "update", bot: { user_id: 99, full_name: "Elsewhere" } }, ctx)).toBe(true);
    expect(state.realm_bots).toEqual([bot(20, { full_name: "Renamed", owner_id: 7, is_active: false, services: [service] }), bot(30)]);
    expect(applyEvent(state, { id: 10, type: "realm_bot", op: "delete", bot: { user_id: 30 } }, ctx)).toBe(true);
    expect(applyEvent(state, { id: 11, type: "realm_bot", op: "delete", bot: { user_id: 30 } }, ctx)).toBe(true);
    expect(state.realm_bots.map((b) => b.user_id)).toEqual([20]);
  });

  it("the deprecated remove leaves the bot listed, inactive (Zulip's apply_event)", () => {
    const state = { realm_bots: [bot(20)] };
    expect(applyEvent(state, { id: 1, type: "realm_bot", op: "remove", bot: { user_id: 20, full_name: "Bot 20" } }, ctx)).toBe(true);
    expect(state.realm_bots).toEqual([bot(20, { is_active: false })]);
  });

  it("cannot be applied to a state that did not fetch them; an unknown op is refused", () => {
    expect(applyEvent({}, { id: 1, type: "realm_bot", op: "add", bot: bot(20) }, { ...ctx, fetchTypes: ["realm_user"] })).toBe(false);
    expect(applyEvent({ realm_bots: [] }, { id: 1, type: "realm_bot", op: "rename", bot: { user_id: 20 } }, ctx)).toBe(false);
  });
});
