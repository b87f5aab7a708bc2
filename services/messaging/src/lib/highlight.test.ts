import { describe, expect, it } from "vitest";
import { HLJS_GRAMMARS, lookupCodeLanguage } from "./code-languages";
import { highlightCode } from "./highlight";
import { renderMarkdown } from "./markdown";

const html = (content: string) => renderMarkdown(content).html;
const block = (lang: string | null, code: string) =>
  `<div class="codehilite"${lang === null ? "" : ` data-code-language="${lang}"`}><pre><span></span><code>${code}</code></pre></div>`;

/** Pygments' short CSS classes (its STANDARD_TYPES), the only ones Zulip's clients know. */
const PYGMENTS_CLASSES = new Set(
  (
    "w esc err x k kc kd kn kp kr kt n na nb bp nc no nd ni ne nf fm py nl nn nx nt nv vc vg vi vm l ld " +
    "s sa sb sc dl sd s2 se sh si sx sr s1 ss m mb mf mh mi il mo o ow p pm c ch cm cp cpf c1 cs " +
    "g gd ge ges gr gh gi go gp gs gu gt"
  ).split(" "),
);

describe("code block languages", () => {
  it("name the language as Pygments does, whatever the alias's case", () => {
    const names = ["py", "python3", "JS", "ts", "zsh", "sh", "c++", "rs", "yml", "md", "text", "cs", "golang", "r"].map((a) => lookupCodeLanguage(a).name);
    expect(names).toEqual(["Python", "Python", "JavaScript", "TypeScript", "Bash", "Bash", "C++", "Rust", "YAML", "Markdown", "Text only", "C#", "Go", "S"]);
  });

  it("keep a language Pygments does not know, lower-cased as Zulip's fence reads it, unhighlighted", () => {
    expect(html("```MyPlayground\nx = <1>\n```")).toBe(block("myplayground", "x = &lt;1&gt;\n"));
    expect(html('```a"b\nx\n```')).toBe(block("a&quot;b", "x\n"));
  });

  it("leave blocks without a language, indented code and plain text unhighlighted", () => {
    expect(html("```\ndef f(): pass\n```")).toBe(block(null, "def f(): pass\n"));
    expect(html("    def f(): pass")).toBe(block(null, "def f(): pass\n"));
    expect(html("```text\ndef f(): pass\n```")).toBe(block("Text only", "def f(): pass\n"));
  });
});

