import { ZULIP_VERSION } from "@chat/contracts";
import { ApiError, guardedFetch, isRefusedAddress, organizationUrl, type Identity, type Role } from "@chat/platform";
import type { AppDeps } from "../deps";
import { isPrivateAddress, reachesPrivateAddress } from "../lib/egress";
import { topicNarrow } from "../lib/markdown";
import { widgetContentOf, type WidgetData } from "../lib/widgets";
import { accessMessages } from "../queries/message-access";
import { formatMessages } from "../queries/message-format";
import { getUser } from "../queries/users";
import { claimDelivery, finishDelivery, retryDelivery, type DeliveryRow } from "../store/outgoing-webhooks";
import type { UserRow } from "../store/users";
import { doSendMessage, type SendRequest } from "./messages";

/**
 * Outgoing webhook bots (Zulip's zerver/lib/outgoing_webhook.py): each message that triggered a
 * bot (written with the message, store/outgoing-webhooks.ts) is POSTed to the bot's URL in
 * Zulip's generic format or Slack's, and the bot's answer is posted by the bot where the message
 * was. A timeout or a connection error is tried again, three times, before the bot is given up
 * as unavailable; a refusal or a bad answer is not. Every failure is told where the message was
 * ("Failure! ...") and, with its details, to the bot's owner in a direct message from the bot.
 * An answer's `widget_content` (a zform: choices that send a reply when clicked) becomes the
 * reply's widget, checked as Zulip checks it.
 */

/** Zulip's MAX_REQUEST_RETRIES: tries after the first, for timeouts and connection errors. */
const MAX_RETRIES = 3;
/** Each retry's wait, in units of OUTGOING_WEBHOOK_RETRY_MS. */
const RETRY_BACKOFF = [1, 5, 25];
/** A service's interface: 1 is Zulip's generic format, 2 Slack's. */
const SLACK = 2;
/** Bots' requests where private addresses are refused: never connected to one (see egress.ts). */
const publicFetch = guardedFetch(isPrivateAddress);
/**
 * The most of an answer that is read. Zulip reads all of it; here a bot's server cannot make
 * this process hold an unbounded body. A reply is one message, far smaller than this.
 */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The settings a delivery uses (jobs/outgoing-webhooks.ts reads them from the environment). */
export interface DeliveryConfig {
  OUTGOING_WEBHOOK_TIMEOUT_SECONDS: number;
  OUTGOING_WEBHOOK_RETRY_MS: number;
  OUTGOING_WEBHOOK_PRIVATE_ADDRESSES: boolean;
}

/** Claims one due delivery and makes it; false when none was due. */
export async function deliverNext(deps: AppDeps, config: DeliveryConfig): Promise<boolean> {
  const now = deps.clock.now();
  // A lease well past the longest attempt: a process that died mid-attempt is taken over after it.
  const leaseMs = (config.OUTGOING_WEBHOOK_TIMEOUT_SECONDS + 60) * 1000;
  const delivery = await claimDelivery(deps.pool, now, new Date(now.getTime() - leaseMs));
  if (!delivery) return false;
  // Past its last retry only when processes died (or accounts failed) holding it: given up.
  if (delivery.attempts > MAX_RETRIES + 1) {
    deps.log.warn({ deliveryId: delivery.id, botId: delivery.botId, messageId: delivery.messageId }, "outgoing webhook: given up after repeated failures");
    await finishDelivery(deps.pool, delivery.id);
    return true;
  }
  const outcome = await attempt(deps, config, delivery);
  if (outcome === "retry" && delivery.attempts <= MAX_RETRIES) {
    const wait = config.OUTGOING_WEBHOOK_RETRY_MS * RETRY_BACKOFF[delivery.attempts - 1];
    await retryDelivery(deps.pool, delivery.id, new Date(deps.clock.now().getTime() + wait));
  } else {
    await finishDelivery(deps.pool, delivery.id);
  }
  return true;
}

/** What the bot's server was sent about, and who to answer as. */
interface Trigger {
  delivery: DeliveryRow;
  bot: UserRow;
  as: Identity;
  message: Record<string, any>;
  /** The message's Markdown (Zulip's `command`). */
  content: string;
}

type Outcome = "done" | "retry";

