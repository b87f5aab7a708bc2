import { describe, expect, it } from "vitest";
import { applyEvent, type ApplyContext } from "./index";

const ctx: ApplyContext = { userId: 5, fetchTypes: null, includeSubscribers: false, clientGravatar: true };
const domain = (name: string, allow_subdomains = false) => ({ domain: name, allow_subdomains });

describe("realm_domains events", () => {
  it("add appends once (a register may see it twice); change sets allow_subdomains; remove drops by domain", () => {
    const state = { realm_domains: [domain("a.example.com")] };
    const added = { id: 1, type: "realm_domains", op: "add", realm_domain: domain("b.example.com", true) };
    expect(applyEvent(state, added, ctx)).toBe(true);
    expect(applyEvent(state, { ...added, id: 2 }, ctx)).toBe(true);
    expect(state.realm_domains).toEqual([domain("a.example.com"), domain("b.example.com", true)]);
    expect(applyEvent(state, { id: 3, type: "realm_domains", op: "change", realm_domain: domain("a.example.com", true) }, ctx)).toBe(true);
    // A change of a domain no longer there adds nothing.
    expect(applyEvent(state, { id: 4, type: "realm_domains", op: "change", realm_domain: domain("gone.example.com", true) }, ctx)).toBe(true);
    expect(state.realm_domains).toEqual([domain("a.example.com", true), domain("b.example.com", true)]);
    expect(applyEvent(state, { id: 5, type: "realm_domains", op: "remove", domain: "b.example.com" }, ctx)).toBe(true);
    expect(applyEvent(state, { id: 6, type: "realm_domains", op: "remove", domain: "b.example.com" }, ctx)).toBe(true);
    expect(state.realm_domains).toEqual([domain("a.example.com", true)]);
  });

  it("cannot be applied to a state that did not fetch them; an unknown op is refused", () => {
    expect(applyEvent({}, { id: 1, type: "realm_domains", op: "add", realm_domain: domain("a.example.com") }, { ...ctx, fetchTypes: ["realm"] })).toBe(false);
    expect(applyEvent({ realm_domains: [] }, { id: 1, type: "realm_domains", op: "update", realm_domain: domain("a.example.com") }, ctx)).toBe(false);
  });
});
