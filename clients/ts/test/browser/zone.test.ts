// The zone demo page in headless Chromium (playwright-core, /usr/bin/chromium
// or $CHROMIUM_PATH): `tessera dev ARENA ZONE --mount /sdk=clients/ts/dist`
// serves the zone page at /zone/. A scout joins, sees the units around it,
// clicks the canvas and walks there. Screenshot: build/artifacts/zone.png (or
// $ARTIFACTS_DIR/zone.png).
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDemoPages, stopDemoPages } from "../helpers/demo-pages.js";
import { REPO, type TesseraServer } from "../helpers/tessera-server.js";

const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? join(REPO, "build/artifacts"));
const RADIUS = 300; // the zone's interest radius, plus its hysteresis and a tick or two of walking
const VIEW_LIMIT = RADIUS + 15 + 20;
const W = 920; // the canvas' drawing size (zone.js)
const H = 620;

/** What window.__zone.drawn holds per unit. */
interface Drawn {
  id: number;
  x: number;
  y: number;
  kind: string;
  name?: string;
  hp?: number;
  stealth: boolean;
  me: boolean;
}

let server: TesseraServer;
let browser: Browser;
const pageErrors: string[] = [];

beforeAll(async () => {
  ({ server, browser } = await startDemoPages("zone"));
});

afterAll(() => stopDemoPages({ server, browser }));

const drawn = (page: Page) => page.evaluate(() => (window as any).__zone.drawn as Drawn[]);
const myUnit = async (page: Page) => (await drawn(page)).find((p) => p.me);

/** Clicks the zone canvas at canvas pixel (px, py) of its 920 x 620 drawing. */
async function clickCanvas(page: Page, px: number, py: number): Promise<void> {
  const box = (await page.locator("#zone").boundingBox())!;
  await page.mouse.click(box.x + (px / W) * box.width, box.y + (py / H) * box.height);
}

describe("the zone demo page", () => {
  it("shows the units around a scout, who walks where the canvas is clicked", async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
    });
    await page.goto(`${server.url}/zone/?name=scout-7`);
    expect(await page.title()).toBe("tessera · zone");
    expect(await page.locator('nav a[href="/"]').count()).toBe(1); // the arena, served beside it
    await page.waitForFunction(
      () => {
        const z = (window as any).__zone;
        return z?.connection === "open" && z.drawn.some((p: Drawn) => p.me) && z.drawn.length > 3;
      },
      null,
      { timeout: 20_000 },
    );
    expect(await page.locator("#me").textContent()).toBe("scout-7");
    await expect.poll(() => page.locator("#state").textContent()).toBe("connected");
    await expect.poll(async () => Number(await page.locator("#held").textContent())).toBeGreaterThan(3);

    // Only what is near: my unit (named, a player) and the units around it.
    const units = await drawn(page);
    const me = units.find((p) => p.me)!;
    expect(me).toMatchObject({ kind: "player", name: "scout-7", hp: 100 });
    expect(units.length).toBeLessThan(100);
    for (const u of units) expect(Math.hypot(u.x - me.x, u.y - me.y), `${u.kind} ${u.id}`).toBeLessThan(VIEW_LIMIT);

    // The camera has settled on my unit: a click 180 px right and 100 px up
    // of the centre asks for a point about 195 units right, 108 up.
    await page.waitForFunction(
      () => {
        const z = (window as any).__zone;
        const m = z.drawn.find((p: Drawn) => p.me);
        return m && Math.hypot(z.camera.x - m.x, z.camera.y - m.y) < 1;
      },
      null,
      { timeout: 5000 },
    );
    const start = (await myUnit(page))!;
    await clickCanvas(page, W / 2 + 180, H / 2 - 100);
    const target = (await page.evaluate(() => (window as any).__zone.target)) as { x: number; y: number };
    expect(target).not.toBeNull();
    expect(target.x - start.x).toBeGreaterThan(150);
    expect(target.x - start.x).toBeLessThan(240);
    expect(start.y - target.y).toBeGreaterThan(80);
    expect(start.y - target.y).toBeLessThan(135);

    // Record my unit's distance to the target, frame by frame, until it arrives.
    const distances = await page.evaluate(
      (target) =>
        new Promise<number[]>((resolve) => {
          const out: number[] = [];
          const begin = performance.now();
          const step = () => {
            const m = (window as any).__zone.drawn.find((p: Drawn) => p.me);
            if (m) out.push(Math.hypot(m.x - target.x, m.y - target.y));
            if ((out.length > 0 && out[out.length - 1]! < 1) || performance.now() - begin > 30_000) resolve(out);
            else requestAnimationFrame(step);
          };
          requestAnimationFrame(step);
        }),
      target,
    );
    expect(distances.at(-1)).toBeLessThan(1);
    // A steady walk: never farther, with positions in between.
    for (let i = 1; i < distances.length; i++) expect(distances[i]).toBeLessThanOrEqual(distances[i - 1]! + 0.01);
    expect(distances.filter((d) => d > 20 && d < 200).length).toBeGreaterThanOrEqual(5);
    const end = (await myUnit(page))!;
    expect(Math.hypot(end.x - target.x, end.y - target.y)).toBeLessThan(1);

    // Still only what is near, around the new position.
    for (const u of await drawn(page)) expect(Math.hypot(u.x - end.x, u.y - end.y)).toBeLessThan(VIEW_LIMIT);
    // Both round trips are shown, each under its own name.
    await expect.poll(() => page.locator("#rtt").textContent()).toMatch(/^\d+ ms$/);
    await expect.poll(() => page.locator("#ping").textContent(), { timeout: 10_000 }).toMatch(/^\d+ ms$/);
    await expect.poll(async () => Number(await page.locator("#players").textContent())).toBe(1);

    // The screenshot: mid-walk, with rings for what comes into view and leaves.
    await clickCanvas(page, W / 2 - 220, H / 2 + 120);
    await page.waitForTimeout(900);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "zone.png") });
    expect(pageErrors).toEqual([]);
  });
});
