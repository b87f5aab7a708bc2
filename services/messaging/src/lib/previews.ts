import type MarkdownIt from "markdown-it";
import type StateCore from "markdown-it/lib/rules_core/state_core.mjs";
import type Token from "markdown-it/lib/token.mjs";

/**
 * Inline previews of uploaded images, as Zulip renders them: after the paragraph (or heading)
 * holding a link to an image in this server's uploads comes
 * `<div class="message_inline_image"><a href="URL" title="link text"><img src="URL"></a></div>`,
 * one per such link, in order. The link itself stays.
 *
 * Differences from Zulip, on purpose: there are no thumbnails (Zulip 9 points `src` at a
 * generated WebP thumbnail; clients accept the original, as Zulip servers before 9 sent it), and
 * links to images elsewhere on the web get no preview (Zulip proxies those through its image
 * proxy, camo, which we do not run; loading them directly would show every reader's address to
 * the image's host).
 */

/** Extensions Zulip treats as images when deciding on a preview. */
const IMAGE_PATH = /\.(bmp|gif|jpe|jpeg|jpg|png|webp)$/i;
const UPLOAD_PATH = /^\/user_uploads\/\d+\//;

/** At most this many previews per message (a message of 500 image links gets 20). */
export const MAX_IMAGE_PREVIEWS = 20;

/** Environment key that turns previews off for one render (a quote's body: Zulip does not preview quoted images). */
export const NO_PREVIEWS = "noImagePreviews";

/** Whether a link's path (query and fragment aside) ends in an image extension. */
export function looksLikeImage(href: string): boolean {
  return IMAGE_PATH.test(href.split(/[?#]/, 1)[0]);
}

/** Whether a link's href is an image in this server's uploads. */
export function isUploadedImage(href: string): boolean {
  return UPLOAD_PATH.test(href) && looksLikeImage(href);
}

interface Found {
  href: string;
  title: string;
}

/** The uploaded-image links of one inline token, with their text. */
function uploadedImages(inline: Token): Found[] {
  const found: Found[] = [];
  const children = inline.children ?? [];
  for (let i = 0; i < children.length; i++) {
    const tok = children[i];
    if (tok.type !== "link_open") continue;
    const href = tok.attrGet("href") ?? "";
    if (!isUploadedImage(href)) continue;
    let title = "";
    for (let j = i + 1; j < children.length && children[j].type !== "link_close"; j++) title += children[j].content;
    found.push({ href, title });
  }
  return found;
}

function previewHtml(md: MarkdownIt, f: Found): string {
  const href = md.utils.escapeHtml(f.href);
  const title = f.title ? ` title="${md.utils.escapeHtml(f.title)}"` : "";
  return `<div class="message_inline_image"><a href="${href}"${title}><img src="${href}"></a></div>\n`;
}

/** Adds the previews as HTML blocks after the paragraphs and headings whose links call for them. */
export function imagePreviews(md: MarkdownIt): void {
  md.core.ruler.push("zulip_image_previews", (state: StateCore) => {
    if ((state.env as Record<string, unknown> | undefined)?.[NO_PREVIEWS]) return;
    let budget = MAX_IMAGE_PREVIEWS;
    let quoted = 0;
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length && budget > 0; i++) {
      const tok = tokens[i];
      if (tok.type === "blockquote_open") quoted++;
      else if (tok.type === "blockquote_close") quoted--;
      if (quoted > 0 || tok.type !== "inline") continue;
      const close = tokens[i + 1];
      if (!close || (close.type !== "paragraph_close" && close.type !== "heading_close")) continue;
      const found = uploadedImages(tok).slice(0, budget);
      if (found.length === 0) continue;
      budget -= found.length;
      const blocks = found.map((f) => {
        const block = new state.Token("html_block", "", 0);
        block.content = previewHtml(md, f);
        block.block = true;
        return block;
      });
      tokens.splice(i + 2, 0, ...blocks);
      i += 1 + blocks.length;
    }
  });
}
