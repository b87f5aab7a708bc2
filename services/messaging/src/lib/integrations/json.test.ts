import { describe, expect, it } from "vitest";
import { formatJson } from "./json";

describe("the JSON formatter", () => {
  it("posts the payload pretty-printed in a json code block, in the topic JSON", () => {
    expect(formatJson({ build: { id: 7, ok: false }, tags: ["a", "b"], note: "café" })).toEqual([
      {
        topic: "JSON",
        content: '```json\n{\n  "build": {\n    "id": 7,\n    "ok": false\n  },\n  "tags": [\n    "a",\n    "b"\n  ],\n  "note": "café"\n}\n```',
      },
    ]);
  });

  it("takes any JSON value, a backtick fence inside a string included", () => {
    expect(formatJson([])[0].content).toBe("```json\n[]\n```");
    expect(formatJson(null)[0].content).toBe("```json\nnull\n```");
    // A string's fence is never at the start of a line, so it cannot close the block.
    expect(formatJson({ s: "```\nx" })[0].content).toBe('```json\n{\n  "s": "```\\nx"\n}\n```');
  });
});
