import { describe, expect, it } from "vitest";
import { applyEvent, type ApplyContext } from "./index";

const ctx: ApplyContext = { userId: 5, fetchTypes: null, includeSubscribers: false, clientGravatar: true };
const DAY = 86_400_000;

/** A member's register: the organization's policies and the own permissions they allow. */
function memberState(joinedDaysAgo: number) {
  return {
    realm_create_public_stream_policy: 1,
    realm_create_private_stream_policy: 1,
    realm_create_web_public_stream_policy: 7,
    realm_invite_to_stream_policy: 1,
    realm_invite_to_realm_policy: 1,
    realm_waiting_period_threshold: 0,
    realm_enable_spectator_access: false,
    is_owner: false,
    is_admin: false,
    is_moderator: false,
    is_guest: false,
    realm_users: [{ user_id: 5, date_joined: new Date(Date.now() - joinedDaysAgo * DAY).toISOString() }],
    can_create_streams: true,
    can_create_public_streams: true,
    can_create_private_streams: true,
    can_create_web_public_streams: false,
    can_subscribe_other_users: true,
    can_invite_others_to_realm: true,
  };
}
const update = (property: string, value: unknown) => ({ id: 1, type: "realm", op: "update", property, value });

describe("realm events recompute the own permissions register derives from policies", () => {
  it("a policy for administrators takes a member's permission away", () => {
    const state = memberState(10);
    expect(applyEvent(state, update("create_public_stream_policy", 2), ctx)).toBe(true);
    expect([state.can_create_public_streams, state.can_create_private_streams, state.can_create_streams]).toEqual([false, true, true]);
    expect(applyEvent(state, update("invite_to_realm_policy", 6), ctx)).toBe(true);
    expect(state.can_invite_others_to_realm).toBe(false);
  });

  it("a waiting period makes a new member no full member for full-member policies", () => {
    const state = memberState(2);
    applyEvent(state, update("invite_to_stream_policy", 3), ctx);
    expect(state.can_subscribe_other_users).toBe(true);
    applyEvent(state, update("waiting_period_threshold", 3), ctx);
    expect(state.can_subscribe_other_users).toBe(false);
  });

  it("web-public channels need spectator access and the own role", () => {
    const state = { ...memberState(10), is_owner: true, is_admin: true };
    applyEvent(state, update("enable_spectator_access", true), ctx);
    expect(state.can_create_web_public_streams).toBe(true);
    applyEvent(state, { id: 2, type: "realm", op: "update_dict", property: "default", data: { create_web_public_stream_policy: 6 } } as any, ctx);
    expect(state.can_create_web_public_streams).toBe(false);
  });

  it("without the own-user part of register, only the realm keys change", () => {
    const state: Record<string, unknown> = { realm_create_public_stream_policy: 1 };
    expect(applyEvent(state, update("create_public_stream_policy", 2), ctx)).toBe(true);
    expect(state).toEqual({ realm_create_public_stream_policy: 2 });
  });
});