async function attempt(deps: AppDeps, config: DeliveryConfig, delivery: DeliveryRow): Promise<Outcome> {
  const { realmId, botId, messageId } = delivery;
  const bot = await getUser(deps, realmId, botId);
  // A bot deactivated since, or one whose service is gone, is no longer triggered.
  if (!bot || !bot.isActive || !bot.isBot) return "done";
  const service = await deps.accounts.getBotService(realmId, botId);
  if (!service) return "done";
  const as: Identity = { userId: bot.id, realmId, role: bot.role as Role, isBot: true, email: bot.email, client: "OutgoingWebhookResponse" };
  // The message as the bot may read it: one since deleted, or in a channel it cannot read, is not sent.
  const found = (await accessMessages(deps.pool, { userId: bot.id, realmId, role: bot.role }, [messageId])).get(messageId);
  if (!found) return "done";
  const [formatted] = await formatMessages(deps, realmId, [{ row: found.row, flags: 0 }], { applyMarkdown: false, clientGravatar: false });
  const { flags: _flags, ...message } = formatted as Record<string, any>;
  message.rendered_content = found.row.renderedContent;
  const trigger: Trigger = { delivery, bot, as, message, content: found.row.content };

  if (service.interface === SLACK && message.type === "private") {
    await failWithMessage(deps, trigger, "Slack outgoing webhooks don't support direct messages.");
    return "done";
  }
  const request = service.interface === SLACK ? slackRequest(deps, trigger, service.token) : genericRequest(trigger, service.token);
  let response: Response;
  let text: string | null;
  const refusePrivate = !config.OUTGOING_WEBHOOK_PRIVATE_ADDRESSES;
  const privateAddressRefused = async () => {
    // What Zulip reports when its egress proxy refuses the address (a 407 from Smokescreen).
    deps.log.info({ botId, messageId }, "outgoing webhook: private address refused");
    await notifyBotOwner(deps, trigger, { status: 407 });
    await failWithMessage(deps, trigger, "Third party responded with 407");
    return "done" as const;
  };
  try {
    // Checked before (an address literal connects without a lookup) and at connect time (a name
    // resolved again to another address, DNS rebinding, is refused there).
    if (refusePrivate && (await reachesPrivateAddress(service.base_url))) return await privateAddressRefused();
    response = await (refusePrivate ? publicFetch : fetch)(service.base_url, {
      method: "POST",
      headers: { "content-type": request.contentType, "user-agent": `ZulipOutgoingWebhook/${ZULIP_VERSION}` },
      body: request.body,
      // Not followed: a redirect could lead anywhere, past the address check above. The bot's
      // owner learns of it as of any other answer that is not a success.
      redirect: "manual",
      signal: AbortSignal.timeout(config.OUTGOING_WEBHOOK_TIMEOUT_SECONDS * 1000),
    });
    text = await readAnswer(response);
  } catch (err) {
    if (isRefusedAddress(err)) return await privateAddressRefused();
    const timedOut = (err as Error).name === "TimeoutError";
    const failure = timedOut
      ? `Request timed out after ${config.OUTGOING_WEBHOOK_TIMEOUT_SECONDS} seconds.`
      : `The message \`${trigger.content}\` resulted in a connection error when sending a request to an outgoing webhook! See the Zulip server logs for more information.`;
    deps.log.info({ err: (err as Error).message, botId, messageId, attempt: delivery.attempts }, "outgoing webhook: no answer");
    if (delivery.attempts <= MAX_RETRIES) return "retry";
    await failWithMessage(deps, trigger, "Bot is unavailable");
    await notifyBotOwner(deps, trigger, { failure });
    return "done";
  }
  if (response.status < 200 || response.status >= 300) {
    deps.log.info({ status: response.status, botId, messageId }, "outgoing webhook: refused");
    await notifyBotOwner(deps, trigger, { status: response.status, body: text ?? undefined });
    await failWithMessage(deps, trigger, `Third party responded with ${response.status}`);
    return "done";
  }
  if (text === null) {
    deps.log.info({ botId, messageId }, "outgoing webhook: answer too large");
    await failWithMessage(deps, trigger, "Response is larger than 1 MiB");
    await notifyBotOwner(deps, trigger, { failure: "The webhook's response was larger than 1 MiB, and was not read." });
    return "done";
  }
  try {
    const answer = answerOf(text, service.interface);
    if (answer !== null) await reply(deps, trigger, answer.content, "reply", answer.widget);
  } catch (err) {
    // Only what a client would be told (Zulip's JsonableError); anything else is this server's trouble.
    if (!(err instanceof ApiError || err instanceof BadAnswer)) throw err;
    const msg = err.message;
    await failWithMessage(deps, trigger, msg);
    await notifyBotOwner(deps, trigger, {
      body: text,
      failure: `The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${msg}`,
    });
  }
  return "done";
}

class BadAnswer extends Error {}

/** The answer's body, decoded; null when it is longer than MAX_ANSWER_BYTES (the rest is not read). */
async function readAnswer(response: Response): Promise<string | null> {
  const chunks: Uint8Array[] = [];
  if (response.body) {
    const reader = response.body.getReader();
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_ANSWER_BYTES) {
        await reader.cancel().catch(() => undefined);
        return null;
      }
      chunks.push(value);
    }
  }
  return decoderFor(response.headers.get("content-type")).decode(Buffer.concat(chunks));
}

/** A decoder for the Content-Type's charset when TextDecoder knows it; UTF-8 otherwise. */
function decoderFor(contentType: string | null): TextDecoder {
  for (const param of (contentType ?? "").split(";").slice(1)) {
    const at = param.indexOf("=");
    if (at < 0 || param.slice(0, at).trim().toLowerCase() !== "charset") continue;
    const label = param.slice(at + 1).trim().replace(/^"(.*)"$/, "$1");
    try {
      return new TextDecoder(label);
    } catch {
      break; // a label TextDecoder does not know (a RangeError)
    }
  }
  return new TextDecoder("utf-8");
}

