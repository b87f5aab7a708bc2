import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { parse } from "yaml";
import * as contracts from "@chat/contracts";
import type { z } from "zod";
import { REPO_ROOT } from "./env";

/**
 * Checks delivered client events against Zulip's published GET /events schema (an OpenAPI 3.0
 * subset: $ref, allOf, oneOf/anyOf, nullable, enum, properties, required, additionalProperties,
 * items) and against our own contract schemas in @chat/contracts. The reference file is optional
 * (`../shared/reference` is not part of every checkout): without it the Zulip check is skipped,
 * and `expectZulipEvent` says so.
 */

/** `../shared/reference/zulip-openapi.yaml` from the repository root (ZULIP_OPENAPI_PATH overrides, as for the contracts' test). */
export const OPENAPI_PATH = process.env.ZULIP_OPENAPI_PATH ?? path.join(REPO_ROOT, "..", "shared", "reference", "zulip-openapi.yaml");
export const openapiAvailable = existsSync(OPENAPI_PATH);

type Schema = Record<string, any>;
let doc: Schema | null = null;

function load(): Schema {
  doc ??= parse(readFileSync(OPENAPI_PATH, "utf8"), { maxAliasCount: -1 }) as Schema;
  return doc;
}

function resolve(s: Schema): Schema {
  let out = s;
  while (out && out.$ref) {
    const parts = String(out.$ref).replace(/^#\//, "").split("/");
    out = parts.reduce((node: any, key) => node[key], load());
  }
  return out;
}

/** allOf parts merged into one object schema (Zulip's way of extending a base). */
function flatten(s: Schema): Schema {
  s = resolve(s);
  if (!s.allOf) return s;
  const merged: Schema = { ...s, allOf: undefined, properties: { ...(s.properties ?? {}) }, required: [...(s.required ?? [])] };
  for (const part of s.allOf.map(flatten)) {
    for (const [k, v] of Object.entries(part)) {
      if (k === "properties") {
        for (const [pk, pv] of Object.entries(v as Schema)) {
          // `{}` placeholders re-declare a property of another part without constraining it.
          if (!merged.properties[pk] || Object.keys(pv as object).length > 0) merged.properties[pk] = pv;
        }
      } else if (k === "required") merged.required.push(...(v as string[]));
      else if (k === "additionalProperties") merged.additionalProperties = merged.additionalProperties === false ? false : v;
      else if (!(k in merged) || merged[k] === undefined) merged[k] = v;
    }
  }
  return merged;
}

/**
 * Keys Zulip's published schema lacks but clients get: the local echo (`local_message_id` is
 * added by Zulip's Tornado without being documented; `local_id` is our spec's name for it).
 */
export const ALLOWED_EXTRA_KEYS = new Set(["local_id", "local_message_id"]);

/** A field Zulip added after the feature level we speak (its description says so) may be absent. */
function newerThanOurLevel(prop: Schema | undefined): boolean {
  if (!prop) return false;
  const text = String(resolve(prop).description ?? "");
  const m = /New in Zulip [\d.]+ \(feature level (\d+)\)/.exec(text);
  return m !== null && Number(m[1]) > contracts.ZULIP_FEATURE_LEVEL;
}

/**
 * A field whose shape Zulip changed after the feature level we speak ("Before Zulip 10.0 (feature
 * level 330), we sent ..."): we send the earlier shape, which the schema no longer describes.
 */
function reshapedAfterOurLevel(prop: Schema): boolean {
  const text = String(resolve(prop).description ?? "");
  return [...text.matchAll(/Before Zulip [\d.]+ \(feature level (\d+)\)/g)].some((m) => Number(m[1]) > contracts.ZULIP_FEATURE_LEVEL);
}

export function validate(schema: Schema, value: unknown, at = "$"): string[] {
  const s = flatten(schema);
  if (value === null) return s.nullable ? [] : [`${at}: null not allowed`];
  if (s.oneOf || s.anyOf) {
    const branches: Schema[] = s.oneOf ?? s.anyOf;
    const results = branches.map((b) => validate(b, value, at));
    if (results.some((r) => r.length === 0)) return [];
    return results.sort((a, b) => a.length - b.length)[0] ?? [`${at}: no branch`];
  }
  if (s.enum && !s.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(s.enum)}`];
  switch (s.type) {
    case "integer":
      return Number.isInteger(value) ? [] : [`${at}: not an integer`];
    case "number":
      return typeof value === "number" ? [] : [`${at}: not a number`];
    case "string":
      return typeof value === "string" ? [] : [`${at}: not a string`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: not a boolean`];
    case "array":
      if (!Array.isArray(value)) return [`${at}: not an array`];
      return s.items ? value.flatMap((v, i) => validate(s.items, v, `${at}[${i}]`)) : [];
  }
  if (s.type === "object" || s.properties || s.additionalProperties !== undefined) {
    if (typeof value !== "object" || Array.isArray(value)) return [`${at}: not an object`];
    const obj = value as Record<string, unknown>;
    const errors: string[] = [];
    for (const req of s.required ?? []) {
      if (!(req in obj) && !newerThanOurLevel(s.properties?.[req])) errors.push(`${at}.${req}: missing`);
    }
    for (const [k, v] of Object.entries(obj)) {
      const prop = s.properties?.[k];
      if (prop) {
        const found = validate(prop, v, `${at}.${k}`);
        if (found.length > 0 && !reshapedAfterOurLevel(prop)) errors.push(...found);
      }
      else if (s.additionalProperties === false && !ALLOWED_EXTRA_KEYS.has(k)) errors.push(`${at}.${k}: not in the schema`);
      else if (typeof s.additionalProperties === "object") errors.push(...validate(s.additionalProperties, v, `${at}.${k}`));
    }
    return errors;
  }
  return [];
}

