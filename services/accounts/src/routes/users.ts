import { CreateUser, DeactivateOwnUser, GetOwnUser, GetUser, GetUserByEmail, GetUsers, RegenerateOwnApiKey } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doCreateUserByAdmin, doDeactivateOwnUser, doRegenerateOwnApiKey } from "../actions/users";
import type { AccountsDeps } from "../deps";
import { getMember, getMemberByEmail, getOwnUser, getRealmMembers } from "../queries/users";

export function userRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, GetOwnUser, ({ identity }) => getOwnUser(deps, identity));

  registerRoute(app, GetUsers, ({ identity, params }) =>
    getRealmMembers(deps, identity, params.client_gravatar, params.include_custom_profile_fields),
  );

  registerRoute(app, GetUser, async ({ identity, params }) => ({
    user: await getMember(deps, identity, params.user_id, params.client_gravatar, params.include_custom_profile_fields),
  }));

  registerRoute(app, GetUserByEmail, async ({ identity, params }) => ({
    user: await getMemberByEmail(deps, identity, params.email, params.client_gravatar, params.include_custom_profile_fields),
  }));

  registerRoute(app, CreateUser, async ({ identity, params }) => {
    const user = await doCreateUserByAdmin(deps, identity, { email: params.email, password: params.password, fullName: params.full_name });
    return { user_id: user.id };
  });

  registerRoute(app, RegenerateOwnApiKey, async ({ identity }) => ({ api_key: await doRegenerateOwnApiKey(deps, identity) }));

  registerRoute(app, DeactivateOwnUser, async ({ identity }) => {
    await doDeactivateOwnUser(deps, identity);
    return {};
  });
}
