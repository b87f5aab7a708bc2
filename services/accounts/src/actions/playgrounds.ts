import { AccountsPlaygroundsChanged } from "@chat/contracts";
import { badRequest, emitEvent, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AccountsDeps } from "../deps";
import { parseUrlTemplate } from "../lib/url-template";
import { exceeds } from "../lib/validate";
import { getPlaygrounds } from "../queries/playgrounds";
import { deletePlayground, insertPlayground, playgroundTaken } from "../store/playgrounds";
import { activeUserIds } from "../store/users";
import { requireRealmAdmin } from "./linkifiers";

/** Zulip's RealmPlayground.MAX_PYGMENTS_LANGUAGE_LENGTH. */
const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
/** What a code block's language may contain (Zulip's check_pygments_language; `+-.` is a range: + , - .). */
const PYGMENTS_LANGUAGE = /^[ a-zA-Z0-9_+-./#]*$/;
const BLANK = "This field cannot be blank.";

export interface PlaygroundValues {
  name: string;
  pygmentsLanguage: string;
  urlTemplate: string;
}

/**
 * Zulip's RealmPlayground.full_clean: field errors in the model's field order (url_template,
 * name, pygments_language), then clean()'s template variables under `__all__` (only for a
 * template that parses). Returns every error by field; empty when the playground is valid.
 */
export function playgroundErrors(v: PlaygroundValues): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, msg: string) => (errors[field] ??= []).push(msg);
  const vars = parseUrlTemplate(v.urlTemplate);
  if (!v.urlTemplate) add("url_template", BLANK);
  else if (vars === null) add("url_template", "Invalid URL template.");
  if (!v.name) add("name", BLANK);
  if (!v.pygmentsLanguage) add("pygments_language", BLANK);
  else {
    const length = [...v.pygmentsLanguage].length;
    if (length > MAX_PYGMENTS_LANGUAGE_LENGTH) add("pygments_language", `Ensure this value has at most ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters (it has ${length}).`);
    if (!PYGMENTS_LANGUAGE.test(v.pygmentsLanguage)) add("pygments_language", "Invalid characters in pygments language");
  }
  if (vars !== null) {
    const names = new Set(vars);
    if (!names.has("code")) add("__all__", 'Missing the required variable "code" in the URL template');
    else if (names.size !== 1) add("__all__", '"code" should be the only variable present in the URL template');
  }
  return errors;
}

/** Zulip's ValidationFailureError: the first message, and every message by field in `errors`. */
function validationFailure(errors: Record<string, string[]>) {
  return badRequest(Object.values(errors)[0][0], { errors });
}

/** Every change sends the whole list to the organization's active users (Zulip's notify_realm_playgrounds). */
async function notifyPlaygrounds(tx: Queryable, realmId: number): Promise<void> {
  const playgrounds = await getPlaygrounds(tx, realmId);
  const users = await activeUserIds(tx, realmId);
  await emitEvent(tx, {
    type: "accounts.playgrounds.changed",
    realmId,
    payload: AccountsPlaygroundsChanged.parse({ client: { event: { type: "realm_playgrounds", realm_playgrounds: playgrounds }, users } }),
  });
}

/** Changes under the organization's lock, so that each whole-list event follows the one before. */
function changePlaygrounds<T>(deps: AccountsDeps, realmId: number, change: (tx: Queryable) => Promise<T>): Promise<T> {
  return withTx(deps.pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('accounts.playgrounds'), $1::int)", [realmId]);
    const value = await change(tx);
    await notifyPlaygrounds(tx, realmId);
    return value;
  });
}

/**
 * POST /realm/playgrounds (Zulip's add_realm_playground): the language's characters are checked
 * as sent, then the values are stripped and validated as the model's full_clean does.
 */
export async function doAddPlayground(deps: AccountsDeps, who: Identity, name: string, pygmentsLanguage: string, urlTemplate: string): Promise<number> {
  requireRealmAdmin(who);
  if (!PYGMENTS_LANGUAGE.test(pygmentsLanguage)) throw badRequest("Invalid characters in pygments language");
  const values = { name: name.trim(), pygmentsLanguage: pygmentsLanguage.trim(), urlTemplate: urlTemplate.trim() };
  const errors = playgroundErrors(values);
  const uniqueChecked = !errors.name && !errors.pygments_language;
  return changePlaygrounds(deps, who.realmId, async (tx) => {
    // Django's unique_together check, only when both of its fields are valid.
    if (uniqueChecked && (await playgroundTaken(tx, who.realmId, values.pygmentsLanguage, values.name))) {
      (errors.__all__ ??= []).push("Realm playground with this Realm, Pygments language and Name already exists.");
    }
    if (Object.keys(errors).length) throw validationFailure(errors);
    return (await insertPlayground(tx, who.realmId, values.name, values.pygmentsLanguage, values.urlTemplate)).id;
  });
}

/** DELETE /realm/playgrounds/{id}: another organization's playground is as unknown as a missing one. */
export async function doRemovePlayground(deps: AccountsDeps, who: Identity, id: number): Promise<void> {
  requireRealmAdmin(who);
  await changePlaygrounds(deps, who.realmId, async (tx) => {
    if (!(await deletePlayground(tx, who.realmId, id))) throw badRequest("Invalid playground");
  });
}
