import type { StateContext } from "./register-state";

/** State of the issue-5 resources (user groups, status, linkifiers); filled in below. */
export async function registerStateExtras(_ctx: StateContext): Promise<Record<string, unknown>> {
  return {};
}