/** Errors of one delivered event against Zulip's GET /events event schemas (empty = valid). */
export function zulipEventErrors(event: Record<string, unknown>): string[] {
  const response = load().paths["/events"].get.responses["200"].content["application/json"].schema;
  const events = flatten(response).properties.events;
  const branches: Schema[] = resolve(events.items).oneOf;
  // Only branches for this type (and op) are candidates; report the closest one.
  const candidates = branches.filter((b) => {
    const f = flatten(b);
    const typeEnum = flatten(f.properties?.type ?? {}).enum;
    const opEnum = f.properties?.op ? flatten(f.properties.op).enum : undefined;
    return typeEnum?.includes(event.type) && (!opEnum || opEnum.includes(event.op));
  });
  if (candidates.length === 0) return [`no Zulip schema for type ${String(event.type)}${event.op ? `/${String(event.op)}` : ""}`];
  const results = candidates.map((b) => validate(b, event));
  if (results.some((r) => r.length === 0)) return [];
  return results.sort((a, b) => a.length - b.length)[0];
}

let skipSaid = false;

/**
 * Expects `event` to match Zulip's published schema for its type. Without the reference file,
 * says once (per test file) that the check was skipped, and passes.
 */
export function expectZulipEvent(event: Record<string, unknown>, message = JSON.stringify(event)): void {
  if (openapiAvailable) {
    expect(zulipEventErrors(event), message).toEqual([]);
  } else if (!skipSaid) {
    skipSaid = true;
    console.log(`[openapi] ${OPENAPI_PATH} not found: delivered events were checked against our contracts only; the check against Zulip's schema was SKIPPED.`);
  }
}

/** Our contract schemas for client events: strict zod objects whose `type` is a literal. */
function contractSchemasFor(event: Record<string, unknown>): z.ZodType[] {
  const out: z.ZodType[] = [];
  for (const value of Object.values(contracts)) {
    const shape = (value as any)?.shape;
    const def = (value as any)?._zod?.def;
    if (!shape || !def || def.type !== "object") continue;
    const typeValues: unknown[] | undefined = shape.type?._zod?.def?.values;
    if (!typeValues?.includes(event.type)) continue;
    const opDef = shape.op?._zod?.def;
    const opValues: unknown[] | undefined = opDef?.values ?? (opDef?.entries ? Object.values(opDef.entries) : undefined);
    if (shape.op && opValues && !opValues.includes(event.op)) continue;
    out.push(value as z.ZodType);
  }
  return out;
}

/**
 * Errors of one delivered event against our contracts. Message events are checked in their
 * delivered form elsewhere (the contract describes the notice); events nobody declared pass.
 * An update_message is checked without the reader's `flags`, which the events service adds to
 * the contract's event on delivery.
 */
export function contractEventErrors(event: Record<string, unknown>): string[] {
  if (event.type === "message") return [];
  const schemas = contractSchemasFor(event);
  if (schemas.length === 0) return [];
  if (event.type === "update_message") event = (({ flags: _flags, ...rest }) => rest)(event);
  const candidates = [event, (({ id: _id, ...rest }) => rest)(event)];
  for (const schema of schemas) for (const c of candidates) if (schema.safeParse(c).success) return [];
  const { id: _id, ...rest } = event;
  return schemas[0].safeParse(rest).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? [];
}
