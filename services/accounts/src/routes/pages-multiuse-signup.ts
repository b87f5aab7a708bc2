import type { FastifyInstance } from "fastify";
import type { AccountsDeps } from "../deps";

export function multiuseSignupPageRoutes(_app: FastifyInstance, _deps: AccountsDeps): void {}
