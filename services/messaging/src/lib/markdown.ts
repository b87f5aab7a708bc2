import { emojiCodeByName, emojiNameByCode, MAX_MESSAGE_LENGTH } from "@chat/contracts";
import { badRequest } from "@chat/platform";
import MarkdownIt from "markdown-it";
import type StateCore from "markdown-it/lib/rules_core/state_core.mjs";
import type StateInline from "markdown-it/lib/rules_inline/state_inline.mjs";
import type Token from "markdown-it/lib/token.mjs";
import { lookupCodeLanguage } from "./code-languages";
import { strongOutsideEm, tableAlignStyle, timeRule, underscoreRule, zulipListRule, type BlockRule } from "./markdown-syntax";
import { highlightCode } from "./highlight";
import { findLinkifierMatches, type CompiledLinkifier } from "./linkifiers";
import { MATH_FENCE_LANGUAGES, mathPlugin, renderMathBlock } from "./math";
import { imagePreviews, looksLikeImage, NO_PREVIEWS } from "./previews";

/** What mention syntax in a message can resolve to; the caller looks these up first. */
/** A user a message may mention; `botType` tells the send which mentions trigger a bot. */
export interface MentionableUser {
  id: number;
  fullName: string;
  botType?: number | null;
}

export interface MentionDirectory {
  /** Active users by lower-cased full name (several when names collide). */
  usersByName: Map<string, Array<MentionableUser>>;
  usersById: Map<number, MentionableUser>;
  /** User groups by lower-cased name. */
  groupsByName: Map<string, { id: number; name: string }>;
  /** Channels the sender can see, by lower-cased name. */
  streamsByName: Map<string, { id: number; name: string }>;
  /** The organization's linkifiers, in its order. */
  linkifiers: CompiledLinkifier[];
  /** The organization's active custom emoji the content names, by name: their image's URL. */
  customEmoji: Map<string, string>;
  /** The organization's default_code_block_language: a fence naming none takes it ("" none). */
  defaultCodeBlockLanguage: string;
}

/** What a rendered message mentions (silent mentions excluded: they notify nobody). */
export interface RenderResult {
  html: string;
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
  hasLink: boolean;
  hasAttachment: boolean;
  hasImage: boolean;
}

interface RenderEnv {
  dir: MentionDirectory;
  out: RenderResult;
  /** Set while a quote's body renders: quoted images get no preview. */
  [NO_PREVIEWS]?: boolean;
}

export const emptyDirectory = (): MentionDirectory => ({
  usersByName: new Map(),
  usersById: new Map(),
  groupsByName: new Map(),
  streamsByName: new Map(),
  linkifiers: [],
  customEmoji: new Map(),
  defaultCodeBlockLanguage: "",
});

const STREAM_WILDCARDS = new Set(["all", "everyone", "stream", "channel"]);

/** Names referenced by mention, channel-link and emoji syntax, to look up before rendering. */
export function scanMentionCandidates(content: string): {
  userNames: string[];
  userIds: number[];
  groupNames: string[];
  streamNames: string[];
  emojiNames: string[];
} {
  const userNames = new Set<string>();
  const userIds = new Set<number>();
  const groupNames = new Set<string>();
  const streamNames = new Set<string>();
  for (const m of content.matchAll(/@_?\*\*([^*\n]+?)\*\*/g)) {
    const [name, id] = splitNameId(m[1]);
    if (id !== null) userIds.add(id);
    else userNames.add(name.toLowerCase());
  }
  for (const m of content.matchAll(/@_?\*([^*\n]+?)\*/g)) groupNames.add(m[1].toLowerCase());
  for (const m of content.matchAll(/#\*\*([^*\n]+?)\*\*/g)) streamNames.add(m[1].split(">")[0].toLowerCase());
  // Overlapping (`:a:b:` names both): where the text splits decides which one renders.
  const emojiNames = new Set<string>();
  for (const m of content.matchAll(EMOJI_NAME_CANDIDATE)) emojiNames.add(m[1]);
  return { userNames: [...userNames], userIds: [...userIds], groupNames: [...groupNames], streamNames: [...streamNames], emojiNames: [...emojiNames] };
}

/** Custom emoji names as uploads allow them (lower-case letters, digits, `_` and `-`). */
const EMOJI_NAME_CANDIDATE = /:([0-9a-z_-]+)(?=:)/g;

function splitNameId(text: string): [string, number | null] {
  const m = /^(.*)\|(\d+)$/.exec(text);
  return m ? [m[1], Number(m[2])] : [text, null];
}

// Taken once: every MarkdownIt() compiles linkify's patterns, about a millisecond each time.
const escape: (s: string) => string = MarkdownIt().utils.escapeHtml;

/**
 * Zulip's hash_util_encode for narrow links: percent-encoding of all but letters, digits and
 * `_.-~`, then `.` for `%` (so `.` itself is `.2E`).
 */
function hashEncode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, "%2E")
    .replace(/%/g, ".");
}

