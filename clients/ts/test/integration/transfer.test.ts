// connectShard following a move between shards on the real server: `tessera
// dev` on a scratch app whose kind `talk` is the test guest of
// tests/guests/talk (built to <build>/src/shard/guests/talk.wasm, or
// $TESSERA_TALK_WASM). The admin API moves a player from shard talk-a to
// talk-b; the client must end up on talk-b with its state, get frames there
// and send its inputs there.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectShard, type ShardConnection, type ShardTransfer } from "../../src/node.js";
import { TESSERA_BIN, TesseraServer } from "../helpers/tessera-server.js";

type Snap = { players: Record<string, { n: number; from: string }>; ticks: number };
type Input = { join: Record<string, never> } | { step: Record<string, never> };

const TALK_WASM = process.env.TESSERA_TALK_WASM
  ? resolve(process.env.TESSERA_TALK_WASM)
  : join(dirname(TESSERA_BIN), "../../src/shard/guests/talk.wasm");

let server: TesseraServer;
const open: ShardConnection<Snap, Input>[] = [];

/** A scratch app with one kind, `talk`, the prebuilt test guest. */
function talkApp(): string {
  if (!existsSync(TALK_WASM)) {
    throw new Error(`no talk test guest at ${TALK_WASM}: build it (cmake --build build) or set TESSERA_TALK_WASM`);
  }
  const app = join(mkdtempSync(join(tmpdir(), "tessera-ts-")), "talk");
  mkdirSync(app);
  writeFileSync(
    join(app, "tessera.json"),
    JSON.stringify({ name: "talk-app", shards: [{ name: "talk", wasm: TALK_WASM, codec: "msgpack", tickRate: 20 }] }),
  );
  return app;
}

beforeAll(async () => {
  server = await TesseraServer.start({ appDir: talkApp() });
});
afterAll(async () => {
  for (const c of open) c.close();
  await server?.stop();
  server?.removeApp();
});

const PARAMS = { groups: [], refuse: null, require_claim: null, refuse_return: false };
const joinTalk = (shard: string, subscriber: string) => server.join({ shard, kind: "talk", params: PARAMS, subscriber });

/** Resolves with the first snapshot that satisfies `pred` (checking the current one first). */
function snapshotWhere(conn: ShardConnection<Snap, Input>, pred: (s: Snap) => boolean, ms = 15_000): Promise<Snap> {
  return new Promise((resolvePromise, reject) => {
    if (conn.snapshot && pred(conn.snapshot)) return resolvePromise(conn.snapshot);
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching snapshot in ${ms} ms on ${conn.shardId}; last: ${JSON.stringify(conn.snapshot)}`));
    }, ms);
    const off = conn.on("snapshot", (s) => {
      if (pred(s)) {
        clearTimeout(timer);
        off();
        resolvePromise(s);
      }
    });
  });
}

describe("moving a player between talk shards", () => {
  it("follows the TRANSFER to the target: frames and inputs there, onTransfer once", async () => {
    // Both shards exist (a join creates a shard); the player joins talk-a.
    await joinTalk("talk-b", "nobody");
    const first = await joinTalk("talk-a", "ann");
    const moves: ShardTransfer[] = [];
    const frames: string[] = [];
    const conn = connectShard<Snap, Input>("talk-a", {
      subscriberId: "ann",
      url: server.url,
      ticket: async (shard) => (shard === "talk-a" ? first.ticket : (await joinTalk(shard, "ann")).ticket),
      reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
      onTransfer: (t) => moves.push(t),
    });
    open.push(conn);
    conn.on("frame", () => frames.push(conn.shardId));
    const errors: Error[] = [];
    conn.on("error", (e) => errors.push(e));
    await conn.ready;
    conn.send({ join: {} });
    conn.send({ step: {} });
    conn.send({ step: {} });
    await snapshotWhere(conn, (s) => s.players?.ann?.n === 2);

    const moved = await server.api("POST", "/api/shards/talk-a/transfer", { subscriber: "ann", to: "talk-b" });
    expect(moved).toEqual({ status: 200, json: { moved: true, to: "talk-b" } });

    // On talk-b with the state it had (n = 2), knowing it came from talk-a.
    await snapshotWhere(conn, (s) => s.players?.ann?.n === 2 && s.players.ann.from === "talk-a");
    expect(conn.shardId).toBe("talk-b");
    expect(conn.transfers).toBe(1);
    expect(conn.state).toBe("open");
    expect(conn.welcome?.shardId).toBe("talk-b");
    expect(moves).toEqual([{ from: "talk-a", to: "talk-b" }]);
    expect(errors).toEqual([]);

    // Inputs go to talk-b now and are acked there.
    const acks: number[] = [];
    conn.on("ack", (seq) => acks.push(seq));
    const seq = conn.send({ step: {} });
    await snapshotWhere(conn, (s) => s.players?.ann?.n === 3);
    await expect.poll(() => acks, { timeout: 10_000 }).toContain(seq);
    // Frames keep coming from talk-b.
    const before = frames.filter((s) => s === "talk-b").length;
    await expect.poll(() => frames.filter((s) => s === "talk-b").length, { timeout: 10_000 }).toBeGreaterThan(before + 5);
    expect(moves).toHaveLength(1);

    // A connection to the source with a ticket issued before the move
    // gets TRANSFER instead of WELCOME and follows it.
    const stale = connectShard<Snap, Input>("talk-a", {
      url: server.url,
      ticket: first.ticket,
      reconnect: false,
    });
    open.push(stale);
    const staleMoves: ShardTransfer[] = [];
    stale.on("transfer", (t) => staleMoves.push(t));
    const welcome = await stale.ready;
    expect(welcome.shardId).toBe("talk-b");
    expect(staleMoves).toEqual([{ from: "talk-a", to: "talk-b" }]);
    await snapshotWhere(stale, (s) => s.players?.ann?.n === 3);
    expect(stale.snapshot?.players.ann).toBeDefined();
  });
});
