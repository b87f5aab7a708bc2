import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/** Field types: 1 short text, 2 long text, 3 list of options, 4 date, 5 link, 6 users, 7 external account, 8 pronouns. */
export const CUSTOM_PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: 1, name: "Text (short)" },
  LONG_TEXT: { id: 2, name: "Text (long)" },
  SELECT: { id: 3, name: "List of options" },
  DATE: { id: 4, name: "Date picker" },
  URL: { id: 5, name: "Link" },
  USER: { id: 6, name: "Person picker" },
  EXTERNAL_ACCOUNT: { id: 7, name: "External account" },
  PRONOUNS: { id: 8, name: "Pronouns" },
} as const;

/** A custom profile field as clients see it. `field_data` is JSON text ("" when unused). */
export const CustomProfileField = z.strictObject({
  id: z.number().int(),
  type: z.number().int(),
  order: z.number().int(),
  name: z.string(),
  hint: z.string(),
  field_data: z.string(),
  /** Only present when true. */
  display_in_profile_summary: z.literal(true).optional(),
  required: z.boolean(),
});
export type CustomProfileField = z.infer<typeof CustomProfileField>;

/** A user's value for one field; `rendered_value` for the Markdown (text) types only. */
export const ProfileDataValue = z.strictObject({ value: z.string(), rendered_value: z.string().optional() });
/** `profile_data` of a user object: field id (as a string) -> value. */
export const ProfileData = z.record(z.string(), ProfileDataValue);

/** Options of a "list of options" field, or an external account's subtype (JSON object). */
const FieldData = z.record(z.string(), z.unknown());

export const GetCustomProfileFields = route({
  method: "GET",
  path: "/realm/profile_fields",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ custom_fields: z.array(CustomProfileField) }),
});

export const CreateCustomProfileField = route({
  method: "POST",
  path: "/realm/profile_fields",
  service: "accounts",
  auth: "user",
  params: {
    name: p.str().default(""),
    hint: p.str().default(""),
    field_type: p.int().required(),
    field_data: p.json(FieldData).default({}),
    display_in_profile_summary: p.bool().default(false),
    required: p.bool().default(false),
  },
  response: success({ id: z.number().int() }),
});

/** Every field id of the organization exactly once, in the new order. */
export const ReorderCustomProfileFields = route({
  method: "PATCH",
  path: "/realm/profile_fields",
  service: "accounts",
  auth: "user",
  params: { order: p.json(z.array(z.number().int())).required() },
  response: empty,
});

export const UpdateCustomProfileField = route({
  method: "PATCH",
  path: "/realm/profile_fields/{field_id}",
  service: "accounts",
  auth: "user",
  params: {
    field_id: p.int().path(),
    name: p.str(),
    hint: p.str(),
    field_data: p.json(FieldData),
    display_in_profile_summary: p.bool(),
    required: p.bool(),
  },
  response: empty,
});

export const DeleteCustomProfileField = route({
  method: "DELETE",
  path: "/realm/profile_fields/{field_id}",
  service: "accounts",
  auth: "user",
  params: { field_id: p.int().path() },
  response: empty,
});

/** A value for one field: text, or a list of user ids for person-picker fields. Empty removes it. */
export const ProfileDataUpdate = z.strictObject({
  id: z.number().int(),
  value: z.union([z.string(), z.array(z.number().int())]).nullable(),
});

export const UpdateOwnProfileData = route({
  method: "PATCH",
  path: "/users/me/profile_data",
  service: "accounts",
  auth: "user",
  params: { data: p.json(z.array(ProfileDataUpdate)).required() },
  response: empty,
});

export const RemoveOwnProfileData = route({
  method: "DELETE",
  path: "/users/me/profile_data",
  service: "accounts",
  auth: "user",
  params: { data: p.json(z.array(z.number().int())).required() },
  response: empty,
});
