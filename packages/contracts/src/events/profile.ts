import { z } from "zod";

/**
 * Client event `realm_user` / update with every `person` form of spec section 6: `user_id`
 * plus the one group of fields that changed. Published in `accounts.user.updated` domain events
 * (whose `user` is the whole new summary, for the services' replicas).
 */
const id = { user_id: z.number().int() };
export const RealmUserPerson = z.union([
  z.strictObject({ ...id, full_name: z.string() }),
  z.strictObject({
    ...id,
    avatar_url: z.string(),
    avatar_source: z.enum(["G", "U"]),
    avatar_url_medium: z.string(),
    avatar_version: z.number().int(),
  }),
  z.strictObject({ ...id, email: z.string(), timezone: z.string() }),
  z.strictObject({ ...id, bot_owner_id: z.number().int() }),
  z.strictObject({ ...id, role: z.number().int() }),
  z.strictObject({ ...id, is_billing_admin: z.boolean() }),
  z.strictObject({ ...id, delivery_email: z.string().nullable() }),
  z.strictObject({
    ...id,
    custom_profile_field: z.strictObject({ id: z.number().int(), value: z.string().nullable(), rendered_value: z.string().optional() }),
  }),
  z.strictObject({ ...id, new_email: z.string() }),
  z.strictObject({ ...id, is_active: z.boolean() }),
]);
export const RealmUserUpdatePersonEvent = z.strictObject({
  type: z.literal("realm_user"),
  op: z.literal("update"),
  person: RealmUserPerson,
});
export type RealmUserUpdatePersonEvent = z.infer<typeof RealmUserUpdatePersonEvent>;
