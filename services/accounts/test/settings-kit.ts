import {
  AlertWordsEvent,
  CustomProfileFieldsEvent,
  RealmBotClientEvent,
  RealmUpdateDictEvent,
  RealmUpdateEvent,
  RealmUserSettingsDefaultsUpdateEvent,
  RealmUserUpdatePersonEvent,
  UpdateDisplaySettingsEvent,
  UpdateGlobalNotificationsEvent,
  UserGroupMembersEvent,
  UserSettingsUpdateEvent,
} from "@chat/contracts";
import type { Identity } from "@chat/platform";
import { expect } from "vitest";
import type { z } from "zod";
import type { Accounts, Org, TestUser } from "./helpers";

/** Client event schemas of issue 10 (and the ones its actions also emit), by event type. */
const CLIENT_EVENT_SCHEMAS: Record<string, z.ZodType> = {
  user_settings: UserSettingsUpdateEvent,
  update_display_settings: UpdateDisplaySettingsEvent,
  update_global_notifications: UpdateGlobalNotificationsEvent,
  realm_user_settings_defaults: RealmUserSettingsDefaultsUpdateEvent,
  realm: RealmUpdateEvent.or(RealmUpdateDictEvent),
  alert_words: AlertWordsEvent,
  custom_profile_fields: CustomProfileFieldsEvent,
  user_group: UserGroupMembersEvent,
  realm_bot: RealmBotClientEvent,
};

export interface Notice {
  /** Domain event type. */
  type: string;
  event: Record<string, any>;
  users: number[];
  payload: Record<string, any>;
}

/**
 * Client notices written to the outbox since the last call, each client event checked against
 * its contract (strictly: an undeclared key fails).
 */
export async function notices(t: Accounts): Promise<Notice[]> {
  const rows = await t.outbox();
  const out: Notice[] = [];
  for (const row of rows) {
    const client = row.payload.client;
    if (!client) continue;
    const event = client.event;
    const schema = event.type === "realm_user" && event.op === "update" ? RealmUserUpdatePersonEvent : CLIENT_EVENT_SCHEMAS[event.type];
    if (schema) {
      const check = schema.safeParse(event);
      expect(check.success, `${event.type}: ${JSON.stringify(check.error?.issues)} in ${JSON.stringify(event)}`).toBe(true);
    }
    out.push({ type: row.type, event, users: [...client.users].sort((a: number, b: number) => a - b), payload: row.payload });
  }
  return out;
}

/** Ids of a test org's active users (the audience of realm-wide events), sorted. */
export function everyone(org: Org, extra: TestUser[] = []): number[] {
  return [org.owner, org.admin, org.moderator, org.member, org.member2, org.guest, org.bot, ...extra].map((u) => u.user_id).sort((a, b) => a - b);
}

/** The accounts slice of register for one user. */
export async function registerState(t: Accounts, as: Identity, params: Record<string, unknown> = {}) {
  return t.ok(await t.call("POST", "/internal/register_state/accounts", { as, params }));
}

/** A multipart body with one part per file, for upload routes. */
export function multipart(files: Array<{ name: string; filename: string; type: string; data: Buffer }>) {
  const boundary = `----kit${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.filename}"\r\nContent-Type: ${f.type}\r\n\r\n`));
    parts.push(f.data, Buffer.from("\r\n"));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A tiny valid PNG (1x1). */
export const PNG_1X1 = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" + "1f15c4890000000d4944415478da63f8cfc0f01f0005000201ab0f9e" + "0b0000000049454e44ae426082",
  "hex",
);
