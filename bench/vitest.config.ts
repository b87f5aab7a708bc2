import { defineConfig } from "vitest/config";

/** The bench's own smoke test (`pnpm --filter @chat/bench test`); not part of the root suite. */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: "forks",
  },
});
