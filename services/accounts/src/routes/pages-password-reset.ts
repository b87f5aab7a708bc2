import type { FastifyInstance } from "fastify";
import type { AccountsDeps } from "../deps";

export function passwordResetPageRoutes(_app: FastifyInstance, _deps: AccountsDeps): void {}
