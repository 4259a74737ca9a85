/**
 * The demo pages' browser tests: `tessera dev` serving scratch copies of the
 * arena and one more example app (the SDK mounted from dist/), and a
 * headless Chromium, started together once per test file.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { scratchApps } from "./scratch-apps.js";
import { devSupportsMount, REPO, TesseraServer } from "./tessera-server.js";

export const DIST = join(REPO, "clients/ts/dist");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export interface DemoPages {
  server: TesseraServer;
  browser: Browser;
}

/** Starts the server on the arena plus `app` (an example's directory name) and the browser. */
export async function startDemoPages(app: string): Promise<DemoPages> {
  if (!existsSync(join(DIST, "tessera-client.js"))) throw new Error("run `npm run build` first: no dist/tessera-client.js");
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (scripts/install-deps)`);
  if (!devSupportsMount()) throw new Error("this tessera binary has no `dev --mount` (and no multi-app dev): rebuild it");
  const [arena, other] = scratchApps("arena", app);
  const [server, browser] = await Promise.all([
    TesseraServer.start({ appDir: arena, args: [other!, "--mount", `/sdk=${DIST}`] }),
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] }),
  ]);
  return { server, browser };
}

/** Closes what {@link startDemoPages} started (either may be missing after a failed start). */
export async function stopDemoPages(pages: Partial<DemoPages> | undefined): Promise<void> {
  await pages?.browser?.close();
  await pages?.server?.stop();
  pages?.server?.removeApp();
}
