import { describe, expect, it } from "vitest";
import { ApiError } from "@chat/platform";
import { matchesNarrow, parseNarrow } from "./narrow";

const stream = { type: "stream", display_recipient: "Denmark", subject: "\u2714 Castle", sender_email: "Hamlet@example.com" };
const dm = { type: "private", display_recipient: [], subject: "", sender_email: "iago@example.com" };

describe("parseNarrow", () => {
  it("accepts pairs and objects, and the stream alias", () => {
    expect(parseNarrow([["stream", "a"], { operator: "topic", operand: "b", negated: true }])).toEqual([
      { operator: "channel", operand: "a", negated: false },
      { operator: "topic", operand: "b", negated: true },
    ]);
  });

  it("refuses operators and operands a queue cannot evaluate", () => {
    for (const [term, msg] of [
      [["search", "x"], "Operator search not supported."],
      [["dm", "1"], "Operator dm not supported."],
      [["is", "followed"], "Operand followed not supported."],
    ] as const) {
      try {
        parseNarrow([term]);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).message).toBe(msg);
        expect((err as ApiError).code).toBe("BAD_REQUEST");
      }
    }
  });
});

describe("matchesNarrow", () => {
  const m = (narrow: unknown[], msg: object, flags: string[] = []) => matchesNarrow(parseNarrow(narrow), msg, flags);

  it("compares channel, topic and sender without case", () => {
    expect(m([["channel", "denmark"]], stream)).toBe(true);
    expect(m([["channel", "denmark"]], dm)).toBe(false);
    expect(m([["topic", "\u2714 castle"]], stream)).toBe(true);
    expect(m([["sender", "hamlet@EXAMPLE.com"]], stream)).toBe(true);
    expect(m([["sender", "hamlet@example.com"]], dm)).toBe(false);
  });

  it("evaluates is: from the message type and the receiving user's flags", () => {
    expect(m([["is", "dm"]], dm)).toBe(true);
    expect(m([["is", "private"]], stream)).toBe(false);
    expect(m([["is", "starred"]], stream, ["starred"])).toBe(true);
    expect(m([["is", "unread"]], stream, ["read"])).toBe(false);
    expect(m([["is", "mentioned"]], stream, ["stream_wildcard_mentioned"])).toBe(true);
    expect(m([["is", "alerted"]], stream, ["has_alert_word"])).toBe(true);
    expect(m([["is", "resolved"]], stream)).toBe(true);
    expect(m([["is", "resolved"]], { ...stream, subject: "Castle" })).toBe(false);
  });

  it("needs every term, and honours negation; an empty narrow takes everything", () => {
    expect(m([["channel", "Denmark"], ["topic", "other"]], stream)).toBe(false);
    expect(m([{ operator: "channel", operand: "Denmark", negated: true }], dm)).toBe(true);
    expect(m([], dm)).toBe(true);
  });
});