function narrowSlug(id: number, name: string): string {
  return `${id}-${hashEncode(name.replace(/ /g, "-"))}`;
}

/** The narrow of a channel's topic, as `#**channel>topic**` links it (`#narrow/channel/9-general/topic/lunch`). */
export function topicNarrow(stream: { id: number; name: string }, topic: string): string {
  return `#narrow/channel/${narrowSlug(stream.id, stream.name)}/topic/${hashEncode(topic)}`;
}

/** `@**Full Name**`, `@**Name|id**`, `@_**Name**`, wildcards, `@*group*`, `@_*group*`. */
function mentionRule(state: StateInline, silent: boolean): boolean {
  const src = state.src.slice(state.pos);
  if (src.charCodeAt(0) !== 0x40 /* @ */) return false;
  const env = state.env as RenderEnv;
  const user = /^@(_?)\*\*([^*\n]+?)\*\*/.exec(src);
  if (user) {
    const html = renderUserMention(env, user[2], user[1] === "_");
    if (html === null) return false;
    if (!silent) state.push("html_inline", "", 0).content = html;
    state.pos += user[0].length;
    return true;
  }
  const group = /^@(_?)\*([^*\n]+?)\*/.exec(src);
  if (group) {
    const found = env.dir.groupsByName.get(group[2].toLowerCase());
    if (!found) return false;
    const isSilent = group[1] === "_";
    if (!silent) {
      state.push("html_inline", "", 0).content =
        `<span class="user-group-mention${isSilent ? " silent" : ""}" data-user-group-id="${found.id}">${isSilent ? "" : "@"}${escape(found.name)}</span>`;
    }
    if (!isSilent) env.out.mentionedGroupIds.add(found.id);
    state.pos += group[0].length;
    return true;
  }
  return false;
}

function renderUserMention(env: RenderEnv, text: string, isSilent: boolean): string | null {
  const at = isSilent ? "" : "@";
  const cls = `user-mention${isSilent ? " silent" : ""}`;
  const lower = text.toLowerCase();
  if (STREAM_WILDCARDS.has(lower)) {
    if (!isSilent) env.out.streamWildcard = true;
    return `<span class="user-mention channel-wildcard-mention${isSilent ? " silent" : ""}" data-user-id="*">${at}${escape(text)}</span>`;
  }
  if (lower === "topic") {
    if (!isSilent) env.out.topicWildcard = true;
    return `<span class="topic-mention${isSilent ? " silent" : ""}">${at}${escape(text)}</span>`;
  }
  const [name, id] = splitNameId(text);
  let target: { id: number; fullName: string } | undefined;
  if (id !== null) {
    target = env.dir.usersById.get(id);
    // `@**Name|id**` names the user twice; a name that is not theirs mentions nobody (`@**|id**` may leave it out).
    if (target && name !== "" && target.fullName !== name) target = undefined;
  } else {
    const matches = env.dir.usersByName.get(name.toLowerCase()) ?? [];
    // An ambiguous name renders as plain text, as in Zulip.
    if (matches.length === 1) target = matches[0];
  }
  if (!target) return null;
  if (!isSilent) env.out.mentionedUserIds.add(target.id);
  return `<span class="${cls}" data-user-id="${target.id}">${at}${escape(target.fullName)}</span>`;
}

/** `#**channel**` and `#**channel>topic**` links. */
function streamLinkRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */) return false;
  const m = /^#\*\*([^*\n]+?)\*\*/.exec(state.src.slice(state.pos));
  if (!m) return false;
  const env = state.env as RenderEnv;
  const gt = m[1].indexOf(">");
  const name = gt >= 0 ? m[1].slice(0, gt) : m[1];
  const topic = gt >= 0 ? m[1].slice(gt + 1) : null;
  const stream = env.dir.streamsByName.get(name.toLowerCase());
  if (!stream) return false;
  if (!silent) {
    const base = `/#narrow/channel/${narrowSlug(stream.id, stream.name)}`;
    state.push("html_inline", "", 0).content =
      topic === null
        ? `<a class="stream" data-stream-id="${stream.id}" href="${escape(base)}">#${escape(stream.name)}</a>`
        : `<a class="stream-topic" data-stream-id="${stream.id}" href="${escape(`${base}/topic/${hashEncode(topic)}`)}">#${escape(stream.name)} &gt; ${escape(topic)}</a>`;
  }
  state.pos += m[0].length;
  return true;
}

