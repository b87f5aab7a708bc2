import { AddAlertWords, GetAlertWords, RemoveAlertWords } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { FastifyInstance } from "fastify";
import { doAddAlertWords, doRemoveAlertWords } from "../actions/alert-words";
import type { AccountsDeps } from "../deps";
import { getAlertWords } from "../queries/alert-words";

export function alertWordRoutes(app: FastifyInstance, deps: AccountsDeps): void {
  registerRoute(app, GetAlertWords, async ({ identity }) => ({ alert_words: await getAlertWords(deps, identity) }));
  registerRoute(app, AddAlertWords, async ({ identity, params }) => ({ alert_words: await doAddAlertWords(deps, identity, params.alert_words) }));
  registerRoute(app, RemoveAlertWords, async ({ identity, params }) => ({
    alert_words: await doRemoveAlertWords(deps, identity, params.alert_words),
  }));
}
