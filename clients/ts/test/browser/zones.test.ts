// The zones demo page in headless Chromium (playwright-core, /usr/bin/chromium
// or $CHROMIUM_PATH): `tessera dev ARENA ZONES --mount /sdk=clients/ts/dist`
// serves it at /zones/. The page creates zones-0 and zones-1 (kind "zones",
// examples/zones) and joins zones-0; a player walking right with the arrow
// key crosses the line, the shard moves it to zones-1, the client follows
// the TRANSFER and the page draws the player in every frame, its x only
// growing, with no jump of more than a few ticks of walking. Without a
// party zones-1 turns the player back; a relic taken in zones-0 shows its
// banner in both zones. Screenshot: build/artifacts/zones.png (or
// $ARTIFACTS_DIR/zones.png).
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDemoPages, stopDemoPages } from "../helpers/demo-pages.js";
import { REPO, type TesseraServer } from "../helpers/tessera-server.js";

const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? join(REPO, "build/artifacts"));
const LINE = 100; // zones-0 is x 0..100, zones-1 100..200 (zones.cc defaults)
const STEP = 30 / 20; // world units a tick: speed 30 per second at 20 Hz
// "Continuous": between the last position zones-0 sent and the first one
// zones-1 sent, the player walked at most this many ticks (the move plus
// the page's reconnect; on an idle machine two or three).
const MAX_GAP_TICKS = 10;

/** What window.__zones.frames holds per animation frame. */
interface Frame {
  shard: string | null;
  x: number | null;
  y: number | null;
  t: number;
  tick: number;
  sx: number | null;
  held: boolean;
}

let server: TesseraServer;
let browser: Browser;

beforeAll(async () => {
  ({ server, browser } = await startDemoPages("zones"));
});

afterAll(() => stopDemoPages({ server, browser }));

/** Opens the page and waits until its player is drawn in zones-0. */
async function openZones(query: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  await page.goto(`${server.url}/zones/${query}`);
  expect(await page.title()).toBe("tessera · zones");
  await page.waitForFunction(
    () => {
      const z = (window as any).__zones;
      return z?.connection === "open" && z.shard === "zones-0" && z.player !== null && z.frames.some((f: Frame) => f.x !== null);
    },
    null,
    { timeout: 30_000 },
  );
  await page.locator("#world").click(); // focus for the keys
  return page;
}

const zones = (page: Page) =>
  page.evaluate(() => {
    const z = (window as any).__zones;
    return {
      shard: z.shard as string,
      transfers: z.transfers as number,
      banner: z.banner as string | null,
      bounced: z.bounced as string,
      bounces: z.bounces as number,
      player: z.player as { x: number; score: number; crossings: number; from: string } | null,
    };
  });
const frames = (page: Page) => page.evaluate(() => (window as any).__zones.frames as Frame[]);

/** Holds the right arrow until the page draws its player in zones-1 past x = 120. */
async function walkAcross(page: Page): Promise<void> {
  await page.keyboard.down("ArrowRight");
  await page.waitForFunction(
    () => {
      const f = (window as any).__zones.frames.at(-1);
      return f && f.shard === "zones-1" && f.sx !== null && f.x > 120;
    },
    null,
    { timeout: 30_000 },
  );
  await page.keyboard.up("ArrowRight");
}