/** Turns linkifier matches in plain text (outside links and code) into links. */
function linkifierRule(md: MarkdownIt) {
  return (state: StateCore): void => {
    const env = state.env as RenderEnv;
    if (env.dir.linkifiers.length === 0) return;
    for (const block of state.tokens) {
      if (block.type !== "inline" || !block.children) continue;
      const out: Token[] = [];
      let inLink = 0;
      for (const tok of block.children) {
        if (tok.type === "link_open") inLink++;
        if (tok.type === "link_close") inLink--;
        if (tok.type !== "text" || inLink > 0) {
          out.push(tok);
          continue;
        }
        let pos = 0;
        for (const match of findLinkifierMatches(tok.content, env.dir.linkifiers)) {
          const href = md.normalizeLink(match.url);
          if (!md.validateLink(href)) continue;
          if (match.start > pos) out.push(textToken(state, tok.content.slice(pos, match.start)));
          const open = new state.Token("link_open", "a", 1);
          open.attrs = [["href", href]];
          out.push(open, textToken(state, tok.content.slice(match.start, match.end)), new state.Token("link_close", "a", -1));
          pos = match.end;
        }
        if (pos === 0) out.push(tok);
        else if (pos < tok.content.length) out.push(textToken(state, tok.content.slice(pos)));
      }
      block.children = out;
    }
  };
}

/** `:name:`, and the emoji characters themselves (as Unicode writes them for display, not bare `©` or `↔`). */
const EMOJI_SYNTAX = new RegExp(":[\\p{L}\\p{N}_\\+\\-]+:|\\p{RGI_Emoji}", "gv");

/** An image emoji (custom, or Zulip's logo) written `:name:`, as Zulip's make_realm_emoji. */
function imageEmojiHtml(name: string, src: string): string {
  return `<img alt=":${escape(name)}:" class="emoji" src="${escape(src)}" title="${escape(name.replace(/_/g, " "))}">`;
}

/**
 * The HTML of an emoji written `text`, or null when it names none (Zulip's Emoji pattern: the
 * organization's custom emoji first, then Zulip's logo, then the Unicode names).
 */
function emojiHtml(text: string, customEmoji: Map<string, string>): string | null {
  let code: string | undefined;
  let shown = text;
  if (text.startsWith(":") && text.endsWith(":") && text.length > 2) {
    const name = text.slice(1, -1);
    const custom = customEmoji.get(name);
    if (custom !== undefined) return imageEmojiHtml(name, custom);
    if (name === "zulip") return imageEmojiHtml(name, "/static/generated/emoji/images/emoji/unicode/zulip.png");
    code = emojiCodeByName(name);
  } else {
    code = Array.from(text.replace(/\ufe0f/g, ""), (c) => c.codePointAt(0)!.toString(16).padStart(4, "0")).join("-");
    const name = emojiNameByCode(code);
    code = name === undefined ? undefined : code;
    shown = `:${name}:`;
  }
  if (code === undefined) return null;
  const title = escape(shown.slice(1, -1).replace(/_/g, " "));
  return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">${escape(shown)}</span>`;
}

/** Emoji in plain text (not in code, nor in a web address shown as a link) become Zulip's emoji spans. */
function emojiRule(state: StateCore): void {
  const customEmoji = (state.env as RenderEnv).dir.customEmoji;
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const out: Token[] = [];
    let inAutolink = 0;
    for (const tok of block.children) {
      if (tok.type === "link_open" && (tok.markup === "linkify" || tok.markup === "autolink")) inAutolink++;
      if (tok.type === "link_close" && inAutolink > 0 && (tok.markup === "linkify" || tok.markup === "autolink")) inAutolink--;
      if (tok.type !== "text" || inAutolink > 0) {
        out.push(tok);
        continue;
      }
      let pos = 0;
      for (const match of tok.content.matchAll(EMOJI_SYNTAX)) {
        const html = emojiHtml(match[0], customEmoji);
        if (html === null) continue;
        if (match.index > pos) out.push(textToken(state, tok.content.slice(pos, match.index)));
        const t = new state.Token("html_inline", "", 0);
        t.content = html;
        out.push(t);
        pos = match.index + match[0].length;
      }
      if (pos === 0) out.push(tok);
      else if (pos < tok.content.length) out.push(textToken(state, tok.content.slice(pos)));
    }
    block.children = out;
  }
}

function textToken(state: StateCore, content: string): Token {
  const t = new state.Token("text", "", 0);
  t.content = content;
  return t;
}

