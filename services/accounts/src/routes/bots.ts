import { CreateBot, DeactivateBot, GetBots, GetOwnBots, RegenerateBotApiKey, UpdateBot } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doCreateBot, doDeactivateBot, doRegenerateBotApiKey, doUpdateBot } from "../actions/bots";
import type { AccountsDeps } from "../deps";
import { avatarUrl } from "../lib/avatar";
import { getOwnBots } from "../queries/bots";

export function botRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, CreateBot, async ({ identity, params }) => {
    const { bot, apiKey } = await doCreateBot(deps, identity, {
      fullName: params.full_name,
      shortName: params.short_name,
      botType: params.bot_type,
      payloadUrl: params.payload_url,
      interfaceType: params.interface_type,
      serviceName: params.service_name,
    });
    return {
      user_id: bot.id,
      api_key: apiKey,
      avatar_url: avatarUrl(bot, { clientGravatar: false })!,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    };
  });

  registerRoute(app, GetBots, async ({ identity }) => ({ bots: await getOwnBots(deps, identity) }));
  registerRoute(app, GetOwnBots, async ({ identity }) => ({ bots: await getOwnBots(deps, identity) }));

  registerRoute(app, UpdateBot, async ({ identity, params }) => {
    const { bot, ownerEmail, service } = await doUpdateBot(deps, identity, params.bot_id, {
      fullName: params.full_name,
      botOwnerId: params.bot_owner_id,
      role: params.role,
      servicePayloadUrl: params.service_payload_url,
      serviceInterface: params.service_interface,
    });
    return {
      full_name: bot.fullName,
      avatar_url: avatarUrl(bot, { clientGravatar: false })!,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
      service_interface: service?.interface ?? null,
      service_payload_url: service?.baseUrl ?? null,
      config_data: null,
      ...(ownerEmail ? { bot_owner: ownerEmail } : {}),
    };
  });

  registerRoute(app, DeactivateBot, async ({ identity, params }) => {
    await doDeactivateBot(deps, identity, params.bot_id);
    return {};
  });

  registerRoute(app, RegenerateBotApiKey, async ({ identity, params }) => ({ api_key: await doRegenerateBotApiKey(deps, identity, params.bot_id) }));
}
