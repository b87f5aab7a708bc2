import type { WebhookMessage } from "./payload";

/** Zulip's JSON formatter: any JSON payload, pretty-printed in a code block, in the topic "JSON". */
export function formatJson(payload: unknown): WebhookMessage[] {
  return [{ topic: "JSON", content: "```json\n" + JSON.stringify(payload, null, 2) + "\n```" }];
}
