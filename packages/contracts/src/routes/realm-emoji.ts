import { z } from "zod";
import { p } from "../params";
import { empty, route, success } from "../route";

/**
 * A custom emoji as clients see it (GET /realm/emoji, register's `realm_emoji`, `realm_emoji`
 * events), keyed by its id as a string. Deactivated ones stay listed (old reactions use them).
 * `still_url` is a still image of an animated emoji, else null.
 */
export const RealmEmoji = z.strictObject({
  id: z.string(),
  name: z.string(),
  source_url: z.string(),
  still_url: z.string().nullable(),
  deactivated: z.boolean(),
  author_id: z.number().int().nullable(),
});
export type RealmEmoji = z.infer<typeof RealmEmoji>;

export const RealmEmojiDict = z.record(z.string(), RealmEmoji);
export type RealmEmojiDict = z.infer<typeof RealmEmojiDict>;

export const GetRealmEmoji = route({
  method: "GET",
  path: "/realm/emoji",
  service: "messaging",
  auth: "user",
  params: {},
  response: success({ emoji: RealmEmojiDict }),
});

/** Multipart, exactly one image file part (any field name); at most 5 MiB. */
export const UploadRealmEmoji = route({
  method: "POST",
  path: "/realm/emoji/{emoji_name}",
  service: "messaging",
  auth: "user",
  upload: true,
  params: { emoji_name: p.str().path() },
  response: empty,
});

/** Deactivates the active custom emoji of that name (its administrators, or its author). */
export const DeactivateRealmEmoji = route({
  method: "DELETE",
  path: "/realm/emoji/{emoji_name}",
  service: "messaging",
  auth: "user",
  params: { emoji_name: p.str().path() },
  response: empty,
});

/**
 * A custom emoji's image (not JSON), where its `source_url` points (served at the root too).
 * Public like avatars and like Zulip's emoji: image tags in message HTML carry no credentials;
 * the file name carries a random token.
 */
export const GetRealmEmojiImage = route({
  method: "GET",
  path: "/user_avatars/{realm_id_str}/emoji/images/{filename}",
  service: "messaging",
  auth: "none",
  params: { realm_id_str: p.str().path(), filename: p.str().path() },
  response: z.any(),
});

/** The still image of an animated custom emoji (`still_url`). */
export const GetRealmEmojiStillImage = route({
  method: "GET",
  path: "/user_avatars/{realm_id_str}/emoji/images/still/{filename}",
  service: "messaging",
  auth: "none",
  params: { realm_id_str: p.str().path(), filename: p.str().path() },
  response: z.any(),
});
