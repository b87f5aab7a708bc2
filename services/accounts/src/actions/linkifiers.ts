import { ApiError, badRequest, emitEvent, outboxPublished, withTx, type Identity, type Queryable } from "@chat/platform";
import { RE2JS } from "re2js";
import type { AccountsDeps } from "../deps";
import { ROLE } from "../lib/format";
import { parseUrlTemplate } from "../lib/url-template";
import { deleteLinkifier, insertLinkifier, listLinkifiers, patternTaken, setLinkifierPositions, updateLinkifier } from "../store/linkifiers";
import { activeUserIds } from "../store/users";

export function requireRealmAdmin(who: Identity): void {
  if (who.role > ROLE.administrator) throw new ApiError("UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
}

const validationError = (field: string, msg: string) => badRequest(msg, { errors: { [field]: [msg] } });

/**
 * Patterns are RE2 syntax, compiled by a linear-time engine (re2js): no backreferences or
 * lookaround, so no pattern can backtrack catastrophically when messages are rendered.
 * Every template variable must be a named group of the pattern and vice versa.
 */
export function checkLinkifier(pattern: string, urlTemplate: string): void {
  let groups: string[];
  try {
    groups = Object.keys(RE2JS.compile(pattern).namedGroups());
  } catch (err) {
    const detail = String((err as Error).message ?? err).replace(/^error parsing regexp:\s*/, "");
    throw validationError("pattern", `Bad regular expression: ${detail}`);
  }
  if (!pattern) throw validationError("pattern", "This field cannot be blank.");
  if (!urlTemplate) throw validationError("url_template", "This field cannot be blank.");
  const vars = parseUrlTemplate(urlTemplate);
  if (vars === null) throw validationError("url_template", "Invalid URL template.");
  const missingInPattern = [...new Set(vars)].filter((v) => !groups.includes(v)).sort();
  if (missingInPattern.length) throw validationError("__all__", `Group '${missingInPattern[0]}' in URL template is not present in linkifier pattern.`);
  const missingInUrl = groups.filter((g) => !vars.includes(g)).sort();
  if (missingInUrl.length) throw validationError("__all__", `Group '${missingInUrl[0]}' in linkifier pattern is not present in URL template.`);
}

/** Every change sends the whole ordered list to the organization (Zulip's realm_linkifiers). */
async function notifyLinkifiers(tx: Queryable, realmId: number): Promise<void> {
  const linkifiers = (await listLinkifiers(tx, realmId)).map((l) => ({ id: l.id, pattern: l.pattern, url_template: l.urlTemplate }));
  const users = await activeUserIds(tx, realmId);
  await emitEvent(tx, {
    type: "accounts.linkifiers.changed",
    realmId,
    payload: { linkifiers, client: { event: { type: "realm_linkifiers", realm_linkifiers: linkifiers }, users } },
  });
}

/**
 * Changes the organization's linkifiers under its lock and announces the new list. Answers once
 * the announcement is published: messaging renders with a cached copy that it drops when the
 * announcement reaches it, so the client's next message already uses the new list.
 */
async function changeLinkifiers<T>(deps: AccountsDeps, realmId: number, change: (tx: Queryable) => Promise<T>): Promise<T> {
  const result = await withTx(deps.pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.linkifiers'), $1::int)", [realmId]);
    const value = await change(tx);
    await notifyLinkifiers(tx, realmId);
    return value;
  });
  await outboxPublished();
  return result;
}

const duplicate = () => validationError("__all__", "Linkifier with this Realm and Pattern already exists.");

/** Both are stored without surrounding spaces, as Zulip stores them. */
export async function doAddLinkifier(deps: AccountsDeps, who: Identity, rawPattern: string, rawUrlTemplate: string): Promise<number> {
  requireRealmAdmin(who);
  const [pattern, urlTemplate] = [rawPattern.trim(), rawUrlTemplate.trim()];
  checkLinkifier(pattern, urlTemplate);
  return changeLinkifiers(deps, who.realmId, async (tx) => {
    if (await patternTaken(tx, who.realmId, pattern, null)) throw duplicate();
    return (await insertLinkifier(tx, who.realmId, pattern, urlTemplate)).id;
  });
}

export async function doUpdateLinkifier(deps: AccountsDeps, who: Identity, id: number, rawPattern: string, rawUrlTemplate: string): Promise<void> {
  requireRealmAdmin(who);
  const [pattern, urlTemplate] = [rawPattern.trim(), rawUrlTemplate.trim()];
  await changeLinkifiers(deps, who.realmId, async (tx) => {
    if (!(await listLinkifiers(tx, who.realmId)).some((l) => l.id === id)) throw badRequest("Linkifier not found.");
    checkLinkifier(pattern, urlTemplate);
    if (await patternTaken(tx, who.realmId, pattern, id)) throw duplicate();
    await updateLinkifier(tx, who.realmId, id, pattern, urlTemplate);
  });
}

export async function doRemoveLinkifier(deps: AccountsDeps, who: Identity, id: number): Promise<void> {
  requireRealmAdmin(who);
  await changeLinkifiers(deps, who.realmId, async (tx) => {
    if (!(await deleteLinkifier(tx, who.realmId, id))) throw badRequest("Linkifier not found.");
  });
}

/**
 * PATCH /realm/linkifiers: a repeated id and a list that is not exactly the organization's
 * linkifiers are refused with Zulip's two messages; with no linkifiers at all (and an empty
 * list) nothing changes and nobody is told.
 */
export async function doReorderLinkifiers(deps: AccountsDeps, who: Identity, orderedIds: number[]): Promise<void> {
  requireRealmAdmin(who);
  const given = new Set(orderedIds);
  if (given.size < orderedIds.length) throw badRequest("The ordered list must not contain duplicated linkifiers");
  const checkOrder = async (tx: Queryable) => {
    const existing = new Set((await listLinkifiers(tx, who.realmId)).map((l) => l.id));
    if (given.size !== existing.size || orderedIds.some((id) => !existing.has(id))) {
      throw badRequest("The ordered list must enumerate all existing linkifiers exactly once");
    }
    return existing.size;
  };
  if ((await checkOrder(deps.pool)) === 0) return;
  await changeLinkifiers(deps, who.realmId, async (tx) => {
    await checkOrder(tx);
    await setLinkifierPositions(tx, who.realmId, orderedIds);
  });
}