describe("highlighting", () => {
  it("wraps tokens in Pygments' classes", () => {
    expect(html("```py\n@cache\ndef f(x):\n    return 1.5 + 0x1F + 2 and self  # done\n```")).toBe(
      block(
        "Python",
        '<span class="nd">@cache</span>\n<span class="k">def</span> <span class="nf">f</span>(x):\n' +
          '    <span class="k">return</span> <span class="mf">1.5</span> + <span class="mh">0x1F</span> + <span class="mi">2</span> ' +
          '<span class="ow">and</span> <span class="bp">self</span>  <span class="c1"># done</span>\n',
      ),
    );
  });

  it("flattens nested scopes into one span each, escaping everything", () => {
    expect(html("```js\nconst s = `a ${b} c`; // <b> & \"q\"\n```")).toBe(
      block(
        "JavaScript",
        '<span class="kd">const</span> s = <span class="sb">`a </span><span class="si">${b}</span><span class="sb"> c`</span>; ' +
          '<span class="c1">// &lt;b&gt; &amp; &quot;q&quot;</span>\n',
      ),
    );
  });

  it("closes spans at line ends, and classes preprocessor lines, files and block comments", () => {
    expect(html("```c\n#include <stdio.h>\n/* one\n   two */\nint main(void) { return 0; }\n```")).toBe(
      block(
        "C",
        '<span class="cp">#include </span><span class="cpf">&lt;stdio.h&gt;</span>\n<span class="cm">/* one</span>\n<span class="cm">   two */</span>\n' +
          '<span class="kt">int</span> <span class="nf">main</span>(<span class="kt">void</span>) { <span class="k">return</span> <span class="mi">0</span>; }\n',
      ),
    );
  });

  it("classes diffs, markup and data as Pygments' lexers for them do", () => {
    expect(html("```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same\n```")).toBe(
      block(
        "Diff",
        '<span class="gd">--- a/x</span>\n<span class="gi">+++ b/x</span>\n<span class="gu">@@ -1 +1 @@</span>\n<span class="gd">-old</span>\n<span class="gi">+new</span>\n same\n',
      ),
    );
    expect(html('```html\n<a href="x">&amp;</a>\n```')).toBe(
      block(
        "HTML",
        '<span class="p">&lt;</span><span class="nt">a</span> <span class="na">href</span><span class="p">=</span><span class="s2">&quot;x&quot;</span>' +
          '<span class="p">&gt;</span><span class="ni">&amp;amp;</span><span class="p">&lt;/</span><span class="nt">a</span><span class="p">&gt;</span>\n',
      ),
    );
    expect(html('```json\n{"a": [1, true, null]}\n```')).toBe(
      block(
        "JSON",
        '<span class="p">{</span><span class="nt">&quot;a&quot;</span><span class="p">:</span> <span class="p">[</span><span class="mi">1</span>' +
          '<span class="p">,</span> <span class="kc">true</span><span class="p">,</span> <span class="kc">null</span><span class="p">]}</span>\n',
      ),
    );
  });

  it("emits only Pygments' classes and well-formed spans, in every grammar", () => {
    const sample = [
      '#!/usr/bin/env x\n#include <a.h>\n@decorator\nclass A extends B { def f(self, x: int = 0x1F) -> "s": return [1.5e3, true, null, \'c\', `t ${x}`] }',
      '// line\n/* block */ -- sql\n# hash\n<div class="x">&amp;</div>\n$var = @{ a: 1 } # done\nSELECT * FROM t WHERE a = \'b\';',
      "key: value\n- item\n[section]\nname = \"v\"\n+ added\n- removed\n@@ -1 +1 @@\n> quote\n**bold** _em_ `code`\nfn main() { let x = r#\"raw\"#; }\nconstructor toString __proto__ hasOwnProperty",
    ].join("\n");
    for (const grammar of HLJS_GRAMMARS) {
      const out = highlightCode(sample, grammar, {});
      for (const m of out.matchAll(/<span class="([^"]*)">/g)) expect(PYGMENTS_CLASSES.has(m[1]), `${grammar}: ${m[1]}`).toBe(true);
      // Nothing but flat spans around escaped text: removing them leaves the escaped source.
      expect(out.replace(/<span class="[a-z0-9]+">([^<]*)<\/span>/g, "$1"), grammar).toBe(highlightCode(sample, null, {}));
    }
  });
});

describe("highlighting's cost is bounded", () => {
  it("shows code highlight.js is too slow on unhighlighted, and highlights the next message again", () => {
    // Nix's grammar rescans on every newline: seconds for this.
    const slow = `\`\`\`nix\nx\n${"\n".repeat(99_000)}y\n\`\`\`\n\`\`\`py\ndef\n\`\`\``;
    html("```py\nwarm = 1\n```");
    const start = performance.now();
    const out = html(slow);
    expect(performance.now() - start).toBeLessThan(3000);
    expect(out).toBe(`${block("Nix", `x\n${"\n".repeat(99_000)}y\n`)}\n${block("Python", "def\n")}`);
    expect(html("```py\ndef\n```")).toBe(block("Python", '<span class="k">def</span>\n'));
  });

  it("does not highlight a block over 100 KB", () => {
    const code = "def f(): pass\n".repeat(7200);
    expect(html(`\`\`\`py\n${code}\`\`\``)).toBe(block("Python", code));
  });
});
