import { describe, expect, it } from "vitest";
import { FLAG_BITS } from "./flags";
import {
  checkEditPayload,
  flagsAfterContentEdit,
  newThreadNotice,
  oldThreadNotice,
  onlyResolvedPrefixChanged,
  passesMovePolicy,
  pastTimeLimit,
  resolveChange,
} from "./message-edit";

const member = { role: 400, dateJoined: "2020-01-01T00:00:00Z" };
const guest = { role: 600, dateJoined: "2020-01-01T00:00:00Z" };
const now = new Date("2024-06-01T00:00:00Z");

describe("message edit rules", () => {
  it("edit_topic_policy 5 lets guests edit topics; the common policies never do", () => {
    expect(passesMovePolicy(5, guest, 0, now)).toBe(true);
    expect(passesMovePolicy(1, guest, 0, now)).toBe(false);
    expect(passesMovePolicy(1, member, 0, now)).toBe(true);
    expect(passesMovePolicy(2, member, 0, now)).toBe(false);
    expect(passesMovePolicy(6, { role: 100, dateJoined: member.dateJoined }, 0, now)).toBe(false);
  });

  it("time limits allow 20 s past the limit", () => {
    const sent = new Date(now.getTime() - 620_000);
    expect(pastTimeLimit(sent, now, 600)).toBe(false);
    expect(pastTimeLimit(new Date(sent.getTime() - 1), now, 600)).toBe(true);
  });

  it("checks the payload in Zulip's order and returns the stored topic", () => {
    expect(() => checkEditPayload(true, { propagateMode: "change_one" })).toThrow("Nothing to change");
    expect(() => checkEditPayload(false, { topic: "x", propagateMode: "change_one" })).toThrow("Direct messages cannot have topics.");
    expect(() => checkEditPayload(true, { content: "x", propagateMode: "change_later" })).toThrow("Invalid propagate_mode without topic edit");
    expect(() => checkEditPayload(true, { topic: " ", propagateMode: "change_one" })).toThrow("Topic can't be empty!");
    expect(() => checkEditPayload(true, { content: "x", streamId: 3, propagateMode: "change_one" })).toThrow("Cannot change message content while changing channel");
    expect(() => checkEditPayload(true, { content: "x", propagateMode: "change_one", isWidget: true })).toThrow("Widgets cannot be edited.");
    expect(checkEditPayload(true, { topic: "y", propagateMode: "change_one", isWidget: true })).toBe("y");
    expect(checkEditPayload(true, { topic: "a".repeat(70), propagateMode: "change_all" })).toBe(`${"a".repeat(57)}...`);
  });

  it("resolving is toggling the ✔ prefix", () => {
    expect(resolveChange("bug", "✔ bug")).toBe("resolved");
    expect(resolveChange("✔ bug", "bug")).toBe("unresolved");
    expect(resolveChange("✔ bug", "✔ bugs")).toBeNull();
    expect(resolveChange("bug", "bugs")).toBeNull();
    // Only toggling the prefix is no rename; a new name beside it is.
    expect(onlyResolvedPrefixChanged("bug", "✔ bug")).toBe(true);
    expect(onlyResolvedPrefixChanged("✔ ✔ bug", "bug")).toBe(true);
    expect(onlyResolvedPrefixChanged("bug", "✔ crash")).toBe(false);
    expect(onlyResolvedPrefixChanged("✔ bug", "bugs")).toBe(false);
  });

  it("notices count the moved messages", () => {
    // Nothing the user can read left behind: the topic moved, whatever the count.
    expect(oldThreadNotice(1, true, "#**a>b**", "@_**X|1**")).toBe("This topic was moved to #**a>b** by @_**X|1**.");
    expect(oldThreadNotice(3, true, "#**a>b**", "@_**X|1**")).toBe("This topic was moved to #**a>b** by @_**X|1**.");
    expect(oldThreadNotice(1, false, "#**a>b**", "@_**X|1**")).toBe("A message was moved from this topic to #**a>b** by @_**X|1**.");
    expect(oldThreadNotice(3, false, "#**a>b**", "@_**X|1**")).toBe("3 messages were moved from this topic to #**a>b** by @_**X|1**.");
    expect(newThreadNotice(3, true, "#**a>b**", "@_**X|1**", "L")).toBe("This topic was moved here from #**a>b** by @_**X|1**.");
    expect(newThreadNotice(1, false, "#**a>b**", "@_**X|1**", "L")).toBe("[A message](L) was moved here from #**a>b** by @_**X|1**.");
  });

  it("flags after a content edit follow the new mentions; read and starred stay", () => {
    const base = { mentioned: new Set<number>(), alerted: new Set<number>(), streamWildcard: false, topicWildcard: false, topicParticipants: new Set<number>() };
    const held = FLAG_BITS.read | FLAG_BITS.starred | FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned;
    expect(flagsAfterContentEdit(1, held, base)).toBe(FLAG_BITS.read | FLAG_BITS.starred);
    expect(flagsAfterContentEdit(1, 0, { ...base, mentioned: new Set([1]), alerted: new Set([1]) })).toBe(FLAG_BITS.mentioned | FLAG_BITS.has_alert_word);
    expect(flagsAfterContentEdit(1, 0, { ...base, topicWildcard: true, topicParticipants: new Set([2]) })).toBe(0);
    expect(flagsAfterContentEdit(2, 0, { ...base, topicWildcard: true, topicParticipants: new Set([2]) })).toBe(FLAG_BITS.topic_wildcard_mentioned);
    expect(flagsAfterContentEdit(1, 0, { ...base, topicWildcard: true, topicParticipants: "all" })).toBe(FLAG_BITS.topic_wildcard_mentioned);
  });
});
