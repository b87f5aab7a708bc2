import { describe, expect, it } from "vitest";
import { applyEvent, type ApplyContext } from "./index";

const ctx: ApplyContext = { userId: 5, fetchTypes: null, includeSubscribers: false, clientGravatar: true };
const snippet = (id: number) => ({ id, title: `t${id}`, content: `c${id}`, date_created: 1700000000 + id });
const playground = (id: number) => ({ id, name: `p${id}`, pygments_language: "Python", url_template: "https://p.test/{code}" });

describe("saved_snippets events", () => {
  it("add appends (once, oldest first); remove drops by id", () => {
    const state = { saved_snippets: [snippet(1), snippet(3)] };
    expect(applyEvent(state, { id: 1, type: "saved_snippets", op: "add", saved_snippet: snippet(2) }, ctx)).toBe(true);
    expect(applyEvent(state, { id: 2, type: "saved_snippets", op: "add", saved_snippet: snippet(2) }, ctx)).toBe(true);
    expect(state.saved_snippets).toEqual([snippet(1), snippet(2), snippet(3)]);
    expect(applyEvent(state, { id: 3, type: "saved_snippets", op: "remove", saved_snippet_id: 1 }, ctx)).toBe(true);
    expect(applyEvent(state, { id: 4, type: "saved_snippets", op: "remove", saved_snippet_id: 1 }, ctx)).toBe(true);
    expect(state.saved_snippets).toEqual([snippet(2), snippet(3)]);
  });

  it("cannot be applied to a state that did not fetch them; an unknown op is refused", () => {
    expect(applyEvent({}, { id: 1, type: "saved_snippets", op: "add", saved_snippet: snippet(1) }, { ...ctx, fetchTypes: ["drafts"] })).toBe(false);
    expect(applyEvent({ saved_snippets: [] }, { id: 1, type: "saved_snippets", op: "update", saved_snippet: snippet(1) }, ctx)).toBe(false);
  });
});

describe("realm_playgrounds events", () => {
  it("replace the whole list", () => {
    const state = { realm_playgrounds: [playground(1)] };
    expect(applyEvent(state, { id: 1, type: "realm_playgrounds", realm_playgrounds: [playground(1), playground(2)] }, ctx)).toBe(true);
    expect(state.realm_playgrounds).toEqual([playground(1), playground(2)]);
    expect(applyEvent(state, { id: 2, type: "realm_playgrounds", realm_playgrounds: [] }, { ...ctx, fetchTypes: ["realm"] })).toBe(false);
  });
});