/** Zulip's process_success_response: the reply's content and widget, or null when none is wanted. */
function answerOf(text: string, iface: number): { content: string; widget?: WidgetData } | null {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new BadAnswer("Invalid JSON in response");
  }
  // Bot servers of before 2021 answered `""` when no reply was wanted.
  if (answer === "") return null;
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) throw new BadAnswer("Invalid response format");
  const fields = answer as Record<string, unknown>;
  let content: unknown;
  if (iface === SLACK) content = fields.text;
  else {
    if (fields.response_not_required === true) return null;
    // `response_string` is what bot servers answered before `content` was named; `content` wins.
    content = fields.content ?? fields.response_string;
  }
  if (content === undefined || content === null) return null;
  const str = typeof content === "string" ? content : JSON.stringify(content);
  if (str.trim() === "") return null;
  // Only beside `content`, as Zulip's generic interface reads it.
  if (iface === SLACK || fields.content === undefined || fields.content === null || fields.widget_content == null) return { content: str };
  try {
    return { content: str, widget: widgetContentOf(fields.widget_content) };
  } catch (err) {
    throw new BadAnswer((err as Error).message);
  }
}

function genericRequest(t: Trigger, token: string) {
  const body = { data: t.content, message: t.message, bot_email: t.bot.email, bot_full_name: t.bot.fullName, token, trigger: t.delivery.trigger };
  return { contentType: "application/json", body: JSON.stringify(body) };
}

/** Slack's outgoing webhook form (Zulip's SlackOutgoingWebhookService); channel messages only. */
function slackRequest(deps: AppDeps, t: Trigger, token: string) {
  const m = t.message;
  const form = new URLSearchParams([
    ["token", token],
    ["team_id", `T${t.delivery.realmId}`],
    ["team_domain", new URL(organizationUrl(deps.config, m.sender_realm_str)).host],
    ["channel_id", `C${m.stream_id}`],
    ["channel_name", String(m.display_recipient)],
    ["thread_ts", String(m.timestamp)],
    ["timestamp", String(m.timestamp)],
    ["user_id", `U${m.sender_id}`],
    ["user_name", m.sender_full_name],
    ["text", t.content],
    ["trigger_word", t.delivery.trigger],
    ["service_id", String(t.bot.id)],
  ]);
  return { contentType: "application/x-www-form-urlencoded", body: form.toString() };
}

/**
 * Zulip's send_response_message: the bot posts where the message was (its channel and topic, or
 * to everyone in its direct conversation). Once per delivery, however often it is attempted.
 */
async function reply(deps: AppDeps, t: Trigger, content: string, idempotency = "reply", widget?: WidgetData): Promise<void> {
  const m = t.message;
  const req: SendRequest =
    m.type === "stream"
      ? { type: "stream", to: String(m.stream_id), topic: m.subject, content, widget }
      : { type: "private", to: JSON.stringify((m.display_recipient as Array<{ id: number }>).map((r) => r.id)), content, widget };
  await doSendMessage(deps, t.as, req, `outgoing-webhook:${t.delivery.id}:${idempotency}`);
}

/** Zulip's fail_with_message: "Failure! ..." where the message was. */
async function failWithMessage(deps: AppDeps, t: Trigger, failure: string): Promise<void> {
  await reply(deps, t, `Failure! ${failure}`, "failure").catch((err) =>
    deps.log.warn({ err: (err as Error).message, botId: t.bot.id }, "outgoing webhook: failure notice not sent"),
  );
}

/** Zulip's notify_bot_owner: the details, in a direct message from the bot to its owner. */
async function notifyBotOwner(deps: AppDeps, t: Trigger, what: { status?: number; body?: string; failure?: string }): Promise<void> {
  if (t.bot.botOwnerId === null) return;
  const realm = await deps.accounts.getRealm(t.delivery.realmId);
  const m = t.message;
  const narrow =
    m.type === "stream"
      ? topicNarrow({ id: m.stream_id, name: String(m.display_recipient) }, m.subject)
      : `#narrow/dm/${(m.display_recipient as Array<{ id: number }>).map((r) => r.id).join(",")}-pm`;
  let text = `[A message](${organizationUrl(deps.config, realm.string_id)}/${narrow}/near/${m.id}) to your bot @_**${t.bot.fullName}** triggered an outgoing webhook.`;
  if (what.failure) text += `\n${what.failure}`;
  else if (what.status === 407) text += "\nThe URL configured for the webhook is for a private or disallowed network.";
  else if (what.status) text += `\nThe webhook got a response with status code *${what.status}*.`;
  if (what.body) text += `\nThe response contains the following payload:\n\`\`\`\n${what.body}\n\`\`\``;
  await doSendMessage(deps, t.as, { type: "private", to: JSON.stringify([t.bot.botOwnerId]), content: text }, `outgoing-webhook:${t.delivery.id}:owner`).catch((err) =>
    deps.log.warn({ err: (err as Error).message, botId: t.bot.id }, "outgoing webhook: owner not told"),
  );
}
