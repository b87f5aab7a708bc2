import { z } from "zod";
import { p, route, success, type RouteDef } from "@chat/contracts";
import { INTERNAL_HEADERS } from "@chat/platform";
import { readBody, sendJson, startFake, type FakeService } from "./helpers";

/** A user the fake accounts service knows. */
export interface FakeUser {
  user_id: number;
  realm_id: number;
  email: string;
  api_key: string;
  role: number;
  is_bot: boolean;
  active: boolean;
  password?: string;
}

export const KEY_A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1";
export const KEY_B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2";

export interface FakeAccounts extends FakeService {
  users: FakeUser[];
  deactivatedRealms: Set<number>;
  /** Calls of /internal/authenticate so far. */
  authCalls: number;
  /** Seen on the last authenticate call. */
  lastAuthHeaders: Record<string, unknown>;
}

const unauthorizedBody = (msg: string) => ({ result: "error", msg, code: "UNAUTHORIZED" });

/**
 * Stands in for the accounts service: `POST /internal/authenticate` with accounts' answers,
 * `/health`, and the public unauthenticated routes echoing what they received.
 */
export async function startFakeAccounts(token: string, users: FakeUser[]): Promise<FakeAccounts> {
  const state = { users, deactivatedRealms: new Set<number>(), authCalls: 0, lastAuthHeaders: {} } as FakeAccounts;
  const fake = await startFake(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/health") return sendJson(res, 200, { status: "ok" });
    if (req.headers[INTERNAL_HEADERS.token] !== token) return sendJson(res, 401, unauthorizedBody("Internal token missing or wrong"));
    const body = (await readBody(req)).toString("utf8");
    if (url.pathname === "/api/v1/internal/authenticate") {
      state.authCalls++;
      state.lastAuthHeaders = { ...req.headers };
      const form = new URLSearchParams(body);
      const email = form.get("email")?.toLowerCase();
      // Without an email (an integration URL's key) the key alone names its user.
      const user = state.users.find((u) => (email === undefined || u.email.toLowerCase() === email) && u.api_key === form.get("api_key"));
      if (!user) return sendJson(res, 401, unauthorizedBody("Invalid API key"));
      if (state.deactivatedRealms.has(user.realm_id)) return sendJson(res, 401, unauthorizedBody("This organization has been deactivated"));
      if (!user.active) return sendJson(res, 401, unauthorizedBody("Account is deactivated"));
      const { user_id, realm_id, role, is_bot } = user;
      return sendJson(res, 200, { result: "success", msg: "", user_id, realm_id, role, is_bot, email: user.email });
    }
    if (url.pathname === "/api/v1/fetch_api_key") {
      const form = new URLSearchParams(body);
      const user = state.users.find((u) => u.email === form.get("username") && u.password && u.password === form.get("password"));
      if (!user) return sendJson(res, 401, { result: "error", msg: "Your username or password is incorrect", code: "AUTHENTICATION_FAILED" });
      return sendJson(res, 200, { result: "success", msg: "", api_key: user.api_key, email: user.email, user_id: user.user_id });
    }
    return sendJson(res, 200, { result: "success", msg: "", service: "accounts", path: url.pathname, method: req.method, headers: req.headers, body });
  });
  return Object.assign(state, fake);
}

/** Answers every request with what it received: method, URL, headers and body. */
export async function startEcho(name: string): Promise<FakeService> {
  return startFake(async (req, res) => {
    const body = await readBody(req);
    sendJson(res, 200, { result: "success", msg: "", service: name, method: req.method, url: req.url, headers: req.headers, body: body.toString("utf8") });
  });
}

const any = z.record(z.string(), z.unknown());
const r = (method: RouteDef["method"], path: string, service: RouteDef["service"], auth: RouteDef["auth"], params: RouteDef["params"] = {}, extra: Partial<RouteDef> = {}) =>
  route({ method, path, service, auth, params, response: any, ...extra });

/** A route table shaped like the contracts', pointing at the fakes. */
export const TEST_ROUTES: RouteDef[] = [
  r("GET", "/users/me", "accounts", "user"),
  r("GET", "/users/{user_id}", "accounts", "user", { user_id: p.int().path() }),
  r("PATCH", "/users/{user_id}", "accounts", "user", { user_id: p.int().path() }),
  r("GET", "/users/{email}/presence", "accounts", "user", { email: p.str().path() }),
  r("GET", "/echo", "messaging", "user"),
  r("POST", "/echo", "messaging", "user"),
  r("DELETE", "/echo", "messaging", "user"),
  r("GET", "/slow", "messaging", "user"),
  r("POST", "/upload", "messaging", "user", {}, { upload: true }),
  r("GET", "/events", "events", "user", {}, { longPoll: true }),
  r("DELETE", "/events", "events", "user"),
  r("POST", "/register", "events", "user"),
  r("GET", "/scheduled", "scheduler", "user"),
  r("GET", "/user_uploads/{realm_id_str}/{filename}", "messaging", "user", { realm_id_str: p.str().path(), filename: p.str().path() }),
  r("GET", "/open", "accounts", "none"),
  r("POST", "/external/test", "messaging", "user", {}, { incomingWebhook: true, allowIncomingWebhooks: true }),
  r("POST", "/fetch_api_key", "accounts", "none", { username: p.str().required(), password: p.str().required() }),
  r("POST", "/internal/secret", "accounts", "internal"),
];

export const TEST_USERS = (): FakeUser[] => [
  { user_id: 11, realm_id: 1, email: "iago@zulip.example", api_key: KEY_A, role: 200, is_bot: false, active: true, password: "pw-iago" },
  { user_id: 12, realm_id: 1, email: "hamlet@zulip.example", api_key: KEY_B, role: 400, is_bot: false, active: true, password: "pw-hamlet" },
  { user_id: 21, realm_id: 2, email: "other@lear.example", api_key: "ccccccccccccccccccccccccccccccc3", role: 100, is_bot: false, active: true },
  { user_id: 13, realm_id: 1, email: "bot@zulip.example", api_key: "ddddddddddddddddddddddddddddddd4", role: 400, is_bot: true, active: true },
];
