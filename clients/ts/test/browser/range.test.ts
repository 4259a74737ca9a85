// The range demo page in headless Chromium (playwright-core, /usr/bin/chromium
// or $CHROMIUM_PATH): `tessera dev ARENA RANGE --mount /sdk=clients/ts/dist`
// serves the range page at /range/. A shooter joins, the targets slide along
// their lanes; a click on a target where the page draws it is a hit (with lag
// compensation the shard checks the shot against that same picture), a click
// on empty space a miss. `?history=0` joins the range without lag
// compensation. Screenshot: build/artifacts/range.png (or
// $ARTIFACTS_DIR/range.png).
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDemoPages, stopDemoPages } from "../helpers/demo-pages.js";
import { REPO, type TesseraServer } from "../helpers/tessera-server.js";

const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? join(REPO, "build/artifacts"));
const W = 900; // the canvas' drawing size (range.js)
const H = 540;
const SCALE = W / 1000; // canvas pixels per world unit (the world is 1000 x 600)
const TARGET_RADIUS = 20; // range.cc
const TARGETS = 3; // range.cc's default
// A shot whose line passes this much inside (outside) a target as the page
// drew it when the shot was fired must hit (miss): the shard rewinds to the
// drawn tick and interpolates as the page does, up to the 0.01 quantisation.
const MARGIN = 2;
const ATTEMPTS = 12;

/** What window.__range.drawn holds per entity. */
interface Drawn {
  id: number;
  x: number;
  y: number;
  kind: string;
  name?: string;
  hp?: number;
  me: boolean;
}

/** What window.__range.shots holds per shot. */
interface Shot {
  seq: number;
  from: { x: number; y: number };
  to: { x: number; y: number };
  at: number;
  viewTick: number | undefined;
  targets: { id: number; x: number; y: number }[];
  result: "pending" | "hit" | "miss" | "lost";
  spear: boolean;
}

interface Score {
  hits: number;
  misses: number;
  kills: number;
}

let server: TesseraServer;
let browser: Browser;

beforeAll(async () => {
  ({ server, browser } = await startDemoPages("range"));
});

afterAll(() => stopDemoPages({ server, browser }));

/** Opens the range page and waits until the shooter and every target are drawn. */
async function openRange(query: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  await page.goto(`${server.url}/range/${query}`);
  expect(await page.title()).toBe("tessera · range");
  await page.waitForFunction(
    (targets) => {
      const r = (window as any).__range;
      return (
        r?.connection === "open" &&
        r.drawn.some((d: Drawn) => d.me && d.kind === "player") &&
        r.drawn.filter((d: Drawn) => d.kind === "target").length === targets
      );
    },
    TARGETS,
    { timeout: 30_000 },
  );
  await expect.poll(() => page.locator("#state").textContent()).toBe("open");
  expect(await page.locator("#overlay").isHidden()).toBe(true);
  return page;
}

const drawn = (page: Page) => page.evaluate(() => (window as any).__range.drawn as Drawn[]);
const me = async (page: Page) => (await drawn(page)).find((d) => d.me)!;
const score = (page: Page) =>
  page.evaluate(() => {
    const r = (window as any).__range;
    return { hits: r.hits, misses: r.misses, kills: r.kills } as Score;
  });
const shownScore = async (page: Page): Promise<Score> => ({
  hits: Number(await page.locator("#hits").textContent()),
  misses: Number(await page.locator("#misses").textContent()),
  kills: Number(await page.locator("#kills").textContent()),
});

/** Clicks the canvas where world point (x, y) is drawn. */
async function clickWorld(page: Page, x: number, y: number): Promise<void> {
  const box = (await page.locator("#range").boundingBox())!;
  await page.mouse.click(box.x + ((x * SCALE) / W) * box.width, box.y + ((y * SCALE) / H) * box.height);
}

