// The Node client against the real server: `tessera dev` on a scratch copy
// of examples/arena.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectShard, ShardClosedError, type ShardConnection } from "../../src/node.js";
import { TesseraServer } from "../helpers/tessera-server.js";

type Player = { id: string; x: number; y: number };
type Snap = { players: Player[] };
type Input = { move_to: { x: number; y: number } };

const PARAMS = { width: 800, height: 500 };
let server: TesseraServer;
const open: ShardConnection<Snap, Input>[] = [];

beforeAll(async () => {
  server = await TesseraServer.start();
});
afterAll(async () => {
  for (const c of open) c.close();
  await server?.stop();
  server?.removeApp();
});

async function player(shard: string, name: string): Promise<ShardConnection<Snap, Input>> {
  const joined = await server.join({ shard, kind: "arena", params: PARAMS, subscriber: name });
  expect(joined).toMatchObject({ shardId: shard, subscriberId: name });
  let first: string | undefined = joined.ticket;
  const conn = connectShard<Snap, Input>(joined.shardId, {
    subscriberId: joined.subscriberId,
    url: server.url,
    // A fresh ticket from the join endpoint for every reconnect.
    ticket: async () => {
      const t = first ?? (await server.join({ shard, kind: "arena", params: PARAMS, subscriber: name })).ticket;
      first = undefined;
      return t;
    },
    reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
  });
  open.push(conn);
  return conn;
}

