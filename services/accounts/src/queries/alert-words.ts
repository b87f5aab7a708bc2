import type { Identity } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { listAlertWords } from "../store/alert-words";

export async function getAlertWords(deps: AccountsDeps, who: Identity): Promise<string[]> {
  return listAlertWords(deps.pool, who.realmId, who.userId);
}
