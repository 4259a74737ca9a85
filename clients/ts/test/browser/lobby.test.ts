// The lobby demo page in headless Chromium (playwright-core, /usr/bin/chromium
// or $CHROMIUM_PATH): `tessera dev ARENA LOBBY --mount /sdk=clients/ts/dist`
// serves it at /lobby/. Two pages (alice, bob) in one room join the realms
// presence/<room> and match/<room>: each sees the other's cursor and both
// in "who is here", alice takes X and bob O, a move on one board shows on
// the other, moves another client appends out of turn are ignored by both
// boards, bob's page reloads and resumes by replay (also after missing a
// move while away), and when alice's page closes bob's list drops her.
// Screenshot: build/artifacts/lobby.png (or $ARTIFACTS_DIR/lobby.png).
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRealm, type RealmConnection } from "../../src/node.js";
import { startDemoPages, stopDemoPages } from "../helpers/demo-pages.js";
import { REPO, type TesseraServer } from "../helpers/tessera-server.js";

const ARTIFACTS = resolve(process.env.ARTIFACTS_DIR ?? join(REPO, "build/artifacts"));
const ROOM = "r1";

/** What a page's window.__lobby holds (the parts the test reads). */
interface RealmView {
  state: string;
  epoch: number;
  version: number;
  pending: number;
  lastAttach: "hydrate" | "resume" | null;
  attach: { mode: string; version: number; head: number } | null;
}
interface Lobby {
  me: string;
  presence: RealmView;
  match: RealmView & {
    board: ("X" | "O" | null)[];
    moves: { by: string; cell: number }[];
    seats: Record<string, "X" | "O">;
    turn: "X" | "O" | null;
    winner: string | null;
  };
  here: string[];
  cursors: Record<string, { x: number; y: number }>;
}

let server: TesseraServer;
let browser: Browser;

beforeAll(async () => {
  ({ server, browser } = await startDemoPages("lobby"));
  await server.waitForModule("match-logic"); // moves go through it
});

afterAll(() => stopDemoPages({ server, browser }));

const lobbyUrl = (name: string) => `${server.url}/lobby/?name=${name}&room=${ROOM}`;

const lobby = (page: Page) =>
  page.evaluate(() => {
    const l = (window as any).__lobby;
    const view = (v: any) => ({ state: v.state, epoch: v.epoch, version: v.version, pending: v.pending, lastAttach: v.lastAttach, attach: v.attach });
    return {
      me: l.me,
      presence: view(l.presence),
      match: { ...view(l.match), board: l.match.board, moves: l.match.moves, seats: l.match.seats, turn: l.match.turn, winner: l.match.winner },
      here: l.here,
      cursors: l.cursors,
    } as Lobby;
  });

/** Waits until both realms of the page are attached and caught up to their attach's head. */
async function attached(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const l = (window as any).__lobby;
      const ok = (v: any) => v?.state === "open" && v.attach !== null && v.version >= v.attach.head;
      return l && ok(l.presence) && ok(l.match);
    },
    null,
    { timeout: 30_000 },
  );
}

function watchErrors(page: Page, errors: string[]): void {
  page.on("pageerror", (e) => errors.push(`${page.url()}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
}

async function openLobby(name: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  watchErrors(page, errors);
  await page.goto(lobbyUrl(name));
  expect(await page.title()).toBe("tessera · lobby");
  await attached(page);
  return page;
}

/** Moves the mouse to (fx, fy), fractions of the board area. */
async function pointAt(page: Page, fx: number, fy: number): Promise<void> {
  const box = (await page.locator("#stage").boundingBox())!;
  await page.mouse.move(box.x + fx * box.width, box.y + fy * box.height, { steps: 4 });
}

/** Where the page draws `who`'s cursor, as fractions of the board area (null: not drawn), and its label. */
const drawnCursor = (page: Page, who: string) =>
  page.evaluate((who) => {
    const div = document.querySelector<HTMLElement>(`#cursors .cursor[data-avatar="${who}"]`);
    if (!div) return null;
    const s = document.getElementById("stage")!.getBoundingClientRect();
    const c = div.getBoundingClientRect();
    return { x: (c.left - s.left) / s.width, y: (c.top - s.top) / s.height, label: div.textContent };
  }, who);

const hereList = (page: Page) => page.locator("#here li").evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.avatar));
const boardText = (page: Page) => page.locator("#board button").evaluateAll((bs) => bs.map((b) => b.textContent || null));

