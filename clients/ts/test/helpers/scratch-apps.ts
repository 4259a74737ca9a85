// Scratch copies of example apps for tests that start `tessera dev` on more
// than the arena (TesseraServer.scratchApp copies only examples/arena).
import { cpSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, TESSERA_BIN } from "./tessera-server.js";

/**
 * Copies examples/<name> for each name into one fresh temporary directory
 * (without any .tessera state) and returns the copies' paths, in order. The
 * copies keep their directory names, so `tessera dev A B` serves B's web
 * folder at `/<name>/`. `TesseraServer.removeApp()` on a server started on
 * the first copy removes them all.
 */
export function scratchApps(...names: string[]): string[] {
  if (!existsSync(TESSERA_BIN)) {
    throw new Error(`no tessera binary at ${TESSERA_BIN}: build it first (make build) or set TESSERA_BIN`);
  }
  const root = mkdtempSync(join(tmpdir(), "tessera-ts-"));
  return names.map((name) => {
    const app = join(root, name);
    cpSync(join(REPO, "examples", name), app, {
      recursive: true,
      filter: (src) => !src.includes(`${"/"}.tessera`),
    });
    return app;
  });
}
