import { z } from "zod";
import { baseConfigShape, loadConfig, mailConfigShape } from "@chat/platform";

/** What the admin CLI reads from the environment (the services' variables it shares, plus the gateway URL). */
export const cliConfigShape = {
  DATABASE_URL: baseConfigShape.DATABASE_URL,
  INTERNAL_TOKEN: baseConfigShape.INTERNAL_TOKEN,
  ACCOUNTS_URL: baseConfigShape.ACCOUNTS_URL,
  MESSAGING_URL: baseConfigShape.MESSAGING_URL,
  /** Base URL of the gateway: the CLI creates channels through the public API, and `demo` prints it as `base_url`. */
  GATEWAY_URL: z.string().url().default("http://127.0.0.1:9991"),
  /** The URL clients use to reach the gateway, when it differs from GATEWAY_URL (behind a proxy or outside compose); `demo` prints it as `base_url`. */
  EXTERNAL_URL: z.string().url().optional(),
  /** The services' mail settings, for `chat mail test` (run it where the services run, to use theirs). */
  ...mailConfigShape,
};

export type CliConfig = z.infer<z.ZodObject<typeof cliConfigShape>>;

export const loadCliConfig = (env: Record<string, string | undefined> = process.env): CliConfig => loadConfig(cliConfigShape, env);

/** What `pnpm start` itself reads (it passes its whole environment on to the services). */
export const startConfigShape = {
  /** Directory for each service's full log file (`<service>.log`); default `.logs` in the repository. */
  LOGS_DIR: z.string().optional(),
};
