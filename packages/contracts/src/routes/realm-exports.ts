import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/**
 * A data export of an organization (Zulip's RealmExport at feature level 267: public data only,
 * so no `export_type`). `pending` while it is being made; then either `export_url` (until it is
 * deleted) or `failed_timestamp`.
 */
export const RealmExport = z.strictObject({
  id: z.number().int(),
  acting_user_id: z.number().int(),
  /** When it was asked for (Unix seconds, fractional). */
  export_time: z.number(),
  deleted_timestamp: z.number().nullable(),
  failed_timestamp: z.number().nullable(),
  export_url: z.string().nullable(),
  pending: z.boolean(),
});
export type RealmExport = z.infer<typeof RealmExport>;

/** Every export of the organization, oldest first; administrators only. */
export const GetRealmExports = route({
  method: "GET",
  path: "/export/realm",
  service: "messaging",
  auth: "user",
  params: {},
  response: success({ exports: z.array(RealmExport) }),
});

/** Starts a public data export (made in the background; `realm_export` events tell its progress). */
export const CreateRealmExport = route({
  method: "POST",
  path: "/export/realm",
  service: "messaging",
  auth: "user",
  params: {},
  response: success({ id: z.number().int() }),
});

/** Deletes a finished export's file; the export stays listed with its `deleted_timestamp`. */
export const DeleteRealmExport = route({
  method: "DELETE",
  path: "/export/realm/{export_id}",
  service: "messaging",
  auth: "user",
  params: { export_id: p.int().path() },
  response: empty,
});

/**
 * The export's file. Public like Zulip's export URLs (served from its avatar storage): the
 * path carries a random token, and only administrators ever see it.
 */
export const DownloadRealmExport = route({
  method: "GET",
  path: "/user_avatars/exports/{realm_id_str}/{token}/{filename}",
  service: "messaging",
  auth: "none",
  params: { realm_id_str: p.str().path(), token: p.str().path(), filename: p.str().path() },
  response: z.any(),
});

/**
 * The operator's export of an organization (`chat org export`): the same archive, streamed back
 * at once, without the limits of the API's exports (Zulip's manual export for large organizations).
 */
export const InternalExportRealm = route({
  method: "GET",
  path: "/internal/realms/{realm_id}/export",
  service: "messaging",
  auth: "internal",
  params: { realm_id: p.int().path() },
  response: z.any(),
});