function createRenderer(): MarkdownIt {
  // html: false -> raw HTML in a message is shown as text, never interpreted.
  const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });
  // Zulip has no inline image syntax (`![x](y)` stays a plain link), and no underlined
  // (setext) headings: only `#` ones.
  // Nor reference links: `[x]: https://...` stays a line of text, `[x][y]` too.
  md.disable(["image", "lheading", "reference"]);
  // The rule list is internal to markdown-it's Ruler, which offers no getter for one rule by name.
  const blockRules = (md.block.ruler as unknown as { __rules__: Array<{ name: string; fn: BlockRule }> }).__rules__;
  md.block.ruler.at("list", zulipListRule(blockRules.find((r) => r.name === "list")!.fn), { alt: ["paragraph", "reference", "blockquote"] });
  md.inline.ruler.before("emphasis", "zulip_underscores", underscoreRule);
  // Zulip's strikethrough is <del>.
  md.renderer.rules.s_open = () => "<del>";
  md.renderer.rules.s_close = () => "</del>";
  md.inline.ruler.before("emphasis", "zulip_mention", mentionRule);
  md.inline.ruler.before("emphasis", "zulip_stream_link", streamLinkRule);
  md.inline.ruler.before("autolink", "zulip_time", timeRule);
  md.use(mathPlugin);
  md.use(imagePreviews);
  md.core.ruler.after("linkify", "zulip_linkifiers", linkifierRule(md));
  md.core.ruler.after("zulip_linkifiers", "zulip_emoji", emojiRule);
  md.core.ruler.after("inline", "zulip_strong_em", strongOutsideEm);
  md.core.ruler.after("block", "zulip_table_align", tableAlignStyle);
  md.renderer.rules.fence = (tokens, idx, _options, env: RenderEnv) => {
    const token = tokens[idx];
    const info = token.info.trim();
    // Zulip lower-cases the word (an unknown one is the data-code-language as written in lower
    // case); a fence naming none takes the organization's default.
    const lang = info.split(/\s+/)[0] || env.dir.defaultCodeBlockLanguage;
    // Zulip's fenced blocks whose body is Markdown too: quotes, and spoilers (the rest of the
    // opening line is the header).
    const kind = lang.toLowerCase();
    if (kind === "quote" || kind === "quoted") {
      const quoted = env[NO_PREVIEWS];
      env[NO_PREVIEWS] = true;
      try {
        return `<blockquote>\n${md.render(token.content, env)}</blockquote>\n`;
      } finally {
        env[NO_PREVIEWS] = quoted;
      }
    }
    if (kind === "spoiler") {
      const header = info.slice(lang.length).trim();
      return (
        `<div class="spoiler-block"><div class="spoiler-header">\n${header ? md.render(header, env) : ""}` +
        `</div><div class="spoiler-content" aria-hidden="true">\n${md.render(token.content, env)}</div></div>\n`
      );
    }
    if (MATH_FENCE_LANGUAGES.has(kind)) return renderMathBlock(token.content, env);
    const language = kind ? lookupCodeLanguage(kind) : null;
    const attr = language ? ` data-code-language="${escape(language.name)}"` : "";
    return `<div class="codehilite"${attr}><pre><span></span><code>${highlightCode(token.content, language?.grammar ?? null, env)}</code></pre></div>\n`;
  };
  md.renderer.rules.code_block = (tokens, idx) =>
    `<div class="codehilite"><pre><span></span><code>${escape(tokens[idx].content)}</code></pre></div>\n`;
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env: RenderEnv, self) => {
    const href = tokens[idx].attrGet("href") ?? "";
    env.out.hasLink = true;
    if (/^(\/|https?:\/\/[^/]*\/)?user_uploads\//.test(href)) env.out.hasAttachment = true;
    if (looksLikeImage(href)) env.out.hasImage = true;
    return defaultLinkOpen(tokens, idx, options, env, self);
  };
  return md;
}

const renderer = createRenderer();

/**
 * Renders message Markdown to the HTML Zulip clients display, collecting mentions. `previews:
 * false` leaves out uploaded images' previews (a channel description's rendering, as Zulip's).
 */
export function renderMarkdown(content: string, dir: MentionDirectory = emptyDirectory(), options: { previews?: boolean } = {}): RenderResult {
  const out: RenderResult = {
    html: "",
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    streamWildcard: false,
    topicWildcard: false,
    hasLink: false,
    hasAttachment: false,
    hasImage: false,
  };
  const env: RenderEnv = { dir, out };
  if (options.previews === false) env[NO_PREVIEWS] = true;
  out.html = renderer.render(content, env).trimEnd();
  return out;
}

/**
 * Zulip refuses a message whose HTML is longer than 100 times the longest message: ordinary
 * Markdown never comes near (a long message's HTML is a few times its text), but TeX can (250
 * small formulas with over- and underbraces, 9,750 characters, made 1.4 MB), and every
 * recipient's queue holds a copy.
 */
export const MAX_RENDERED_LENGTH = MAX_MESSAGE_LENGTH * 100;

/** A message's rendering, refused as Zulip refuses it when its HTML is over MAX_RENDERED_LENGTH. */
export function renderMessageContent(content: string, dir: MentionDirectory): RenderResult {
  const rendered = renderMarkdown(content, dir);
  if (rendered.html.length > MAX_RENDERED_LENGTH) throw badRequest("Unable to render message");
  return rendered;
}
