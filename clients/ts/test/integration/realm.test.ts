// connectRealm against the real server: `tessera dev` on a scratch copy of
// examples/lobby (a durable "match" realm and an ephemeral "presence"
// realm). Two avatars read and write under the kind's rules, one never
// receives what it may not read, a restart resumes by replay, an ephemeral
// realm's restart hydrates a new epoch, a kill -9 in the middle of a
// write burst loses no write the server acknowledged, and the match
// module's rematch alarm fires on time and after a kill -9.
import { readFileSync, writeFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRealm, type RealmConnection, type RealmWriteOutcome } from "../../src/node.js";
import { scratchApps } from "../helpers/scratch-apps.js";
import { TesseraServer } from "../helpers/tessera-server.js";

let server: TesseraServer;
let appDir: string;
let port: number;
const open: RealmConnection[] = [];

/** A finished match starts over this long after its last move (the
 * lobby's default is 10 s). */
const REMATCH_MS = 1500;

beforeAll(async () => {
  [appDir] = scratchApps("lobby") as [string];
  const config = joinPath(appDir, "tessera.json");
  const app = JSON.parse(readFileSync(config, "utf8"));
  const match = app.realms.find((r: { name: string }) => r.name === "match");
  match.initialState.settings.rematchAfterMs = REMATCH_MS;
  writeFileSync(config, JSON.stringify(app, null, 2));
  server = await TesseraServer.start({ appDir });
  port = server.port;
});
afterAll(async () => {
  for (const c of open) c.close();
  await server?.stop();
  server?.removeApp();
});

async function ticketFor(kind: string, key: string, subscriber: string): Promise<string> {
  const r = await fetch(`${server.url}/api/realms/${kind}/${key}/join`, {
    method: "POST",
    body: JSON.stringify({ subscriber }),
  });
  const body = (await r.json()) as { ticket: string; subscriber: string; url: string };
  expect(r.status, JSON.stringify(body)).toBe(200);
  expect(body.subscriber).toBe(subscriber);
  expect(body.url).toBe(`/realm/${kind}/${key}`);
  return body.ticket;
}

function join(kind: string, key: string, avatar: string): RealmConnection {
  const conn = connectRealm(server.url, kind, key, {
    // A fresh ticket for every (re)connect, from whichever server runs now.
    ticket: () => ticketFor(kind, key, avatar),
    reconnect: { initialDelayMs: 100, maxDelayMs: 500 },
  });
  open.push(conn);
  return conn;
}