/** Clicks a cell and waits until the move is confirmed (nothing pending in match). */
async function play(page: Page, cell: number): Promise<void> {
  await page.locator(`#board button[data-cell="${cell}"]`).click();
  await page.waitForFunction(
    (cell) => {
      const m = (window as any).__lobby.match;
      return m.pending === 0 && m.moves.some((x: any) => x.cell === cell);
    },
    cell,
    { timeout: 10_000 },
  );
}

async function realmTicket(kind: string, subscriber: string): Promise<string> {
  const r = await fetch(`${server.url}/api/realms/${kind}/${ROOM}/join`, { method: "POST", body: JSON.stringify({ subscriber }) });
  const body = (await r.json()) as { ticket: string };
  expect(r.status, JSON.stringify(body)).toBe(200);
  return body.ticket;
}

describe("the lobby demo page", () => {
  it("shows cursors and who is here, plays a match across pages, resumes a reloaded page by replay and drops a page that left", async () => {
    const errors: string[] = [];
    const alice = await openLobby("alice", errors);
    await expect.poll(async () => (await lobby(alice)).match.seats.alice).toBe("X");
    const bob = await openLobby("bob", errors);
    await expect.poll(async () => (await lobby(bob)).match.seats).toEqual({ alice: "X", bob: "O" });
    await expect.poll(async () => (await lobby(alice)).match.seats).toEqual({ alice: "X", bob: "O" });
    expect((await lobby(alice)).match.lastAttach).toBe("hydrate");
    expect((await lobby(bob)).match.lastAttach).toBe("hydrate");
    await expect.poll(() => bob.locator('#seats li[data-mark="O"]').textContent()).toBe("Obob(you)");

    // Both are here, on both pages.
    for (const page of [alice, bob]) {
      await expect.poll(async () => (await lobby(page)).here).toEqual(["alice", "bob"]);
      await expect.poll(() => hereList(page)).toEqual(["alice", "bob"]);
    }

    // Each page's cursor shows on the other, where it points.
    await pointAt(alice, 0.25, 0.4);
    await pointAt(bob, 0.7, 0.15);
    for (const [page, other, fx, fy] of [
      [bob, "alice", 0.25, 0.4],
      [alice, "bob", 0.7, 0.15],
    ] as const) {
      await expect
        .poll(async () => {
          const c = (await lobby(page)).cursors[other];
          return c !== undefined && Math.abs(c.x - fx) < 0.01 && Math.abs(c.y - fy) < 0.01;
        })
        .toBe(true);
      await expect
        .poll(async () => {
          const d = await drawnCursor(page, other);
          return d !== null && Math.abs(d.x - fx) < 0.01 && Math.abs(d.y - fy) < 0.01 && d.label === other;
        })
        .toBe(true);
    }
    // A cursor that moves again follows.
    await pointAt(alice, 0.6, 0.8);
    await expect
      .poll(async () => {
        const d = await drawnCursor(bob, "alice");
        return d !== null && Math.abs(d.x - 0.6) < 0.01 && Math.abs(d.y - 0.8) < 0.01;
      })
      .toBe(true);
    expect(await drawnCursor(alice, "alice")).toBeNull(); // its own is the real pointer

    // Alice (X) moves first; her move shows on bob's board, bob's on hers.
    await play(alice, 4);
    await expect.poll(async () => (await lobby(bob)).match.board[4]).toBe("X");
    await expect.poll(() => boardText(bob)).toEqual([null, null, null, null, "X", null, null, null, null]);
    expect(await bob.locator("#match-status").textContent()).toBe("Your turn (O).");
    await play(bob, 0);
    await expect.poll(() => boardText(alice)).toEqual(["O", null, null, null, "X", null, null, null, null]);
    await alice.locator("#chat-input").fill("good luck, bob");
    await alice.locator("#chat-input").press("Enter");
    await expect.poll(() => bob.locator("#chat li").allTextContents()).toEqual(["alicegood luck, bob"]);

    // Bob reloads: both realms resume from what the page kept.
    const before = await lobby(bob);
    await bob.reload();
    await attached(bob);
    const reloaded = await lobby(bob);
    expect(reloaded.match.lastAttach).toBe("resume");
    expect(reloaded.presence.lastAttach).toBe("resume");
    expect(reloaded.match.epoch).toBe(before.match.epoch);
    expect(reloaded.match.attach!.version).toBe(before.match.version);
    expect(reloaded.match.board).toEqual(["O", null, null, null, "X", null, null, null, null]);
    expect(await boardText(bob)).toEqual(["O", null, null, null, "X", null, null, null, null]);
    expect(await bob.locator("#match-attach").textContent()).toBe("resume");
    await expect.poll(async () => (await lobby(bob)).here).toEqual(["alice", "bob"]);
    await expect.poll(() => bob.locator("#chat li").allTextContents()).toEqual(["alicegood luck, bob"]);

    // Bob goes away; alice moves; bob comes back and the replay brings the move.
    const away = await lobby(bob);
    await bob.goto("about:blank");
    await play(alice, 8);
    const aliceNow = await lobby(alice);
    expect(aliceNow.match.version).toBeGreaterThan(away.match.version);
    await bob.goto(lobbyUrl("bob"));
    await attached(bob);
    const back = await lobby(bob);
    expect(back.match.lastAttach).toBe("resume");
    expect(back.match.attach!.version).toBe(away.match.version);
    expect(back.match.attach!.head).toBeGreaterThanOrEqual(aliceNow.match.version);
    expect(back.match.board).toEqual(["O", null, null, null, "X", null, null, null, "X"]);
    await expect.poll(() => boardText(bob)).toEqual(["O", null, null, null, "X", null, null, null, "X"]);
    expect(back.match.turn).toBe("O");

    // The match module refuses moves against the rules, and clients cannot
    // append moves themselves: both boards stay as they were.
    const carol: RealmConnection = connectRealm(server.url, "match", ROOM, { ticket: () => realmTicket("match", "carol") });
    try {
      await carol.ready;
      expect(await carol.intent("move", { cell: 1 })).toMatchObject({ status: "rejected", code: "refused" });
      expect((await carol.append(["moves"], { by: "bob", cell: 1 }).done).status).toBe("rejected");
    } finally {
      carol.close();
    }
    for (const page of [alice, bob]) {
      const l = await lobby(page);
      expect(l.match.moves.length).toBe(3);
      expect(l.match.board).toEqual(["O", null, null, null, "X", null, null, null, "X"]);
      expect(l.match.turn).toBe("O");
    }
    await play(bob, 2);
    await expect.poll(() => boardText(alice)).toEqual(["O", null, "O", null, "X", null, null, null, "X"]);

    await pointAt(alice, 0.3, 0.55);
    await expect.poll(async () => (await drawnCursor(bob, "alice")) !== null).toBe(true);
    mkdirSync(ARTIFACTS, { recursive: true });
    await bob.screenshot({ path: join(ARTIFACTS, "lobby.png") });

    // Alice leaves: the server detaches her and prunes her presence rows.
    await alice.close();
    await expect.poll(async () => (await lobby(bob)).here, { timeout: 10_000 }).toEqual(["bob"]);
    await expect.poll(() => hereList(bob)).toEqual(["bob"]);
    await expect.poll(() => drawnCursor(bob, "alice")).toBeNull();
    expect((await lobby(bob)).cursors.alice).toBeUndefined();
    // The match is durable: her seat and moves stay.
    expect((await lobby(bob)).match.seats.alice).toBe("X");

    expect(errors).toEqual([]);
    await bob.close();
  });
});