describe("the zones demo page", () => {
  it("walks a player over the line into zones-1 and draws it in every frame on the way", async () => {
    const errors: string[] = [];
    const page = await openZones("?name=walker", errors);
    expect(await page.locator("#me").textContent()).toBe("walker");
    const start = await zones(page);
    expect(start.player!.x).toBeLessThan(LINE);
    expect(start.transfers).toBe(0);
    const before = (await frames(page)).length;

    await walkAcross(page);
    const after = await zones(page);
    expect(after.shard).toBe("zones-1");
    expect(after.transfers).toBe(1);
    await expect.poll(async () => (await zones(page)).player?.from).toBe("zones-0");
    expect((await zones(page)).player!.crossings).toBe(1);
    await expect.poll(() => page.locator("#shard").textContent()).toBe("zones-1");
    await expect.poll(() => page.locator("#transfers").textContent()).toBe("1");

    // Every frame since the walk began drew the player.
    const walk = (await frames(page)).slice(Math.max(0, before - 1));
    expect(walk.length).toBeGreaterThan(10);
    const undrawn = walk.filter((f) => f.x === null);
    expect(undrawn, "frames without the player").toEqual([]);

    // The shard it was drawn from changed once, from zones-0 to zones-1.
    const changes = walk.filter((f, i) => i > 0 && f.shard !== walk[i - 1]!.shard);
    expect(changes.map((f) => f.shard)).toEqual(["zones-1"]);
    expect(walk[0]!.shard).toBe("zones-0");

    // x only grows (walking right), across the line too.
    for (let i = 1; i < walk.length; i++) {
      expect(walk[i]!.x!, `frame ${i}: ${JSON.stringify(walk[i - 1])} -> ${JSON.stringify(walk[i])}`).toBeGreaterThanOrEqual(
        walk[i - 1]!.x! - 1e-9,
      );
    }
    expect(walk.at(-1)!.x!).toBeGreaterThan(120);

    // No gap: the last position zones-0 sent and the first from zones-1 are
    // a few ticks of walking apart, and the page held the dot (drew it where
    // it last was) only in between.
    const lastSource = walk.filter((f) => f.shard === "zones-0" && f.sx !== null).at(-1)!;
    const firstTarget = walk.find((f) => f.shard === "zones-1" && f.sx !== null)!;
    expect(lastSource.sx!).toBeLessThanOrEqual(LINE);
    expect(firstTarget.sx!).toBeGreaterThanOrEqual(LINE);
    const gapTicks = (firstTarget.sx! - lastSource.sx!) / STEP;
    expect(gapTicks, `zones-0 last sent x ${lastSource.sx}, zones-1 first sent x ${firstTarget.sx}`).toBeLessThanOrEqual(
      MAX_GAP_TICKS,
    );
    const held = walk.filter((f) => f.held);
    for (const f of held) expect(f.t).toBeGreaterThanOrEqual(lastSource.t);
    for (const f of held) expect(f.t).toBeLessThanOrEqual(firstTarget.t);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "zones.png") });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("without a party, zones-1 turns the player back into zones-0", async () => {
    const errors: string[] = [];
    const page = await openZones("?name=loner&party=0", errors);
    expect(await page.locator("#party-line b").textContent()).toBe("not");
    await page.keyboard.down("ArrowRight");
    await page.waitForFunction(() => (window as any).__zones.bounces >= 1, null, { timeout: 30_000 });
    await page.keyboard.up("ArrowRight");
    const z = await zones(page);
    expect(z.bounced).toBe("zones-1");
    expect(z.shard).toBe("zones-0");
    expect(z.transfers).toBe(0);
    expect(z.player!.x).toBeLessThan(LINE);
    expect(z.player!.crossings).toBe(0);
    expect(await page.locator("#toast").textContent()).toBe("zones-1 turned you back: join a party first");
    // The page glides the dot back over one tick, then it stays in zones-0,
    // stopped.
    await expect
      .poll(async () => Math.abs((await frames(page)).at(-1)!.x! - z.player!.x))
      .toBeLessThan(1e-6);
    await page.waitForTimeout(300);
    const last = (await frames(page)).at(-1)!;
    expect(last.shard).toBe("zones-0");
    expect(last.x!).toBeLessThan(LINE);
    expect(last.x!).toBeCloseTo(z.player!.x, 6);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("a relic taken in zones-0 shows its banner in both zones", async () => {
    const errors: string[] = [];
    const traveller = await openZones("?name=traveller", errors);
    await walkAcross(traveller);
    expect((await zones(traveller)).banner).toBeNull();
    expect(await traveller.locator("#banner").isHidden()).toBe(true);

    // The seeker starts right below the relic and walks up into it.
    const seeker = await openZones("?name=seeker", errors);
    await seeker.keyboard.down("ArrowUp");
    await seeker.waitForFunction(() => (window as any).__zones.banner !== null, null, { timeout: 30_000 });
    await seeker.keyboard.up("ArrowUp");
    const text = "The relic was taken by seeker in zones-0";
    expect((await zones(seeker)).banner).toBe(text);
    await expect.poll(() => seeker.locator("#banner").textContent()).toBe(text);
    await expect.poll(async () => (await zones(seeker)).player?.score).toBe(1);
    await expect.poll(() => seeker.locator("#score").textContent()).toBe("1");

    // zones-1 heard it from zones-0 (group "world").
    await expect.poll(async () => (await zones(traveller)).banner, { timeout: 10_000 }).toBe(text);
    expect((await zones(traveller)).shard).toBe("zones-1");
    await expect.poll(() => traveller.locator("#banner").textContent()).toBe(text);
    expect(await traveller.locator("#banner").isVisible()).toBe(true);

    mkdirSync(ARTIFACTS, { recursive: true });
    await traveller.screenshot({ path: join(ARTIFACTS, "zones-relic.png") });
    expect(errors).toEqual([]);
    await traveller.close();
    await seeker.close();
  });
});
