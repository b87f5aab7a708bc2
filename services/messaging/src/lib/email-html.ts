import { escapeAttr, escapeText, parseFragment, serialize, type Element } from "./html-tree";

/**
 * The HTML parts of notification mails (missed messages, digests). A mail client knows neither
 * the organization's address nor the web app's style sheets: links are made absolute, and the
 * few styles are inline (clients drop style sheets).
 */

/** Text as HTML, for element content and attribute values alike. */
export const escapeHtml = (s: string): string => escapeAttr(s);

/** An address in rendered content as a mail client can follow it: ours (relative) made absolute. */
export function absoluteUrl(url: string, realmUrl: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith("//")) return url;
  return url.startsWith("/") ? realmUrl + url : `${realmUrl}/${url}`;
}

const classesOf = (el: Element) => (el.attrs.find(([k]) => k === "class")?.[1] ?? "").split(/\s+/);

/**
 * Rewrites a rendered message for a mail, as Zulip's relative_to_full_url and fix_emojis do:
 * links and images absolute; inline image previews dropped (an upload needs the reader's session,
 * so the image would not load; the link to it stays); Unicode emoji as their characters.
 */
function fitForMail(el: Element, realmUrl: string): void {
  el.attrs = el.attrs.map(([k, v]) => [k, k === "href" || k === "src" ? absoluteUrl(v, realmUrl) : v]);
  const emoji = el.tag === "span" ? classesOf(el).find((c) => /^emoji-[0-9a-f]+(-[0-9a-f]+)*$/.test(c)) : undefined;
  if (emoji) el.text = String.fromCodePoint(...emoji.slice("emoji-".length).split("-").map((h) => parseInt(h, 16)));
  const kept: Element[] = [];
  for (const child of el.children) {
    if (classesOf(child).includes("message_inline_image")) {
      if (kept.length > 0) kept[kept.length - 1].tail += child.tail;
      else el.text += child.tail;
      continue;
    }
    fitForMail(child, realmUrl);
    kept.push(child);
  }
  el.children = kept;
}

/** What stands in a mail for a spoiler's hidden content (the reader opens it in the app). */
export const SPOILER_NOTE = "(Spoiler hidden: open the conversation to see it)";

const hasClass = (el: Element, name: string) => classesOf(el).includes(name);

/**
 * Keeps each spoiler's header and leaves its content out, as Zulip's notification mails do: a
 * mail cannot hide it until the reader asks, and mail previews would show it at once. The note
 * goes at the end of the header's last paragraph (a paragraph of its own when there is none).
 */
function hideSpoilers(el: Element): void {
  for (const child of el.children) {
    if (!hasClass(child, "spoiler-block")) {
      hideSpoilers(child);
      continue;
    }
    const header = child.children.find((c) => hasClass(c, "spoiler-header"));
    const kept = header ? header.children : [];
    const note: Element = { tag: "em", attrs: [], text: SPOILER_NOTE, children: [], tail: "" };
    const last = kept.at(-1);
    if (last?.tag === "p") {
      const end = last.children.at(-1);
      if (end) end.tail = end.tail.trimEnd() + " ";
      else last.text = last.text.trimEnd() + " ";
      last.children.push(note);
    } else {
      kept.push({ tag: "p", attrs: [], text: "", children: [note], tail: "\n" });
    }
    child.text = header?.text ?? "";
    child.children = kept;
  }
}

/** A message's rendered HTML as mails read it: parsed, its spoilers' content left out. */
export function parseForMail(renderedContent: string): Element {
  const root = parseFragment(renderedContent);
  hideSpoilers(root);
  return root;
}

/** A message's stored rendered HTML as a mail shows it. */
export function messageHtmlForMail(renderedContent: string, realmUrl: string): string {
  const root = parseForMail(renderedContent);
  fitForMail(root, realmUrl);
  return escapeText(root.text) + root.children.map(serialize).join("");
}

/** A link whose address and text are escaped here. */
export function link(href: string, text: string): string {
  return `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
}

/** Small grey print, as the mails' footers use. */
export const FOOTER_STYLE = "color: #666; font-size: 12px;";

/** The mail's whole HTML part around `body` (already HTML). */
export function mailPage(body: string): string {
  return (
    '<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head>\n' +
    `<body style="font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; font-size: 14px; line-height: 1.45; color: #222;">\n${body}\n</body></html>\n`
  );
}
