import { describe, expect, it } from "vitest";
import { missingChannelNotice } from "./notices";

describe("the notice of an integration URL's missing channel", () => {
  it("names the bot (silently), the integration and the channel, and says how to fix the URL", () => {
    const text = missingChannelNotice({ bot: { id: 12, fullName: "CI Hooks" } }, "GitHub", "alerts", 1);
    expect(text).toContain("A GitHub notification for your bot @_**CI Hooks|12** was dropped");
    expect(text).toContain("names the channel `alerts` in `stream`");
    expect(text).toContain("Create that channel (and subscribe the bot if it is private), or change the URL's `stream` parameter");
    expect(text).toContain("at most once an hour");
  });

  it("names a channel given by ID as such, and speaks to a person of their own key", () => {
    const text = missingChannelNotice({ self: true }, "Grafana", "42", 2);
    expect(text).toContain("A Grafana notification sent with your API key was dropped");
    expect(text).toContain("the channel with ID `42`");
    expect(text).not.toContain("subscribe the bot");
    expect(text).toContain("at most once every 2 hours");
  });

  it("quotes any name safely, and cuts one longer than any channel's", () => {
    expect(missingChannelNotice({ self: true }, "JSON", "a`b", 1)).toContain("the channel ``a`b``");
    expect(missingChannelNotice({ self: true }, "JSON", "x".repeat(500), 1)).toContain(`\`${"x".repeat(100)}…\``);
  });
});
