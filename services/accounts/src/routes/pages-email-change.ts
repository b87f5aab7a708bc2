import type { FastifyInstance } from "fastify";
import type { AccountsDeps } from "../deps";

export function emailChangePageRoutes(_app: FastifyInstance, _deps: AccountsDeps): void {}
