// The arena demo page in headless Chromium (playwright-core,
// /usr/bin/chromium or $CHROMIUM_PATH): two pages join, one clicks, the
// other sees that player glide there. Screenshot: build/artifacts/arena.png
// (or $ARTIFACTS_DIR/arena.png).
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page, type WebSocketRoute } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devSupportsMount, REPO, TesseraServer } from "../helpers/tessera-server.js";

const DIST = join(REPO, "clients/ts/dist");
const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? join(REPO, "build/artifacts"));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const MARGIN = 60;
const W = 920;
const H = 620;

let server: TesseraServer;
let browser: Browser;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(join(DIST, "tessera-client.js"))) throw new Error("run `npm run build` first: no dist/tessera-client.js");
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (scripts/install-deps)`);
  let args: string[] = [];
  let appDir: string | undefined;
  if (devSupportsMount()) {
    args = ["--mount", `/sdk=${DIST}`];
  } else {
    // An older server without --mount: the bundle goes into the scratch
    // copy's web folder, served at the same /sdk/ path.
    appDir = TesseraServer.scratchApp();
    mkdirSync(join(appDir, "web/sdk"), { recursive: true });
    copyFileSync(join(DIST, "tessera-client.js"), join(appDir, "web/sdk/tessera-client.js"));
  }
  [server, browser] = await Promise.all([
    TesseraServer.start({ args, appDir }),
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] }),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  server?.removeApp();
});

/**
 * Relays a page's WebSockets to the server; while `hold` is on, what the
 * server sends is kept back (and delivered, in order, on release), so the
 * page can get no FRAME in the meantime.
 */
class ServerHold {
  private held: { ws: WebSocketRoute; message: string | Buffer }[] = [];
  private holding = false;
  heldCount = 0;

  async install(page: Page): Promise<void> {
    await page.routeWebSocket(/.*/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => server.send(message));
      server.onMessage((message) => {
        if (this.holding) {
          this.held.push({ ws, message });
          this.heldCount++;
        } else {
          ws.send(message);
        }
      });
    });
  }

  hold(): void {
    this.holding = true;
    this.heldCount = 0;
  }

  release(): void {
    this.holding = false;
    for (const { ws, message } of this.held.splice(0)) ws.send(message);
  }
}

async function openPlayer(name: string, hold?: ServerHold): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  if (hold) await hold.install(page);
  page.on("pageerror", (e) => pageErrors.push(`${name}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`${name} console: ${m.text()}`);
  });
  await page.goto(`${server.url}/?name=${name}`);
  await page.waitForFunction(() => (window as any).__arena?.connection === "open", null, { timeout: 20_000 });
  return page;
}

/** Clicks the canvas at arena coordinates (x, y). */
async function clickArena(page: Page, x: number, y: number): Promise<void> {
  const box = (await page.locator("#arena").boundingBox())!;
  await page.mouse.click(box.x + ((x + MARGIN) / W) * box.width, box.y + ((y + MARGIN) / H) * box.height);
}

const drawnPlayer = (page: Page, id: string) =>
  page.evaluate((id) => (window as any).__arena.players.find((p: { id: string }) => p.id === id) ?? null, id);

describe("the arena demo page", () => {
  it("shows one player's click as movement on the other player's page", async () => {
    const aliceServer = new ServerHold();
    const alice = await openPlayer("alice", aliceServer);
    const bob = await openPlayer("bob");
    expect(await alice.title()).toBe("tessera · arena");
    expect(await alice.locator('nav a[href="/zone/"]').count()).toBe(1);

    await clickArena(alice, 150, 120);
    await bob.waitForFunction(
      () => {
        const p = (window as any).__arena.players.find((p: { id: string }) => p.id === "alice");
        return p && Math.abs(p.x - 150) < 1 && Math.abs(p.y - 120) < 1;
      },
      null,
      { timeout: 10_000 },
    );

    await bob.bringToFront();
    // Record what bob draws, frame by frame, while alice crosses the arena,
    // until she is drawn where she clicked (or 30 s): positions in between
    // mean a glide, not a jump.
    const recording = bob.evaluate(
      () =>
        new Promise<number[]>((resolve) => {
          const xs: number[] = [];
          const start = performance.now();
          const step = () => {
            const p = (window as any).__arena.players.find((p: { id: string }) => p.id === "alice");
            if (p) xs.push(p.x);
            const arrived = p && Math.abs(p.x - 650) < 0.5;
            if (!arrived && performance.now() - start < 30_000) requestAnimationFrame(step);
            else resolve(xs);
          };
          requestAnimationFrame(step);
        }),
    );
    // Alice's own page moves at once (prediction): every message the server
    // sends from before her click on is held back, so no snapshot can say
    // so, yet she heads for the click. (Without prediction she stays at
    // x = 150 until the release: what reached her page earlier shows her
    // there.)
    aliceServer.hold();
    await clickArena(alice, 650, 380);
    await alice.waitForFunction(
      () => {
        const me = (window as any).__arena.players.find((p: { me: boolean }) => p.me);
        return me && me.x > 160;
      },
      null,
      { timeout: 10_000 },
    );
    // The shard kept ticking meanwhile: its frames were held, not absent.
    await expect.poll(() => aliceServer.heldCount, { timeout: 10_000 }).toBeGreaterThan(0);
    aliceServer.release();
    const xs = await recording;
    expect(xs.at(-1)).toBeCloseTo(650, 0);
    // A jump draws 150 then 650; the glide (whatever the frame rate: each
    // frame covers at most 76% of the way) draws a position in between.
    const between = xs.filter((x) => x > 160 && x < 640);
    expect(between.length).toBeGreaterThanOrEqual(1);
    expect(await bob.locator("#players").textContent()).toBe("2");
    expect(await bob.locator("#state").textContent()).toBe("connected");

    // A click outside the arena: the shard's refusal shows on alice's page.
    await clickArena(alice, -30, 200);
    await alice.waitForFunction(() => (window as any).__arena.lastRejection?.error === "outside the arena", null, {
      timeout: 5000,
    });
    await expect.poll(() => alice.locator("#toast").textContent()).toContain("outside the arena");
    const a = await drawnPlayer(bob, "alice");
    expect(a.x).toBeCloseTo(650, 0); // the refused move did not move her

    await expect.poll(() => bob.locator("#rtt").textContent()).toMatch(/\d+ ms/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await clickArena(bob, 420, 260);
    await bob.waitForTimeout(400);
    await bob.screenshot({ path: join(ARTIFACTS, "arena.png") });
    await alice.screenshot({ path: join(ARTIFACTS, "arena-alice.png") });
    expect(pageErrors).toEqual([]);
  });
});
