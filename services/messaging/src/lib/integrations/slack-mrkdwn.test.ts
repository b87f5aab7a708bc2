import { describe, expect, it } from "vitest";
import { mrkdwnToMarkdown } from "./slack-mrkdwn";

describe("Slack mrkdwn as Markdown", () => {
  it("converts emphasis markers", () => {
    expect(mrkdwnToMarkdown("*bold* and _italic_ and ~strike~")).toBe("**bold** and *italic* and ~~strike~~");
    expect(mrkdwnToMarkdown("_*both*_")).toBe("***both***");
    expect(mrkdwnToMarkdown("(*bold*), _italic_.")).toBe("(**bold**), *italic*.");
  });

  it("leaves markers that are not emphasis alone", () => {
    expect(mrkdwnToMarkdown("snake_case_name and 2*3*4")).toBe("snake_case_name and 2*3*4");
    expect(mrkdwnToMarkdown("* not bold *")).toBe("* not bold *");
    expect(mrkdwnToMarkdown("**already markdown**")).toBe("**already markdown**");
    expect(mrkdwnToMarkdown(":white_check_mark: done")).toBe(":white_check_mark: done");
    expect(mrkdwnToMarkdown("*line one\nline two*")).toBe("*line one\nline two*");
  });

  it("turns links into Markdown links, and leaves their URLs untouched by emphasis", () => {
    expect(mrkdwnToMarkdown("see <https://ci.example/b_1_2|build #12>")).toBe("see [build #12](https://ci.example/b_1_2)");
    expect(mrkdwnToMarkdown("<https://ci.example/a_b_c>")).toBe("https://ci.example/a_b_c");
    expect(mrkdwnToMarkdown("*<https://x.example|here>*")).toBe("**[here](https://x.example)**");
    expect(mrkdwnToMarkdown("<https://x.example/?a=1&amp;b=2|a [b]>")).toBe("[a \\[b\\]](https://x.example/?a=1&b=2)");
    expect(mrkdwnToMarkdown("<mailto:ops@x.example|Ops>, <mailto:ops@x.example>")).toBe("[Ops](mailto:ops@x.example), ops@x.example");
  });

  it("shows mentions of users, channels and everyone as readable text, not as Zulip mentions", () => {
    expect(mrkdwnToMarkdown("<@U024BE7LH> and <@U024BE7LH|bob>")).toBe("@U024BE7LH and @bob");
    expect(mrkdwnToMarkdown("in <#C024BE7LR|general> or <#C024BE7LR>")).toBe("in #general or #C024BE7LR");
    expect(mrkdwnToMarkdown("<!channel> <!here> <!everyone>")).toBe("@channel @here @everyone");
    expect(mrkdwnToMarkdown("<!subteam^SAZ94GDB8|@oncall> at <!date^1392734382^{date}|Feb 18, 2014>")).toBe("@oncall at Feb 18, 2014");
  });

  it("decodes the entities Slack escapes", () => {
    expect(mrkdwnToMarkdown("a &lt; b &amp;&amp; c &gt; d, &amp;lt;")).toBe("a < b && c > d, &lt;");
  });

  it("keeps code as it is, and puts a ``` block on lines of its own", () => {
    expect(mrkdwnToMarkdown("run `make *all*` now")).toBe("run `make *all*` now");
    expect(mrkdwnToMarkdown("log: ```a_b_c &lt;x&gt;\n*y*``` end")).toBe("log: \n```\na_b_c <x>\n*y*\n```\n end");
  });
});
