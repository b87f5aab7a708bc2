import { INCOMING_WEBHOOK_INTEGRATIONS } from "@chat/contracts";
import { ApiError, missingParam, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { eventWanted, integrationMessages, INTEGRATIONS, missingChannelNotice, type IntegrationName, type WebhookMessage, type WebhookPayload } from "../lib/integrations";
import { getUser } from "../queries/users";
import { claimMissingChannelNotice } from "../store/missing-channel-notices";
import { doSendMessage, type SendRequest } from "./messages";
import { sendAsNotificationBot } from "./notification-bot";

/** A request to an integration URL. */
export interface WebhookRequest extends WebhookPayload {
  integration: IntegrationName;
  /** A channel name or id; without one, the bot's owner (or the person whose key it is) gets a direct message. */
  stream?: string;
  /** Replaces the integration's topics. */
  topic?: string;
  onlyEvents?: string[];
  excludeEvents?: string[];
}

/** A key's owner hears of a URL's missing channel at most once in this many hours. */
const MISSING_CHANNEL_NOTICE_HOURS = 1;

/**
 * Zulip's webhook views and check_send_webhook_message: the integration makes messages of the
 * payload, those of event types the URL filters out are dropped, and the key's user (a bot, or
 * a person: any active user's key works, as in Zulip) sends the rest through the normal send
 * (every rule of a send applies) to the channel the URL names, or by direct message to the bot's
 * owner (a person's to themself) without one. A channel it cannot post to drops the messages
 * with a success, and the owner is told instead: the tool could only retry in vain. Returns how
 * many messages were sent.
 */
export async function doIncomingWebhook(deps: AppDeps, who: Identity, req: WebhookRequest): Promise<number> {
  const integration = INTEGRATIONS[req.integration];
  const wanted = (m: WebhookMessage) => m.eventType === undefined || eventWanted(m.eventType, req.onlyEvents, req.excludeEvents);
  const messages = integrationMessages(req.integration, req).filter(wanted);
  if (messages.length === 0) return 0;
  const to = req.stream !== undefined ? channelOf(req.stream) : await directTo(deps, who);
  // Messages show where they came from, as Zulip names a webhook's client.
  const sender: Identity = { ...who, client: `Zulip${integration.webhookName}Webhook` };
  let sent = 0;
  for (const m of messages) {
    const send: SendRequest = to.type === "stream" ? { ...to, topic: req.topic ?? m.topic, content: m.content } : { ...to, content: m.content };
    try {
      await doSendMessage(deps, sender, send);
    } catch (err) {
      if (req.stream === undefined || !(err instanceof ApiError) || err.code !== "STREAM_DOES_NOT_EXIST") throw err;
      await notifyMissingChannel(deps, who, req.integration, req.stream);
      return sent;
    }
    sent++;
  }
  return sent;
}

/** A channel by id when the parameter is all digits, else by name (Zulip's `stream.isdecimal()`). */
function channelOf(stream: string): { type: "stream"; to: string } {
  return { type: "stream", to: /^[0-9]+$/.test(stream) ? stream : JSON.stringify(stream) };
}

/** A bot's owner, or the person themself (Zulip has no one else to write to for a person's key). */
async function directTo(deps: AppDeps, who: Identity): Promise<{ type: "private"; to: string }> {
  const user = await getUser(deps, who.realmId, who.userId);
  const recipient = user?.isBot ? user.botOwnerId : who.userId;
  // A bot without an owner has nobody to tell: it must name a channel.
  if (recipient == null) throw missingParam("stream");
  return { type: "private", to: JSON.stringify([recipient]) };
}

/**
 * The notification bot tells the bot's owner (a person: themself) which channel the URL names
 * and how to fix it, at most once per MISSING_CHANNEL_NOTICE_HOURS per key's user; an ownerless
 * bot's messages are dropped unheard, as in Zulip.
 */
async function notifyMissingChannel(deps: AppDeps, who: Identity, name: IntegrationName, stream: string): Promise<void> {
  const user = await getUser(deps, who.realmId, who.userId);
  const recipient = user?.isBot ? user.botOwnerId : user?.id;
  if (!user || recipient == null) return;
  const now = deps.clock.now();
  const since = new Date(now.getTime() - MISSING_CHANNEL_NOTICE_HOURS * 3600_000);
  if (!(await claimMissingChannelNotice(deps.pool, who.realmId, who.userId, now, since))) return;
  const realm = await deps.accounts.getRealm(who.realmId);
  const display = INCOMING_WEBHOOK_INTEGRATIONS.find((i) => i.name === name)?.display_name ?? name;
  const holder = user.isBot ? { bot: { id: user.id, fullName: user.fullName } } : { self: true as const };
  const content = missingChannelNotice(holder, display, stream, MISSING_CHANNEL_NOTICE_HOURS);
  await sendAsNotificationBot(deps, realm, [{ userId: recipient, content }], "a missing channel notice");
}
