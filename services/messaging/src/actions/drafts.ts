import { directMessageTo, MAX_TOPIC_LENGTH, MessagingDraftRemoved, MessagingDraftsAdded, MessagingDraftUpdated, type DraftInput, type DraftObject } from "@chat/contracts";
import { badRequest, emitEvent, resourceNotFound, withTx, type Identity, type Queryable } from "@chat/platform";
import type { AppDeps } from "../deps";
import { normalizeBody, truncate } from "../lib/normalize";
import { accessStreamById, viewerOf } from "../queries/streams";
import { checkDraftsSynchronization } from "../queries/user-settings";
import { getUsersByIds } from "../queries/users";
import { deleteDraft, draftExists, insertDraft, updateDraft, type DraftRow, type DraftValues } from "../store/drafts";

export function draftObject(d: DraftRow): DraftObject {
  return { id: d.id, type: d.type, to: d.to, topic: d.topic, content: d.content, timestamp: Math.floor(d.lastEditTime.getTime() / 1000) };
}

/** Spec 2.4's checks; returns what is stored. */
async function validateDraft(deps: AppDeps, who: Identity, d: DraftInput): Promise<DraftValues> {
  const content = normalizeBody(d.content);
  const seconds = d.timestamp ?? deps.clock.now().getTime() / 1000;
  if (seconds < 0) throw badRequest("Timestamp must not be negative.");
  // Past JavaScript's last date (year 275760) there is no time to store.
  if (Number.isNaN(new Date(Math.round(seconds * 1000)).getTime())) throw badRequest("Timestamp is out of range.");
  let topic = "";
  let to: number[] = [];
  if (d.type === "stream") {
    topic = truncate(d.topic, MAX_TOPIC_LENGTH, "...");
    if (topic.includes("\u0000")) throw badRequest("Topic must not contain null bytes");
    if (d.to.length !== 1) throw badRequest("Must specify exactly 1 channel ID for channel messages");
    await accessStreamById(deps.pool, viewerOf(who), d.to[0]);
    to = d.to;
  } else if (d.type === "private") {
    const users = await getUsersByIds(deps, who.realmId, d.to);
    const missing = d.to.find((id) => !users.has(id));
    if (missing !== undefined) throw badRequest(`Invalid user ID ${missing}`);
    // Zulip resolves a direct draft's conversation as a send would: a deactivated participant refuses it.
    const inactive = d.to.map((id) => users.get(id)!).find((u) => !u.isActive);
    if (inactive) throw badRequest(`'${inactive.email}' is no longer using Zulip.`);
    to = directMessageTo(who.userId, d.to);
  }
  // A direct draft to nobody has no recipient, which Zulip shows as type "" (Draft.to_dict).
  const type = d.type === "private" && to.length === 0 ? "" : d.type;
  return { type, to, topic, content, lastEditTime: new Date(Math.round(seconds * 1000)) };
}

async function notify(tx: Queryable, realmId: number, userId: number, type: string, event: Record<string, unknown>): Promise<void> {
  const schema = type === "messaging.draft.added" ? MessagingDraftsAdded : type === "messaging.draft.updated" ? MessagingDraftUpdated : MessagingDraftRemoved;
  await emitEvent(tx, { type, realmId, payload: schema.parse({ user_id: userId, client: { event, users: [userId] } }) });
}

/** POST /drafts: ids in submission order. */
export async function doCreateDrafts(deps: AppDeps, who: Identity, drafts: DraftInput[]): Promise<number[]> {
  await checkDraftsSynchronization(deps, who);
  const values: DraftValues[] = [];
  for (const d of drafts) values.push(await validateDraft(deps, who, d));
  return withTx(deps.pool, async (tx) => {
    const rows: DraftRow[] = [];
    for (const v of values) rows.push(await insertDraft(tx, who.realmId, who.userId, v));
    if (rows.length > 0) await notify(tx, who.realmId, who.userId, "messaging.draft.added", { type: "drafts", op: "add", drafts: rows.map(draftObject) });
    return rows.map((r) => r.id);
  });
}

/** PATCH /drafts/{id}: another user's draft is as missing as a deleted one. */
export async function doEditDraft(deps: AppDeps, who: Identity, id: number, draft: DraftInput): Promise<void> {
  await checkDraftsSynchronization(deps, who);
  // A missing draft answers 404 whatever the new content (Zulip looks the draft up first).
  if (!(await draftExists(deps.pool, who.realmId, who.userId, id))) throw resourceNotFound("Draft does not exist");
  const values = await validateDraft(deps, who, draft);
  await withTx(deps.pool, async (tx) => {
    const row = await updateDraft(tx, who.realmId, who.userId, id, values);
    if (!row) throw resourceNotFound("Draft does not exist");
    await notify(tx, who.realmId, who.userId, "messaging.draft.updated", { type: "drafts", op: "update", draft: draftObject(row) });
  });
}

export async function doDeleteDraft(deps: AppDeps, who: Identity, id: number): Promise<void> {
  await checkDraftsSynchronization(deps, who);
  await withTx(deps.pool, async (tx) => {
    if (!(await deleteDraft(tx, who.realmId, who.userId, id))) throw resourceNotFound("Draft does not exist");
    await notify(tx, who.realmId, who.userId, "messaging.draft.removed", { type: "drafts", op: "remove", draft_id: id });
  });
}
