import { z } from "zod";

/**
 * The catalog of domain events (routing key -> payload schema). Producers and consumers import
 * the same schema. Payloads may also carry `client` (a ClientNotice) for the events service.
 */
export const domainEvents: Record<string, z.ZodType> = {};

export function defineEvent<S extends z.ZodType>(type: string, schema: S): S {
  domainEvents[type] = schema;
  return schema;
}
