import { z } from "zod";
import { Linkifier } from "../events/accounts";
import { p } from "../params";
import { empty, route, success } from "../route";

/** Spec 4.15: the organization's linkifiers in the order clients must apply them. */
export const GetLinkifiers = route({
  method: "GET",
  path: "/realm/linkifiers",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ linkifiers: z.array(Linkifier) }),
});

/** Legacy listing (removed upstream at feature level 54; zulip-js still calls it): `[pattern, url, id]` tuples. */
export const GetLegacyFilters = route({
  method: "GET",
  path: "/realm/filters",
  service: "accounts",
  auth: "user",
  params: {},
  response: success({ filters: z.array(z.tuple([z.string(), z.string(), z.number().int()])) }),
});

export const CreateLinkifier = route({
  method: "POST",
  path: "/realm/filters",
  service: "accounts",
  auth: "user",
  params: { pattern: p.str().required(), url_template: p.str().required() },
  response: success({ id: z.number().int() }),
});

export const UpdateLinkifier = route({
  method: "PATCH",
  path: "/realm/filters/{filter_id}",
  service: "accounts",
  auth: "user",
  params: { filter_id: p.int().path(), pattern: p.str().required(), url_template: p.str().required() },
  response: empty,
});

export const DeleteLinkifier = route({
  method: "DELETE",
  path: "/realm/filters/{filter_id}",
  service: "accounts",
  auth: "user",
  params: { filter_id: p.int().path() },
  response: empty,
});

export const ReorderLinkifiers = route({
  method: "PATCH",
  path: "/realm/linkifiers",
  service: "accounts",
  auth: "user",
  params: { ordered_linkifier_ids: p.json(z.array(z.number().int())).required() },
  response: empty,
});
