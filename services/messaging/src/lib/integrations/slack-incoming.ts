import { missingParam } from "@chat/platform";
import { anomalousPayload, isObject, parseJsonBody, parseJsonText, type WebhookMessage } from "./payload";
import { decodeEntities, mrkdwnToMarkdown } from "./slack-mrkdwn";

/**
 * Slack-compatible incoming webhooks: `text`, the common blocks (section, header, context,
 * divider, image) and legacy attachments (pretext, title, text, fields, footer, fallback), in
 * Markdown. Blocks replace `text` as Slack shows them (`text` is then the notification's
 * fallback); attachments follow it. One message, in the payload's `channel` as topic.
 */

const NAME = "SlackIncoming";
const anomalous = (reason: string) => anomalousPayload(NAME, reason);

/** As Slack's clients send it: a JSON body, or a form whose `payload` field holds the JSON. */
export function decodeSlackPayload(body: Buffer | undefined, contentType: string, formPayload: string | undefined): unknown {
  if (contentType.split(";")[0].trim().toLowerCase() === "application/json") return parseJsonBody(body);
  if (formPayload === undefined) throw missingParam("payload");
  return parseJsonText(formPayload);
}

export function formatSlackIncoming(payload: unknown): WebhookMessage[] {
  if (!isObject(payload)) throw anomalous("Expected a JSON object.");
  const mrkdwn = payload.mrkdwn !== false;
  const text = optionalString(payload.text, "text");
  const blocks = listOf(payload.blocks, "blocks").map(renderBlock).filter(Boolean);
  const pieces = blocks.length > 0 ? blocks : text?.trim() ? [iconOf(payload) + (mrkdwn ? mrkdwnToMarkdown(text) : text)] : [];
  for (const attachment of listOf(payload.attachments, "attachments")) pieces.push(renderAttachment(attachment));
  const content = joinPieces(pieces);
  if (content === "") return [];
  const channel = optionalString(payload.channel, "channel")?.replace(/^#/, "").trim();
  return [{ topic: channel || "(no topic)", content }];
}

const joinPieces = (pieces: string[]) =>
  pieces
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .join("\n\n");

function iconOf(payload: Record<string, unknown>): string {
  const icon = payload.icon_emoji;
  return typeof icon === "string" && /^:[\w+-]+:$/.test(icon) ? `${icon} ` : "";
}

function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw anomalous(`'${what}' is not a string.`);
  return value;
}

function listOf(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw anomalous(`'${what}' is not a list.`);
  return value;
}

/** A text object (`{type: "mrkdwn" | "plain_text", text}`) in Markdown. */
function textObject(value: unknown, what: string): string {
  if (!isObject(value) || typeof value.text !== "string") throw anomalous(`'${what}' is not a text object.`);
  return value.type === "mrkdwn" ? mrkdwnToMarkdown(value.text) : decodeEntities(value.text);
}

const imageLink = (alt: unknown, url: unknown) => (typeof url === "string" ? `[${typeof alt === "string" && alt ? alt : "image"}](${url})` : "");

/** One block; the kinds a webhook has no use for (actions, inputs) and unknown ones show nothing. */
function renderBlock(block: unknown): string {
  if (!isObject(block)) throw anomalous("A block is not an object.");
  switch (block.type) {
    case "section": {
      const pieces: string[] = [];
      if (block.text !== undefined) pieces.push(textObject(block.text, "text"));
      const fields = listOf(block.fields, "fields").map((f) => textObject(f, "fields"));
      if (fields.length > 0) pieces.push(fields.join("\n"));
      if (isObject(block.accessory) && block.accessory.type === "image") pieces.push(imageLink(block.accessory.alt_text, block.accessory.image_url));
      return joinPieces(pieces);
    }
    case "header":
      return `## ${textObject(block.text, "text").replace(/\n/g, " ")}`;
    case "context":
      return listOf(block.elements, "elements")
        .map((e) => (isObject(e) && e.type === "image" ? imageLink(e.alt_text, e.image_url) : textObject(e, "elements")))
        .filter(Boolean)
        .join(" ");
    case "divider":
      return "---";
    case "image":
      return imageLink(isObject(block.title) && typeof block.title.text === "string" ? block.title.text : block.alt_text, block.image_url);
    default:
      return "";
  }
}

/** A legacy attachment, in the order Slack shows its parts; `fallback` when it shows nothing else. */
function renderAttachment(attachment: unknown): string {
  if (!isObject(attachment)) throw anomalous("An attachment is not an object.");
  const str = (key: string) => optionalString(attachment[key], key);
  const pieces: string[] = [];
  const pretext = str("pretext");
  if (pretext) pieces.push(mrkdwnToMarkdown(pretext));
  const title = str("title");
  const link = str("title_link");
  if (title) pieces.push(link ? `**[${title.replace(/[[\]]/g, "\\$&")}](${link})**` : `**${title}**`);
  const text = str("text");
  if (text) pieces.push(mrkdwnToMarkdown(text));
  const fields = listOf(attachment.fields, "fields").map((field) => {
    if (!isObject(field)) throw anomalous("A field is not an object.");
    const name = optionalString(field.title, "title");
    const value = optionalString(field.value, "value");
    return [name ? `**${name}**` : "", value ? mrkdwnToMarkdown(value) : ""].filter(Boolean).join(": ");
  });
  if (fields.some(Boolean)) pieces.push(fields.filter(Boolean).join("\n"));
  pieces.push(...listOf(attachment.blocks, "blocks").map(renderBlock));
  const image = str("image_url");
  if (image) pieces.push(imageLink("image", image));
  const footer = str("footer");
  if (footer) pieces.push(mrkdwnToMarkdown(footer));
  const shown = joinPieces(pieces);
  const fallback = str("fallback");
  return shown === "" && fallback ? mrkdwnToMarkdown(fallback) : shown;
}
