import { badRequest, missingParam, type Identity } from "@chat/platform";
import type { AppDeps } from "../deps";
import { eventWanted, INTEGRATIONS, type IntegrationName, type WebhookPayload } from "../lib/integrations";
import { getUser } from "../queries/users";
import { doSendMessage, type SendRequest } from "./messages";

/** A request to an integration URL. */
export interface WebhookRequest extends WebhookPayload {
  integration: IntegrationName;
  /** A channel name or id; without one, the bot's owner gets a direct message. */
  stream?: string;
  /** Replaces the integration's topics. */
  topic?: string;
  onlyEvents?: string[];
  excludeEvents?: string[];
}

/**
 * Zulip's webhook views and check_send_webhook_message: the integration makes messages of the
 * payload, those of event types the URL filters out are dropped, and the bot sends the rest
 * through the normal send (every rule of a send applies) to the channel the URL names, or to its
 * owner without one. Returns how many messages were sent.
 */
export async function doIncomingWebhook(deps: AppDeps, who: Identity, req: WebhookRequest): Promise<number> {
  if (!who.isBot) throw badRequest("Integration URLs take a bot's API key");
  const integration = INTEGRATIONS[req.integration];
  const messages = integration
    .messages(req)
    .filter((m) => m.eventType === undefined || eventWanted(m.eventType, req.onlyEvents, req.excludeEvents));
  if (messages.length === 0) return 0;
  const to = req.stream !== undefined ? channelOf(req.stream) : await ownerOf(deps, who);
  // Messages show where they came from, as Zulip names a webhook's client.
  const sender: Identity = { ...who, client: `Zulip${integration.webhookName}Webhook` };
  for (const m of messages) {
    const send: SendRequest = to.type === "stream" ? { ...to, topic: req.topic ?? m.topic, content: m.content } : { ...to, content: m.content };
    await doSendMessage(deps, sender, send);
  }
  return messages.length;
}

/** A channel by id when the parameter is all digits, else by name (Zulip's `stream.isdecimal()`). */
function channelOf(stream: string): { type: "stream"; to: string } {
  return { type: "stream", to: /^[0-9]+$/.test(stream) ? stream : JSON.stringify(stream) };
}

async function ownerOf(deps: AppDeps, who: Identity): Promise<{ type: "private"; to: string }> {
  const bot = await getUser(deps, who.realmId, who.userId);
  // A bot without an owner has nobody to tell: it must name a channel.
  if (bot?.botOwnerId == null) throw missingParam("stream");
  return { type: "private", to: JSON.stringify([bot.botOwnerId]) };
}
