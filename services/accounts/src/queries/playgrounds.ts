import type { RealmPlayground } from "@chat/contracts";
import type { Queryable } from "@chat/platform";
import { listPlaygrounds } from "../store/playgrounds";

/** The organization's code playgrounds, oldest first (register's and the event's `realm_playgrounds`). */
export async function getPlaygrounds(db: Queryable, realmId: number): Promise<RealmPlayground[]> {
  return (await listPlaygrounds(db, realmId)).map((p) => ({ id: p.id, name: p.name, pygments_language: p.pygmentsLanguage, url_template: p.urlTemplate }));
}
