import type pg from "pg";
import type { Clock, Logger } from "@chat/platform";
import type { AccountsConfig } from "./config";
import type { MessagingClient } from "./lib/messaging-client";
import type { RecentJoinsCache } from "./queries/digest-recipients";
import type { UserListCache } from "./queries/user-list";

/** What actions, queries and routes need; built once in main.ts (or a test). */
export interface AccountsDeps {
  pool: pg.Pool;
  config: AccountsConfig;
  clock: Clock;
  log: Logger;
  /** Calls into messaging (invitations, channel checks, notices). */
  messaging?: MessagingClient;
  /** Formatted user lists per organization (made on first use; see userListsOf). */
  userLists?: UserListCache;
  /** Recent joins per organization for digest pages (made on first use; see recentJoinsOf). */
  recentJoins?: RecentJoinsCache;
}
