import type { Linkifier } from "@chat/contracts";
import type { AccountsDeps } from "../deps";
import { listLinkifiers } from "../store/linkifiers";

export async function getLinkifiers(deps: AccountsDeps, realmId: number): Promise<Linkifier[]> {
  return (await listLinkifiers(deps.pool, realmId)).map((l) => ({ id: l.id, pattern: l.pattern, url_template: l.urlTemplate }));
}
