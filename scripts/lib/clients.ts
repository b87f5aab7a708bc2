import type { z } from "zod";
import type { RouteDef } from "@chat/contracts";
import { ApiError, encodeParams, InternalClient, type Identity } from "@chat/platform";

/** A failure the CLI reports as one line on stderr (exit code 1), without a stack trace. */
export class CliError extends Error {}

/**
 * Calls a service route by its contract, filling `{placeholders}` in the path from `params`.
 * An unreachable service becomes a CliError naming it and its URL.
 */
export async function callRoute<R extends z.ZodType>(
  service: { name: string; url: string; token: string },
  def: RouteDef<any, R>,
  params: Record<string, unknown>,
  identity?: Identity,
): Promise<z.output<R>> {
  const rest = { ...params };
  const path = def.path.replace(/\{(\w+)\}/g, (_m, key: string) => {
    const v = rest[key];
    delete rest[key];
    return encodeURIComponent(String(v));
  });
  try {
    return (await new InternalClient(service.url, service.token).call(def.method, path, { params: rest, identity })) as z.output<R>;
  } catch (err) {
    if (err instanceof ApiError && err.code === "SERVICE_UNAVAILABLE") {
      throw new CliError(`${service.name} at ${service.url} did not answer (is the server running? try \`pnpm start\`)`);
    }
    if (err instanceof ApiError) throw new CliError(`${service.name}: ${err.message}${err.code ? ` (${err.code})` : ""}`);
    throw err;
  }
}

/** The gateway's public API with HTTP Basic credentials, Zulip-encoded like any client. */
export async function callPublic(
  gatewayUrl: string,
  creds: { email: string; apiKey: string },
  method: string,
  path: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const form = encodeParams(params).toString();
  let url = `${gatewayUrl}/api/v1${path}`;
  const headers: Record<string, string> = {
    authorization: "Basic " + Buffer.from(`${creds.email}:${creds.apiKey}`).toString("base64"),
    "user-agent": "ChatAdminCLI/1.0",
  };
  let body: string | undefined;
  if (method === "GET") {
    if (form) url += `?${form}`;
  } else {
    body = form;
    headers["content-type"] = "application/x-www-form-urlencoded";
  }
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(30_000) });
  } catch {
    throw new CliError(`the gateway at ${gatewayUrl} did not answer (is the server running? try \`pnpm start\`)`);
  }
  const data = (await res.json().catch(() => null)) as Record<string, any> | null;
  if (!data) throw new CliError(`${method} ${path}: HTTP ${res.status} without a JSON body`);
  if (data.result !== "success") throw new CliError(`${method} ${path}: ${data.msg}${data.code ? ` (${data.code})` : ""}`);
  return data;
}
