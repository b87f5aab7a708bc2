import { z } from "zod";
import { UserObject } from "../models";
import { p } from "../params";
import { empty, route, success } from "../route";

/** The caller's own user, flattened at the top level (Zulip's GET /users/me). */
export const GetOwnUser = route({
  method: "GET",
  path: "/users/me",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({
    user_id: z.number().int(),
    email: z.string(),
    delivery_email: z.string(),
    full_name: z.string(),
    is_admin: z.boolean(),
    is_owner: z.boolean(),
    is_guest: z.boolean(),
    is_billing_admin: z.boolean(),
    role: z.number().int(),
    is_bot: z.boolean(),
    is_active: z.boolean(),
    timezone: z.string(),
    date_joined: z.string(),
    avatar_url: z.string(),
    avatar_version: z.number().int(),
    max_message_id: z.number().int().optional(),
    profile_data: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const GetUsers = route({
  method: "GET",
  path: "/users",
  service: "accounts",
  auth: "user",
  params: {
    client_gravatar: p.bool().default(true),
    include_custom_profile_fields: p.bool().default(false),
  },
  response: success({ members: z.array(UserObject) }),
});

export const GetUser = route({
  method: "GET",
  path: "/users/{user_id}",
  service: "accounts",
  auth: "user",
  params: {
    user_id: p.int().path(),
    client_gravatar: p.bool().default(true),
    include_custom_profile_fields: p.bool().default(false),
  },
  response: success({ user: UserObject }),
});

/**
 * A user by email (Zulip feature level 39; lookups as from level 302): the Zulip API email
 * (`user{id}@...` dummy addresses included), or the real address where its owner's email
 * visibility lets the caller see it.
 */
export const GetUserByEmail = route({
  method: "GET",
  path: "/users/{email}",
  service: "accounts",
  auth: "user",
  params: {
    email: p.str().path(),
    client_gravatar: p.bool().default(true),
    include_custom_profile_fields: p.bool().default(false),
  },
  response: success({ user: UserObject }),
});

/** Administrators create a user with a password (Zulip's POST /users). */
export const CreateUser = route({
  method: "POST",
  path: "/users",
  service: "accounts",
  auth: "user",
  params: {
    email: p.str().required(),
    password: p.str().required(),
    full_name: p.str().required(),
  },
  response: success({ user_id: z.number().int() }),
});

/** Deactivate one's own account (spec 4.17). */
export const DeactivateOwnUser = route({
  method: "DELETE",
  path: "/users/me",
  service: "accounts",
  auth: "user",
  params: {},
  response: empty,
});

/**
 * Replace the caller's API key (Zulip's `POST /users/me/api_key/regenerate`; bots may call it
 * too). Every key of the account stops working at once and the new one is returned, here only.
 */
export const RegenerateOwnApiKey = route({
  method: "POST",
  path: "/users/me/api_key/regenerate",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ api_key: z.string() }),
});
