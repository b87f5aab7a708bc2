import { describe, expect, it } from "vitest";
import { decodeSlackPayload, formatSlackIncoming } from "./slack-incoming";
import { errorOf } from "./errors.test-support";

const contentOf = (payload: unknown) => formatSlackIncoming(payload)[0]?.content;

describe("Slack-compatible payloads", () => {
  it("post `text` in Markdown, with the icon emoji, in the payload's channel as topic", () => {
    expect(formatSlackIncoming({ text: "Deploy *done* <https://ci.example/1|#1>", channel: "#deploys", icon_emoji: ":rocket:" })).toEqual([
      { topic: "deploys", content: ":rocket: Deploy **done** [#1](https://ci.example/1)" },
    ]);
    expect(formatSlackIncoming({ text: "hi" })).toEqual([{ topic: "(no topic)", content: "hi" }]);
    expect(contentOf({ text: "*as is*", mrkdwn: false })).toBe("*as is*");
  });

  it("render the common blocks, which replace `text` (then only the notification's fallback)", () => {
    const payload = {
      text: "fallback only",
      blocks: [
        { type: "header", text: { type: "plain_text", text: "Release 1.2" } },
        { type: "section", text: { type: "mrkdwn", text: "*New:* faster _search_" }, fields: [{ type: "mrkdwn", text: "*Owner:* ana" }, { type: "plain_text", text: "Env: prod" }] },
        { type: "divider" },
        { type: "context", elements: [{ type: "image", image_url: "https://x.example/i.png", alt_text: "logo" }, { type: "mrkdwn", text: "by ~bob~" }] },
        { type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: "Approve" } }] },
        { type: "image", image_url: "https://x.example/chart.png", alt_text: "chart" },
        { type: "some_future_block" },
      ],
    };
    expect(contentOf(payload)).toBe(
      "## Release 1.2\n\n**New:** faster *search*\n\n**Owner:** ana\nEnv: prod\n\n---\n\n[logo](https://x.example/i.png) by ~~bob~~\n\n[chart](https://x.example/chart.png)",
    );
  });

  it("render attachments after the text: pretext, title and link, text, fields, footer; the fallback when nothing else", () => {
    const payload = {
      text: "Build finished",
      attachments: [
        {
          color: "danger",
          pretext: "Heads up",
          title: "Build #12 failed",
          title_link: "https://ci.example/12",
          text: "Step _test_ broke",
          fields: [{ title: "Branch", value: "`main`", short: true }, { title: "Author", value: null }, { value: "no title" }],
          footer: "CI",
          fallback: "ignored here",
        },
        { fallback: "Only a *fallback*" },
        { color: "good" },
      ],
    };
    expect(contentOf(payload)).toBe(
      "Build finished\n\nHeads up\n\n**[Build #12 failed](https://ci.example/12)**\n\nStep *test* broke\n\n**Branch**: `main`\n**Author**\nno title\n\nCI\n\nOnly a **fallback**",
    );
  });

  it("post nothing for a payload with nothing to show", () => {
    expect(formatSlackIncoming({})).toEqual([]);
    expect(formatSlackIncoming({ text: "  ", attachments: [{ color: "good" }] })).toEqual([]);
  });

  it("refuse what is not a Slack payload with ANOMALOUS_WEBHOOK_PAYLOAD", () => {
    const anomalous = (msg: string) => ({ status: 400, code: "ANOMALOUS_WEBHOOK_PAYLOAD", msg: `Unable to parse request: Did SlackIncoming generate this event? ${msg}` });
    expect(errorOf(() => formatSlackIncoming([1, 2]))).toEqual(anomalous("Expected a JSON object."));
    expect(errorOf(() => formatSlackIncoming({ text: 5 }))).toEqual(anomalous("'text' is not a string."));
    expect(errorOf(() => formatSlackIncoming({ blocks: {} }))).toEqual(anomalous("'blocks' is not a list."));
    expect(errorOf(() => formatSlackIncoming({ blocks: [{ type: "section", text: "plain" }] }))).toEqual(anomalous("'text' is not a text object."));
    expect(errorOf(() => formatSlackIncoming({ attachments: ["x"] }))).toEqual(anomalous("An attachment is not an object."));
  });
});

describe("how a Slack payload arrives", () => {
  it("as a JSON body, or as a form's `payload` field", () => {
    expect(decodeSlackPayload(Buffer.from('{"text":"a"}'), "application/json; charset=utf-8", undefined)).toEqual({ text: "a" });
    expect(decodeSlackPayload(undefined, "application/x-www-form-urlencoded", '{"text":"b"}')).toEqual({ text: "b" });
  });

  it("is Malformed JSON when either is not JSON, and a missing `payload` field is said so", () => {
    expect(errorOf(() => decodeSlackPayload(Buffer.from("text=a"), "application/json", undefined))).toMatchObject({ code: "INVALID_JSON", msg: "Malformed JSON" });
    expect(errorOf(() => decodeSlackPayload(undefined, "application/x-www-form-urlencoded", "{"))).toMatchObject({ code: "INVALID_JSON" });
    expect(errorOf(() => decodeSlackPayload(undefined, "application/x-www-form-urlencoded", undefined))).toEqual({ status: 400, code: "REQUEST_VARIABLE_MISSING", msg: "Missing 'payload' argument" });
  });
});
