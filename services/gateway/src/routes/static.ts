import type { FastifyInstance, RouteOptions } from "fastify";
import { DEFAULT_LOGO_PATH, EMOJI_DATA_PATH, emojiCodeToNames, INACCESSIBLE_USER_AVATAR_PATH, SYSTEM_BOT_AVATAR_PATH } from "@chat/contracts";
import { botAvatarPng } from "../bot-avatar";
import { unknownUserAvatarPng } from "../unknown-user-avatar";

/**
 * The server's own files that register points clients at, public as in Zulip: the emoji names
 * by code (`server_emoji_data_url`), which clients fetch to offer emoji by name, and the
 * organization logo shown until one is uploaded (`realm_logo_url`), the Notification Bot's
 * avatar (its `avatar_url` in `cross_realm_bots` and on its messages), and the "Unknown user"
 * stand-in's (what a guest sees of a user they may not access).
 */
export async function staticRoutes(app: FastifyInstance, opts: { compress: NonNullable<RouteOptions["compress"]> }): Promise<void> {
  let emojiData: string | undefined;
  // About 200 KB of JSON: compressed for clients that accept it, as the API's answers are.
  app.get(EMOJI_DATA_PATH, { compress: opts.compress }, async (_req, reply) => {
    emojiData ??= JSON.stringify({ code_to_names: emojiCodeToNames() });
    return reply.type("application/json").header("cache-control", "public, max-age=86400").send(emojiData);
  });
  app.get(DEFAULT_LOGO_PATH.split("?")[0], async (_req, reply) =>
    reply.type("image/svg+xml").header("cache-control", "public, max-age=86400").send(DEFAULT_LOGO_SVG),
  );
  let botAvatar: Buffer | undefined;
  app.get(SYSTEM_BOT_AVATAR_PATH, async (_req, reply) => {
    botAvatar ??= botAvatarPng();
    return reply.type("image/png").header("cache-control", "public, max-age=86400").send(botAvatar);
  });
  let unknownAvatar: Buffer | undefined;
  app.get(INACCESSIBLE_USER_AVATAR_PATH, async (_req, reply) => {
    unknownAvatar ??= unknownUserAvatarPng();
    return reply.type("image/png").header("cache-control", "public, max-age=86400").send(unknownAvatar);
  });
}

/** A speech bubble on a rounded square: the default organization logo. */
const DEFAULT_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
<rect width="64" height="64" rx="14" fill="#4a6fa5"/>
<path d="M14 18h36a4 4 0 0 1 4 4v18a4 4 0 0 1-4 4H30l-10 8v-8h-6a4 4 0 0 1-4-4V22a4 4 0 0 1 4-4z" fill="#fff"/>
</svg>
`;
