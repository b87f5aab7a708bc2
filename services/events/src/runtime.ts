import type { Clock, InternalClient, Logger } from "@chat/platform";
import type { EventsConfig } from "./config";
import type { PaceHints } from "./lib/pace-hints";
import type { PollHub } from "./lib/poll-hub";
import type { QueueStore } from "./store/queues";

/** What the actions of this service work with; built once per app by `buildApp`. */
export interface EventsRuntime {
  config: EventsConfig;
  log: Logger;
  clock: Clock;
  store: QueueStore;
  hub: PollHub;
  /** When this process last fetched each queue for a blocking poll (see PaceHints). */
  paces: PaceHints;
  /** Register-state sources by service name (accounts, messaging, scheduler). */
  stateClients: Record<StateService, InternalClient>;
  /** Milliseconds a blocking poll waits before its heartbeat (interval plus jitter). */
  heartbeatMs(): number;
}

export type StateService = "accounts" | "messaging" | "scheduler";