/** Resolves once `pred` holds for the connection's document. */
function documentWhere(conn: RealmConnection, pred: (d: any) => boolean, ms = 10_000): Promise<any> {
  return new Promise((resolve, reject) => {
    if (conn.state === "open" && pred(conn.document)) return resolve(conn.document);
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching document in ${ms} ms; last: ${JSON.stringify(conn.document)}`));
    }, ms);
    const off = conn.on("change", (d) => {
      if (pred(d)) {
        clearTimeout(timer);
        off();
        resolve(d);
      }
    });
  });
}

async function committed(done: Promise<RealmWriteOutcome>): Promise<number> {
  const outcome = await done;
  expect(outcome.status, JSON.stringify(outcome)).toBe("committed");
  return (outcome as { version: number }).version;
}

describe("realms on the real server", () => {
  it("two avatars write under the rules and see each other's commits", async () => {
    const a = join("match", "room-1", "alice");
    const b = join("match", "room-1", "bob");
    const [attachA, attachB] = await Promise.all([a.ready, b.ready]);
    expect(attachA).toMatchObject({ mode: "hydrate", avatar: "alice", epoch: 1, version: 0 });
    expect(attachB.avatar).toBe("bob");
    expect(attachA.limits.maxPatchesPerFrame).toBe(64);

    expect(attachA.version).toBe(0);
    expect(a.document).toEqual({ seats: {}, moves: [], chat: [], notes: {}, settings: { rematchAfterMs: REMATCH_MS } });
    const v1 = await committed(a.set(["seats", "alice"], "X").done);
    await documentWhere(b, (d) => d.seats?.alice === "X");
    expect(b.version).toBe(v1);

    // bob may not take alice's seat; nothing of it applies anywhere.
    const refused = await b.set(["seats", "alice"], "O").done;
    expect(refused).toMatchObject({ status: "rejected", code: "permission_denied" });
    expect((b.document as any).seats.alice).toBe("X");

    // An append-only list takes appends from both.
    await committed(a.append(["chat"], "alice: hi").done);
    await committed(b.append(["chat"], "bob: hello").done);
    await documentWhere(a, (d) => d.chat?.length === 2);
    expect((await b.delete(["chat"]).done).status).toBe("rejected");
  });

  it("intents go to the match module and answer with its verdict", async () => {
    await server.waitForModule("match-logic");
    const x = join("match", "room-5", "xena");
    const o = join("match", "room-5", "otto");
    await Promise.all([x.ready, o.ready]);
    await committed(x.set(["seats", "xena"], "X").done);
    await committed(o.set(["seats", "otto"], "O").done);
    expect(await o.intent("move", { cell: 0 })).toEqual({
      status: "rejected",
      code: "refused",
      message: "it is X's turn",
    });
    const done = await x.intent("move", { cell: 4 });
    expect(done.status).toBe("done");
    expect(x.version).toBe((done as { version: number }).version);
    await documentWhere(o, (d) => d.moves.length === 1);
    expect((o.document as any).moves[0]).toEqual({ by: "xena", cell: 4, mark: "X" });
  });

  it("never sends a reader what it may not read", async () => {
    const a = join("match", "room-2", "alice");
    const b = join("match", "room-2", "bob");
    await Promise.all([a.ready, b.ready]);
    await committed(a.set(["notes", "alice"], { plan: "corner" }).done);
    await committed(a.append(["chat"], "hi").done);
    await documentWhere(b, (d) => d.chat.length === 1);
    expect(b.document.notes).toEqual({});
    expect((a.document as any).notes.alice).toEqual({ plan: "corner" });
    // A late joiner's hydrate is sliced too.
    const c = join("match", "room-2", "carol");
    await c.ready;
    expect(c.document.notes).toEqual({});
    expect(c.document.chat).toEqual(["hi"]);
  });

  it("a ticket for another realm is refused before any state", async () => {
    const wrong = await ticketFor("match", "room-9", "mallory");
    const conn = connectRealm(server.url, "match", "room-1", { ticket: wrong, reconnect: false });
    open.push(conn);
    const closed = await new Promise<{ code: number }>((resolve) => conn.on("close", resolve));
    expect(closed.code).toBe(4003);
    expect(conn.document).toEqual({});
    expect(conn.version).toBe(0);
  });

  it("resumes a durable realm by replay after a restart, and an ephemeral one hydrates a new epoch", async () => {
    const a = join("match", "room-3", "alice");
    const p = join("presence", "hall", "alice");
    await Promise.all([a.ready, p.ready]);
    await committed(a.set(["seats", "alice"], "X").done);
    await committed(p.set(["cursors", "alice"], { x: 1, y: 2 }).done);
    const presenceEpoch = p.epoch;
    const version = a.version;

    const opens: string[] = [];
    a.on("open", (at) => opens.push(at.mode));
    await server.stop("SIGTERM");
    server = await TesseraServer.start({ appDir, port });

    await expect.poll(() => opens.length, { timeout: 30_000 }).toBeGreaterThan(0);
    expect(opens[0]).toBe("resume");
    expect(a.version).toBe(version);
    expect(a.document.seats).toEqual({ alice: "X" });
    await documentWhere(p, (d) => d.cursors && d.cursors.alice === undefined, 30_000);
    expect(p.epoch).not.toBe(presenceEpoch);
    // And writing goes on at the next version.
    expect(await committed(a.set(["seats", "alice"], "Y").done)).toBe(version + 1);
  });

  it("a finished game starts over by itself: the module's rematch alarm, on time and across a kill -9", async () => {
    await server.waitForModule("match-logic");
    const play = async (key: string) => {
      const x = join("match", key, "xena");
      const o = join("match", key, "otto");
      await Promise.all([x.ready, o.ready]);
      await committed(x.set(["seats", "xena"], "X").done);
      await committed(o.set(["seats", "otto"], "O").done);
      await documentWhere(x, (d) => d.seats?.otto === "O");
      // X takes the top row.
      const moves: [RealmConnection, number][] = [[x, 0], [o, 3], [x, 1], [o, 4], [x, 2]];
      let last = 0;
      for (const [who, cell] of moves) {
        const outcome = await who.intent("move", { cell });
        expect(outcome.status, JSON.stringify(outcome)).toBe("done");
        last = (outcome as { version: number }).version;
      }
      await documentWhere(o, (d) => d.moves?.length === 5);
      return { x, o, last };
    };

    // On time: not before REMATCH_MS, then the board is empty again.
    const first = await play("rematch-1");
    const wonAt = Date.now();
    const cleared = await documentWhere(first.o, (d) => d.moves?.length === 0, 15_000);
    expect(Date.now() - wonAt).toBeGreaterThanOrEqual(REMATCH_MS - 200);
    expect(cleared.seats).toEqual({ xena: "X", otto: "O" });
    expect(first.o.version).toBe(first.last + 1);

    // The alarm is stored with the winning move: a kill -9 right after it
    // and a restart still start the game over, once.
    const second = await play("rematch-2");
    const listed = await server.api("GET", "/api/realms/match/rematch-2/alarms");
    expect(listed.status).toBe(200);
    expect((listed.json as any).alarms).toMatchObject([{ name: "rematch", failures: 0 }]);
    await server.stop("SIGKILL");
    server = await TesseraServer.start({ appDir, port });
    await server.waitForModule("match-logic");
    const after = await documentWhere(second.x, (d) => d.moves?.length === 0, 30_000);
    expect(after.seats).toEqual({ xena: "X", otto: "O" });
    await new Promise((r) => setTimeout(r, REMATCH_MS));
    const watcher = join("match", "rematch-2", "wanda");
    await watcher.ready;
    expect(watcher.version).toBe(second.last + 1);
  });

  it("the admin update path commits a server patch past the rules and clients see it", async () => {
    const a = join("match", "updated", "alice");
    await a.ready;
    const before = a.version;
    const r = await server.api("POST", "/api/realms/match/updated/update", {
      patch: [{ op: "set", path: ["notes", "alice"], value: { from: "the server" } }],
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect((r.json as any).version).toBe(before + 1);
    await documentWhere(a, (d) => d.notes?.alice?.from === "the server");
    const bad = await server.api("POST", "/api/realms/match/updated/update", { patch: [{ op: "nope" }] });
    expect(bad.status).toBe(400);
    const unauthorized = await fetch(`${server.url}/api/realms/match/updated/update`, {
      method: "POST",
      body: JSON.stringify({ patch: [] }),
    });
    expect(unauthorized.status).toBe(401);
  });

  it("a kill -9 in the middle of a write burst loses no acknowledged write", async () => {
    const a = join("match", "burst", "alice");
    await a.ready;
    const acked: number[] = [];
    const writes = Array.from({ length: 300 }, (_, i) => {
      const w = a.append(["chat"], i);
      void w.done.then((o) => {
        if (o.status === "committed") acked.push(i);
      });
      return w;
    });
    // Kill once part of the burst is acknowledged.
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (acked.length >= 20) {
          clearInterval(check);
          resolve();
        }
      }, 1);
    });
    await server.stop("SIGKILL");
    server = await TesseraServer.start({ appDir, port });
    // Writes in flight at the kill are "unknown"; those never sent go to
    // the new server once the client is back.
    const outcomes = await Promise.race([
      Promise.all(writes.map((w) => w.done)),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("writes never settled")), 30_000)),
    ]);
    expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);

    const fresh = join("match", "burst", "bob");
    await fresh.ready;
    const chat = fresh.document.chat as number[];
    // Every acknowledged write is there once, in order; nothing else was
    // ever acknowledged, and no value appears twice.
    for (const i of acked) expect(chat).toContain(i);
    expect(new Set(chat).size).toBe(chat.length);
    expect([...chat].sort((x, y) => x - y)).toEqual(chat);
    expect(chat.length).toBeGreaterThanOrEqual(acked.length);
  });
});
