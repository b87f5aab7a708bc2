import katex from "katex";
import { describe, expect, it } from "vitest";
import { compileLinkifiers } from "./linkifiers";
import { emptyDirectory, renderMarkdown } from "./markdown";

// What Zulip's server gets from KaTeX's command-line tool (its default options).
const inline = (tex: string) => katex.renderToString(tex, { displayMode: false, throwOnError: true });
const display = (tex: string) => katex.renderToString(tex, { displayMode: true, throwOnError: true });
const html = (content: string) => renderMarkdown(content).html;

describe("inline $$TeX$$", () => {
  it("renders KaTeX's markup in the paragraph", () => {
    const k = inline("x^2 + \\frac{a}{b}");
    expect(k.startsWith('<span class="katex"><span class="katex-mathml"><math')).toBe(true);
    expect(k).toContain('<span class="katex-html" aria-hidden="true">');
    expect(html("so $$x^2 + \\frac{a}{b}$$ holds")).toBe(`<p>so ${k} holds</p>`);
    expect(html("($$x$$), **$$y$$**")).toBe(`<p>(${inline("x")}), <strong>${inline("y")}</strong></p>`);
  });

  it("allows \\$ inside the body", () => {
    expect(html("$$a\\$b$$")).toBe(`<p>${inline("a\\$b")}</p>`);
  });

  it("leaves a single $, $$$, code spans, line breaks and word-adjacent $$ as text", () => {
    expect(html("costs $5 or $6")).toBe("<p>costs $5 or $6</p>");
    expect(html("$x$")).toBe("<p>$x$</p>");
    expect(html("$$$x$$$")).toBe("<p>$$$x$$$</p>");
    expect(html("$$x$$$")).toBe("<p>$$x$$$</p>");
    expect(html("$$_x$$")).toBe("<p>$$_x$$</p>");
    expect(html("$$$$")).toBe("<p>$$$$</p>");
    expect(html("`$$x$$`")).toBe("<p><code>$$x$$</code></p>");
    expect(html("$$a\nb$$")).toBe("<p>$$a<br>\nb$$</p>");
    expect(html("a$$x$$ $$x$$b")).toBe("<p>a$$x$$ $$x$$b</p>");
    expect(html("\\$$x$$")).toBe("<p>$$x$$</p>");
  });

  it("is not read as emphasis, emoji, links or linkifier matches", () => {
    const d = emptyDirectory();
    d.linkifiers = compileLinkifiers([{ pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example/issue/{id}" }]);
    expect(renderMarkdown("$$a*b*c$$ $$:smile:$$ $$\\#42$$ $$\\text{https://example.com}$$", d).html).toBe(
      `<p>${inline("a*b*c")} ${inline(":smile:")} ${inline("\\#42")} ${inline("\\text{https://example.com}")}</p>`,
    );
  });

  it("shows the escaped source when KaTeX refuses it", () => {
    expect(html("$$\\frac{$$")).toBe('<p><span class="tex-error">$$\\frac{$$</span></p>');
    expect(html("a $$\\unknowncommand$$ b")).toBe('<p>a <span class="tex-error">$$\\unknowncommand$$</span> b</p>');
    expect(html("$$\\frac{<b>&}$$")).toBe('<p><span class="tex-error">$$\\frac{&lt;b&gt;&amp;}$$</span></p>');
  });

  it("keeps KaTeX's trust off: no links, no raw HTML", () => {
    const out = html("$$\\href{javascript:alert(1)}{x}$$ $$\\url{javascript:alert(1)}$$ $$\\htmlId{a}{x}$$");
    expect(out).not.toMatch(/<a |href=|id="a"/);
    expect(out).toContain('<span class="katex">');
  });

  it("does not carry a \\gdef from one formula to the next", () => {
    expect(html("$$\\gdef\\foo{x}\\foo$$ $$\\foo$$")).toBe(`<p>${inline("\\gdef\\foo{x}\\foo")} <span class="tex-error">$$\\foo$$</span></p>`);
  });
});

describe("```math blocks", () => {
  it("renders each paragraph as one display formula", () => {
    expect(html("```math\nx^2\n\n\\int_0^1 f\n```")).toBe(`<p>${display("x^2")}</p>\n<p>${display("\\int_0^1 f")}</p>`);
    expect(display("x").startsWith('<span class="katex-display"><span class="katex">')).toBe(true);
    expect(html("~~~math\na\nb\n~~~\nafter")).toBe(`<p>${display("a\nb")}</p>\n<p>after</p>`);
  });

  it("shows a paragraph KaTeX refuses as escaped source, and renders the others", () => {
    expect(html("```math\n\\frac{<\n\ny\n```")).toBe(`<p><span class="tex-error">\\frac{&lt;</span></p>\n<p>${display("y")}</p>`);
  });

  it("is TeX, not Markdown, inside", () => {
    expect(html("```math\na*b*c :smile:\n```")).toBe(`<p>${display("a*b*c :smile:")}</p>`);
  });
});

describe("math cannot make the server spin", () => {
  const timed = (content: string) => {
    const start = performance.now();
    const out = html(content);
    return { out, ms: performance.now() - start };
  };

  it("stops a macro that expands itself forever", () => {
    const { out, ms } = timed("$$\\def\\a{\\a}\\a$$");
    expect(out).toBe('<p><span class="tex-error">$$\\def\\a{\\a}\\a$$</span></p>');
    expect(ms).toBeLessThan(500);
  });

  it("stops a formula whose few expansions make millions of tokens", () => {
    // Within maxExpand (1000 expansions), but 4,000,000 letters to typeset: minutes without the lookup budget.
    const { out, ms } = timed(`$$\\def\\a{${"x".repeat(4000)}}${"\\a".repeat(1000)}$$`);
    expect(out.startsWith('<p><span class="tex-error">$$\\def\\a{xxx')).toBe(true);
    expect(ms).toBeLessThan(1000);
  });

  it("bounds a message of many small amplifying formulas", () => {
    const one = "$$\\def\\c{xxxxxxxxxx}\\def\\b{\\c\\c\\c\\c}\\def\\a{\\b\\b\\b\\b}\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a$$";
    const { out, ms } = timed(Array(120).fill(one).join(" "));
    expect(out).toContain('<span class="katex">');
    expect(out).toContain('<span class="tex-error">');
    expect(ms).toBeLessThan(3000);
  });

  it("bounds arrays of thousands of columns (each `&`, `|` or `:` is hundreds of bytes of markup)", () => {
    for (const tex of [`\\begin{array}{c}${"&".repeat(9950)}\\end{array}`, `\\begin{array}{${"|".repeat(9000)}}a\\end{array}`]) {
      const { out, ms } = timed(`\`\`\`math\n${tex}\n\`\`\``);
      expect(out).toMatch(/^<p><span class="tex-error">\\begin\{array\}/);
      expect(ms).toBeLessThan(500);
    }
    // Ordinary matrices and absolute values still render.
    const matrix = `\\begin{pmatrix}${Array(10).fill(Array(10).fill("a").join("&")).join("\\\\")}\\end{pmatrix} = |x| : y`;
    expect(html(`$$${matrix}$$`)).toBe(`<p>${inline(matrix)}</p>`);
  });

  it("shows formulas nested deeper than the stack, huge ones, and giant sizes without failing", () => {
    expect(html(`$$${"{".repeat(5000)}x${"}".repeat(5000)}$$`)).toMatch(/^<p><span class="tex-error">\$\$\{\{\{/);
    const { out, ms } = timed(`$$${"x+".repeat(4999)}x$$`);
    expect(out).toBe(`<p>${inline(`${"x+".repeat(4999)}x`)}</p>`);
    expect(ms).toBeLessThan(2000);
    expect(timed(`$$${"x".repeat(60_000)}$$`).out).toMatch(/^<p><span class="tex-error">/);
    // maxSize caps the rule at 100em.
    expect(html("$$\\rule{1000em}{1000em}$$")).toContain("border-right-width:100em");
  });
});

describe("fences named tex or latex", () => {
  it("are TeX code blocks, not math (only ```math is)", () => {
    const out = renderMarkdown("```latex\n\\frac{a}{b}\n```").html;
    expect(out.startsWith('<div class="codehilite" data-code-language="TeX"><pre><span></span><code>')).toBe(true);
    expect(out).not.toContain("katex");
  });
});