/** Resolves with the first snapshot that satisfies `pred` (checking the current one first). */
function snapshotWhere(conn: ShardConnection<Snap, Input>, pred: (s: Snap) => boolean, ms = 10_000): Promise<Snap> {
  return new Promise((resolve, reject) => {
    if (conn.snapshot && pred(conn.snapshot)) return resolve(conn.snapshot);
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching snapshot in ${ms} ms; last: ${JSON.stringify(conn.snapshot)}`));
    }, ms);
    const off = conn.on("snapshot", (s) => {
      if (pred(s)) {
        clearTimeout(timer);
        off();
        resolve(s);
      }
    });
  });
}

const at = (id: string, x: number, y: number) => (s: Snap) =>
  s.players.some((p) => p.id === id && Math.abs(p.x - x) < 0.01 && Math.abs(p.y - y) < 0.01);

describe("the arena through connectShard", () => {
  it("two players see each other move", async () => {
    const ann = await player("arena-1", "ann");
    const bob = await player("arena-1", "bob");
    const [wa, wb] = await Promise.all([ann.ready, bob.ready]);
    expect(wa).toMatchObject({ shardId: "arena-1", subscriberId: "ann", codec: "msgpack", tickRate: 20 });
    expect(wb.subscriberId).toBe("bob");
    expect(ann.state).toBe("open");

    const acks: number[] = [];
    ann.on("ack", (s) => acks.push(s));
    const seq = ann.send({ move_to: { x: 120, y: 80 } });
    expect(seq).toBe(1);
    await snapshotWhere(bob, at("ann", 120, 80));
    bob.send({ move_to: { x: 640.5, y: 410.25 } });
    await snapshotWhere(ann, at("bob", 640.5, 410.25));
    // ann moves again: bob sees the position change.
    expect(ann.send({ move_to: { x: 300, y: 200 } })).toBe(2);
    await snapshotWhere(bob, at("ann", 300, 200));
    await expect.poll(() => acks).toEqual([1, 2]);
  });

  it("logs the shard's start and each player joining and leaving, one readable line each", async () => {
    const eve = await player("arena-log", "eve");
    await eve.ready;
    await expect.poll(() => server.log, { timeout: 10_000 }).toContain("eve joined shard arena-log");
    expect(server.log).toContain("shard arena-log (arena) started");
    eve.close();
    await expect.poll(() => server.log, { timeout: 10_000 }).toContain("eve left shard arena-log");
  });

  it("with --quiet logs none of that, but still the stops", async () => {
    const quiet = await TesseraServer.start({ args: ["--quiet"] });
    try {
      const joined = await quiet.join({ shard: "arena-q", kind: "arena", params: PARAMS, subscriber: "fay" });
      const conn = connectShard<Snap, Input>(joined.shardId, {
        subscriberId: joined.subscriberId,
        url: quiet.url,
        ticket: joined.ticket,
      });
      await conn.ready;
      conn.close();
      const stopped = await quiet.api("POST", "/api/shards/arena-q/stop");
      expect(stopped.status).toBe(200);
      await expect.poll(() => quiet.log, { timeout: 10_000 }).toContain("shard arena-q (arena) stopped");
      expect(quiet.log).not.toContain("started");
      expect(quiet.log).not.toContain("joined shard");
    } finally {
      await quiet.stop();
      quiet.removeApp();
    }
  });

  it("reports the shard's rejection for a move outside the arena", async () => {
    const cat = await player("arena-1", "cat");
    await cat.ready;
    const rejected = new Promise((resolve) => cat.on("reject", resolve));
    const seq = cat.send({ move_to: { x: -50, y: 100 } });
    expect(await rejected).toEqual({ seq, error: "outside the arena" });
    expect(cat.lastRejection).toEqual({ seq, error: "outside the arena" });
    // The connection stays usable.
    cat.send({ move_to: { x: 10, y: 10 } });
    await snapshotWhere(cat, at("cat", 10, 10));
  });

  it("measures the round trip", async () => {
    const dan = await player("arena-1", "dan");
    await dan.ready;
    await expect.poll(() => dan.rttMs, { timeout: 5000 }).toBeGreaterThanOrEqual(0);
  });

  it("fails with a clear error when the server refuses the ticket", async () => {
    const forged = connectShard("arena-1", { url: server.url, ticket: "v1.eyJzIjoiYXJlbmEtMSJ9.bm90LWEtc2lnbmF0dXJl" });
    open.push(forged as ShardConnection<Snap, Input>);
    const err = await forged.ready.then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(ShardClosedError);
    expect((err as ShardClosedError).code).toBe(4001);
    expect(err!.message).toMatch(/^tessera: the server refused the ticket \(shard "arena-1", close 4001 ticket_invalid/);
    expect(forged.state).toBe("closed");

    // A valid ticket for another shard: 4003, and a fresh ticket (the same kind of mistake) fails too.
    const other = await server.join({ shard: "arena-2", kind: "arena", params: PARAMS, subscriber: "eve" });
    let calls = 0;
    const wrong = connectShard("arena-1", {
      url: server.url,
      ticket: async () => (calls++, other.ticket),
      reconnect: { initialDelayMs: 50 },
    });
    open.push(wrong as ShardConnection<Snap, Input>);
    const err2 = await wrong.ready.then(
      () => null,
      (e: Error) => e,
    );
    expect((err2 as ShardClosedError).code).toBe(4003);
    expect(err2!.message).toContain("ticket_wrong_shard");
    expect(calls).toBe(2);
  });

  it("reconnects after the server restarts, with a fresh ticket", async () => {
    const fay = await player("arena-1", "fay");
    await fay.ready;
    fay.send({ move_to: { x: 222, y: 111 } });
    await snapshotWhere(fay, at("fay", 222, 111));
    const states: string[] = [];
    fay.on("state", (s) => states.push(s));

    const old = server;
    server = await server.restart();
    // The stopped server said what it saved: every running arena (it has
    // tessera_save), arena-1 among them.
    expect(old.log).toMatch(/tessera: stopped; ([1-9]\d*) of \1 running shards? saved\n/);
    await expect.poll(() => fay.state, { timeout: 20_000, interval: 50 }).toBe("open");
    expect(states).toEqual(["connecting", "open"]);
    // The shard was saved and restored: fay is where she was, and can move on.
    await snapshotWhere(fay, at("fay", 222, 111));
    fay.send({ move_to: { x: 400, y: 250 } });
    await snapshotWhere(fay, at("fay", 400, 250));
  });
});
