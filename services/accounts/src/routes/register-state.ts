import { AccountsRegisterState } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import type { AccountsDeps } from "../deps";
import { getRegisterState } from "../queries/register-state";

export function registerStateRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, AccountsRegisterState, ({ identity, params }) => getRegisterState(deps, identity, params));
}
