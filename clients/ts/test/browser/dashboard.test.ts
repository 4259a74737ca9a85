// The dashboard (/_dashboard) in headless Chromium (playwright-core,
// /usr/bin/chromium or $CHROMIUM_PATH) against the real `tessera dev` on a
// scratch arena: opened with the link the banner prints, it takes the
// token from the fragment and drops it from the address bar, lists the
// joined shard with its kind and subscriber, measures ~20 ticks/s (the
// arena's rate), charts the shard when its row is clicked, and stops it
// with its button. Screenshot: build/artifacts/dashboard.png (or
// $ARTIFACTS_DIR/dashboard.png).
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectShard, type ShardConnection } from "../../src/node.js";
import { REPO, TesseraServer } from "../helpers/tessera-server.js";

const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? join(REPO, "build/artifacts"));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let server: TesseraServer;
let browser: Browser;
const open: ShardConnection[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([
    TesseraServer.start(),
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] }),
  ]);
});

afterAll(async () => {
  for (const c of open) c.close();
  await browser?.close();
  await server?.stop();
  server?.removeApp();
});

describe("the dashboard", () => {
  it("shows a live shard, its tick rate and charts, and stops it", async () => {
    // The banner's link.
    const link = /dashboard: +(\S+)/.exec(server.log)?.[1];
    expect(link).toBe(`${server.url}/_dashboard#token=${server.adminToken}`);

    const joined = await server.join({ shard: "arena-1", kind: "arena", subscriber: "carol" });
    const conn = connectShard(joined.shardId, {
      subscriberId: joined.subscriberId,
      url: server.url,
      ticket: joined.ticket,
    });
    open.push(conn);
    await conn.ready;

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("dialog", (d) => void d.accept());
    const adminCalls: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/")) adminCalls.push(r.headers()["authorization"] ?? "");
    });
    await page.goto(link!);

    const row = page.locator('tr[data-shard="arena-1"]');
    await row.waitFor({ timeout: 10_000 });
    // The token left the address bar; the page asked with it.
    expect(await page.evaluate(() => location.href)).toBe(`${server.url}/_dashboard`);
    expect(await page.evaluate(() => location.href.includes("token"))).toBe(false);
    expect(adminCalls.length).toBeGreaterThan(0);
    expect(adminCalls.every((a) => a === `Bearer ${server.adminToken}`)).toBe(true);

    await expect.poll(() => row.locator('[data-field="kind"]').textContent()).toBe("arena");
    await expect.poll(() => row.locator('[data-field="status"]').textContent()).toBe("running");
    await expect.poll(() => row.locator('[data-field="subscribers"]').textContent()).toBe("1");
    await expect
      .poll(async () => Number(await row.locator('[data-field="rate"]').textContent()), { timeout: 15_000 })
      .toBeGreaterThanOrEqual(15);
    const rate = Number(await row.locator('[data-field="rate"]').textContent());
    expect(rate).toBeGreaterThanOrEqual(15);
    expect(rate).toBeLessThanOrEqual(25);
    expect(await row.locator('[data-field="module"]').textContent()).toMatch(/^[0-9a-f]{12}$/);
    const kindRow = page.locator('#kinds tr[data-kind="arena"]');
    await kindRow.waitFor();
    expect(await kindRow.locator('[data-field="version"]').textContent()).toMatch(/^[0-9a-f]{12}$/);

    // Its charts: a line drawn on each canvas after a few polls.
    await row.locator('[data-field="id"]').click();
    await page.locator("#detail").waitFor();
    expect(await page.locator("#detail-id").textContent()).toBe("arena-1");
    await page.waitForTimeout(2_500);
    const inked = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLCanvasElement>("#detail canvas")).map((c) => {
        const { data } = c.getContext("2d")!.getImageData(0, 0, c.width, c.height);
        let blue = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i + 2]! > 150 && data[i]! < 80 && data[i + 3]! > 0) blue++;
        return blue;
      }),
    );
    expect(inked).toHaveLength(4);
    for (const n of inked) expect(n).toBeGreaterThan(0);
    await expect.poll(() => page.locator("#log").textContent()).not.toBe("");

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "dashboard.png"), fullPage: true });

    await row.locator('button[data-action="stop"]').click();
    await expect.poll(() => row.locator('[data-field="status"]').textContent(), { timeout: 5_000 }).toMatch(/^stopped/);
    await expect.poll(() => row.locator('[data-field="stop"]').textContent()).toContain("stopped by request");
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-stopped.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
