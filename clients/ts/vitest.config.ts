import { defineConfig } from "vitest/config";

// Three projects:
//   unit        fast tests without a server (test/**/*.test.ts, test/game/**)
//   integration Node client against the real `tessera dev` binary
//   browser     headless Chromium (playwright-core) on the demo pages (arena, zone, range, zones, lobby)
// The server binary is $TESSERA_BIN (default ../../build/src/cli/tessera).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: ["test/integration/**", "test/browser/**", "**/node_modules/**"],
          environment: "node",
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "browser",
          include: ["test/browser/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
