import { inlineCode } from "./markdown";

/** Whose key the integration URL holds, as the notice names it. */
export type KeyHolder = { bot: { id: number; fullName: string } } | { self: true };

/**
 * The direct message the notification bot sends when an integration URL names a channel its
 * user cannot post to (missing, another organization's, or private without them): which URL,
 * which channel, and how to fix it. The notification itself is dropped.
 */
export function missingChannelNotice(holder: KeyHolder, integration: string, stream: string, intervalHours: number): string {
  const channel = /^[0-9]+$/.test(stream) ? `the channel with ID ${inlineCode(stream)}` : `the channel ${inlineCode(shorten(stream))}`;
  const who = "bot" in holder ? `your bot @_**${holder.bot.fullName}|${holder.bot.id}**` : "your API key";
  const start = "bot" in holder ? `A ${integration} notification for ${who}` : `A ${integration} notification sent with ${who}`;
  return (
    `${start} was dropped: its integration URL names ${channel} in \`stream\`, but no such channel exists that it may post to.\n\n` +
    `Create that channel${"bot" in holder ? " (and subscribe the bot if it is private)" : ""}, or change the URL's \`stream\` parameter to an existing channel's name or ID. ` +
    `Without \`stream\`, notifications come to you as direct messages. ` +
    `(This reminder comes at most ${intervalHours === 1 ? "once an hour" : `once every ${intervalHours} hours`}.)`
  );
}

/** No channel name is this long; a URL's may be anything. */
const shorten = (name: string) => (name.length > 100 ? `${name.slice(0, 100)}…` : name);
