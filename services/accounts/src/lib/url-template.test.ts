import { describe, expect, it } from "vitest";
import { parseUrlTemplate } from "./url-template";

describe("parseUrlTemplate", () => {
  it("accepts RFC 6570 templates and returns their variables", () => {
    expect(parseUrlTemplate("https://github.com/zulip/zulip/issues/{id}")).toEqual(["id"]);
    expect(parseUrlTemplate("https://x.test/{org}/{repo}/pull/{id}")).toEqual(["org", "repo", "id"]);
    expect(parseUrlTemplate("https://x.test/search{?q,lang}")).toEqual(["q", "lang"]);
    expect(parseUrlTemplate("https://x.test/{+path}/{name:3}{/list*}{#frag}")).toEqual(["path", "name", "list", "frag"]);
    expect(parseUrlTemplate("https://x.test/a%20b/{x.y}")).toEqual(["x.y"]);
    expect(parseUrlTemplate("https://x.test/plain")).toEqual([]);
  });

  it("refuses malformed templates", () => {
    for (const bad of [
      "https://x.test/{id",
      "https://x.test/id}",
      "https://x.test/{}",
      "https://x.test/{=id}",
      "https://x.test/{id:0}",
      "https://x.test/{id:10000}",
      "https://x.test/{i d}",
      "https://x.test/{{id}}",
      "https://x.test/<{id}>",
      "https://x.test/a b/{id}",
      "https://x.test/%zz/{id}",
      "https://x.test/{id,}",
    ]) {
      expect(parseUrlTemplate(bad), bad).toBeNull();
    }
  });
});