/** Clicks at world (x, y), waits for the shot's answer and returns the shot as recorded. */
async function shoot(page: Page, x: number, y: number): Promise<Shot> {
  const before = await page.evaluate(() => (window as any).__range.shots.length as number);
  await clickWorld(page, x, y);
  const handle = await page.waitForFunction(
    (n) => {
      const shots = (window as any).__range.shots as Shot[];
      const s = shots[shots.length - 1];
      return shots.length > n && s && s.result !== "pending" ? s : null;
    },
    before,
    { timeout: 10_000 },
  );
  return (await handle.jsonValue()) as Shot;
}

/** How far inside a drawn target (positive) the shot's line passed, for the nearest target. */
function depth(shot: Shot): number {
  const dx = shot.to.x - shot.from.x;
  const dy = shot.to.y - shot.from.y;
  const len = Math.hypot(dx, dy);
  let best = -Infinity;
  for (const t of shot.targets) {
    const vx = t.x - shot.from.x;
    const vy = t.y - shot.from.y;
    if ((vx * dx + vy * dy) / len < 0) continue; // behind the shooter
    best = Math.max(best, TARGET_RADIUS - Math.abs(vx * dy - vy * dx) / len);
  }
  return best;
}

/**
 * Where to click to meet a moving target: two frames give each target's
 * drawn position and velocity; the click lands `leadMs` later. Picks a
 * target in the middle of its lane (no bounce in between).
 */
