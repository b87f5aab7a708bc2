import { describe, expect, it } from "vitest";
import { highlightHtmlDifferences } from "./html-diff";

describe("highlightHtmlDifferences (lxml's htmldiff, as Zulip renders it)", () => {
  it("Zulip's documented example: a replaced paragraph", () => {
    expect(highlightHtmlDifferences("<p>Hello!</p>", "<p>Howdy!</p>")).toBe(
      '<div><p><span class="highlight_text_inserted">Howdy!</span></p> <p><span class="highlight_text_deleted">Hello!</span></p></div>',
    );
  });

  it("marks an inserted and a deleted word inside an unchanged paragraph", () => {
    expect(highlightHtmlDifferences("<p>a b c d e f g h</p>", "<p>a b c d x e f g h</p>")).toBe(
      '<div><p>a b c d <span class="highlight_text_inserted">x</span> e f g h</p></div>',
    );
    expect(highlightHtmlDifferences("<p>a b c d x e f g h</p>", "<p>a b c d e f g h</p>")).toBe(
      '<div><p>a b c d <span class="highlight_text_deleted">x</span> e f g h</p></div>',
    );
  });

  it("in a short text, a one-word match amid changes does not count (lxml's InsensitiveSequenceMatcher)", () => {
    expect(highlightHtmlDifferences("<p>one two three</p>", "<p>one two four three</p>")).toBe(
      '<div><p>one two <span class="highlight_text_inserted">four three</span> <span class="highlight_text_deleted">three</span> </p></div>',
    );
  });

  it("keeps unchanged markup and escapes text", () => {
    expect(highlightHtmlDifferences("<p>a &amp; <strong>b</strong></p>", "<p>a &amp; <strong>b</strong> c</p>")).toBe(
      '<div><p>a &amp; <strong>b</strong> <span class="highlight_text_inserted">c</span> </p></div>',
    );
  });
});
