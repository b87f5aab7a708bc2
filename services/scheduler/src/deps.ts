import type { Clock, Logger, Pool } from "@chat/platform";
import type { AccountsClient, MessagingClient } from "./clients/services";

/** What routes, actions and workers share; tests build it with a ManualClock. */
export interface SchedulerDeps {
  pool: Pool;
  clock: Clock;
  messaging: MessagingClient;
  accounts: AccountsClient;
  log: Logger;
}