async function aimAtTarget(page: Page, leadMs: number): Promise<{ x: number; y: number; sampledAt: number } | null> {
  const [a, b] = await page.evaluate(
    () =>
      new Promise<{ at: number; targets: Drawn[] }[]>((res) => {
        const out: { at: number; targets: Drawn[] }[] = [];
        const step = (now: number) => {
          const r = (window as any).__range;
          out.push({ at: now, targets: r.drawn.filter((d: Drawn) => d.kind === "target") });
          if (out.length === 2) res(out);
          else requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
  );
  const dt = b!.at - a!.at;
  if (!(dt > 0)) return null;
  for (const t of b!.targets) {
    const prev = a!.targets.find((p) => p.id === t.id);
    if (!prev) continue;
    const vx = (t.x - prev.x) / dt;
    const x = t.x + vx * leadMs;
    if (vx !== 0 && t.x > 250 && t.x < 750 && x > 250 && x < 750) return { x, y: t.y, sampledAt: b!.at };
  }
  return null;
}

/** Shoots at the targets until a shot's line went through one as drawn; every shot's answer must agree with the picture. */
async function hitATarget(page: Page, strict: boolean): Promise<{ shots: Shot[]; hit: Shot | undefined }> {
  const shots: Shot[] = [];
  let leadMs = 40;
  for (let i = 0; i < ATTEMPTS; i++) {
    const aim = await aimAtTarget(page, leadMs);
    if (!aim) {
      await page.waitForTimeout(100);
      continue;
    }
    const shot = await shoot(page, aim.x, aim.y);
    shots.push(shot);
    leadMs = Math.min(200, Math.max(0, shot.at - aim.sampledAt));
    expect(shot.result).not.toBe("lost");
    expect(shot.viewTick).toBeTypeOf("number");
    expect(shot.targets).toHaveLength(TARGETS);
    const d = depth(shot);
    if (strict) {
      if (d > MARGIN) expect(shot.result, `shot ${shot.seq} went ${d.toFixed(1)} into a drawn target`).toBe("hit");
      if (d < -MARGIN) expect(shot.result, `shot ${shot.seq} passed ${(-d).toFixed(1)} beside every drawn target`).toBe("miss");
    }
    if (d > MARGIN && (!strict || shot.result === "hit")) return { shots, hit: shot };
  }
  return { shots, hit: undefined };
}

/** A point whose line from the shooter passes far from every lane (the targets' lanes are y 120..320, x 50..950). */
async function emptySpace(page: Page): Promise<{ x: number; y: number }> {
  const m = await me(page);
  return { x: m.x < 500 ? m.x + 300 : m.x - 300, y: 500 };
}

describe("the range demo page", () => {
  it("draws moving targets; a click on one is a hit and scores, a click on empty space a miss", async () => {
    const errors: string[] = [];
    const page = await openRange("?name=marksman", errors);
    expect(await page.locator("#me").textContent()).toBe("marksman");
    expect(await page.locator("#history").textContent()).toBe("10");
    await expect.poll(() => page.evaluate(() => (window as any).__range.lagCompensation)).toBe(true);
    const shooter = await me(page);
    expect(shooter).toMatchObject({ kind: "player", name: "marksman" });
    expect(shooter.y).toBe(560); // on the firing line

    // The targets move: where they are drawn changes from frame to frame.
    const first = (await drawn(page)).filter((d) => d.kind === "target");
    await page.waitForTimeout(200);
    const later = (await drawn(page)).filter((d) => d.kind === "target");
    for (const t of first) {
      expect(t.hp).toBe(100);
      expect(Math.abs(later.find((l) => l.id === t.id)!.x - t.x), `target ${t.id}`).toBeGreaterThan(5);
    }
    expect(await score(page)).toEqual({ hits: 0, misses: 0, kills: 0 });

    // A hit: shown at once, and the score goes up.
    const { shots, hit } = await hitATarget(page, true);
    expect(hit, `no shot went through a drawn target in ${shots.length} shots`).toBeDefined();
    expect(await page.locator("#toast").textContent()).toBe("hit");
    expect(await page.locator("#toast").getAttribute("class")).toMatch(/\bshow\b.*\bhit\b|\bhit\b.*\bshow\b/);
    const hits = shots.filter((s) => s.result === "hit").length;
    const misses = shots.length - hits;
    await expect.poll(() => score(page)).toEqual({ hits, misses, kills: 0 });
    await expect.poll(() => shownScore(page)).toEqual({ hits, misses, kills: 0 });
    // Each hit took 10 hp off a target.
    await expect
      .poll(async () =>
        (await drawn(page)).filter((d) => d.kind === "target").reduce((sum, t) => sum + (100 - (t.hp ?? 100)), 0),
      )
      .toBe(10 * hits);

    // A miss: a shot through empty space.
    const empty = await emptySpace(page);
    const missed = await shoot(page, empty.x, empty.y);
    expect(depth(missed)).toBeLessThan(-TARGET_RADIUS);
    expect(missed.result).toBe("miss");
    expect(await page.locator("#toast").textContent()).toBe("miss");
    expect(await page.locator("#toast").getAttribute("class")).not.toMatch(/\bhit\b/);
    await expect.poll(() => score(page)).toEqual({ hits, misses: misses + 1, kills: 0 });
    await expect.poll(() => shownScore(page)).toEqual({ hits, misses: misses + 1, kills: 0 });

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "range.png") });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("?history=0 joins a range without lag compensation, and its shots are sent and answered", async () => {
    const errors: string[] = [];
    const page = await openRange("?history=0&name=plinker", errors);
    expect(await page.locator("#me").textContent()).toBe("plinker");
    expect(await page.locator("#mode-line b").textContent()).toBe("no");
    expect(await page.locator('#mode-line a[href="?"]').count()).toBe(1);
    await expect.poll(() => page.evaluate(() => (window as any).__range.lagCompensation)).toBe(false);

    // Shots at targets are sent and answered (hit or miss: without lag
    // compensation the shard checks them against where the targets are now).
    const { shots } = await hitATarget(page, false);
    expect(shots.length).toBeGreaterThan(0);
    for (const s of shots) expect(["hit", "miss"]).toContain(s.result);
    const empty = await emptySpace(page);
    const missed = await shoot(page, empty.x, empty.y);
    expect(missed.result).toBe("miss");
    const hits = shots.filter((s) => s.result === "hit").length;
    const misses = shots.length + 1 - hits;
    await expect.poll(() => score(page)).toEqual({ hits, misses, kills: 0 });
    await expect.poll(() => shownScore(page)).toEqual({ hits, misses, kills: 0 });
    expect(errors).toEqual([]);
    await page.close();
  });
});
