import { ApiError } from "@chat/platform";

/** The Zulip error `f` throws, as a client reads it (status, code, msg); fails the test if it throws none. */
export function errorOf(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err instanceof ApiError ? { status: err.status, code: err.code, msg: err.message } : err;
  }
  throw new Error("no error");
}
