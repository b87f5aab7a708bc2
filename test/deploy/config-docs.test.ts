import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { CONFIG_DOC, renderConfigReference } from "../../scripts/docs/config-reference";

/** docs/configuration.md is generated from the config schemas; this keeps it current. */

it("documents every variable of every config schema", async () => {
  const { undocumented } = await renderConfigReference();
  // Each needs a `/** ... */` comment above it in its config shape.
  expect(undocumented).toEqual([]);
});

it("docs/configuration.md matches the config schemas (regenerate with `pnpm docs:config`)", async () => {
  const { markdown } = await renderConfigReference();
  expect(readFileSync(CONFIG_DOC, "utf8")).toBe(markdown);
});
