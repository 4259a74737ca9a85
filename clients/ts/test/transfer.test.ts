// connectShard following TRANSFER (the player moved to another shard), with
// the WebSocket double playing both shards of one server.
import { decode, encode } from "@msgpack/msgpack";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  connectShard,
  type ConnectShardOptions,
  ShardClosedError,
  type ShardTransfer,
} from "../src/client.js";
import { HelloFlags, type InputMessage, MessageType } from "../src/protocol.js";
import { fakeWebSocket, type FakeSocket } from "./helpers/fake-websocket.js";

type Snap = { zone: string; x: number };
type Input = { move: { dx: number } };

let fake: ReturnType<typeof fakeWebSocket>;

function connect(options: Partial<ConnectShardOptions> = {}) {
  return connectShard<Snap, Input>("zone-0", {
    ticket: "T0",
    url: "http://127.0.0.1:4321/game",
    WebSocket: fake.WebSocket,
    random: () => 0.5,
    pingIntervalMs: 0,
    idleTimeoutMs: 0,
    ...options,
  });
}

/** Records every event of a connection, in order. */
function record(conn: ReturnType<typeof connect>): string[] {
  const events: string[] = [];
  conn.on("open", (w) => events.push(`open ${w.shardId}`));
  conn.on("state", (s) => events.push(`state ${s}`));
  conn.on("close", (c) => events.push(`close ${c.code}`));
  conn.on("error", (e) => events.push(`error ${e.message}`));
  conn.on("transfer", (t) => events.push(`transfer ${t.from} -> ${t.to}`));
  conn.on("snapshot", (s) => events.push(`snapshot ${s.zone} ${s.x}`));
  return events;
}

function inputs(ws: FakeSocket): InputMessage[] {
  return ws.messages().filter((m): m is InputMessage => m.type === MessageType.Input);
}

const frame = (ws: FakeSocket, tick: number, lastSeq: number, snap: Snap) =>
  ws.push({ type: MessageType.Frame, tick, lastSeq, snapshot: encode(snap) });

/** Lets pending promise callbacks (an async ticket function) run. */
const flush = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  fake = fakeWebSocket();
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("following a TRANSFER", () => {
  it("TRANSFER then 4011: connects to the target with its ticket at once; frames and inputs go there", async () => {
    const moves: ShardTransfer[] = [];
    const conn = connect({ onTransfer: (t) => moves.push(t) });
    const events = record(conn);
    const source = fake.last();
    source.acceptAndWelcome("msgpack", HelloFlags.FrameAcks);
    frame(source, 500, 0, { zone: "zone-0", x: 99 });
    expect(conn.send({ move: { dx: 1 } })).toBe(1);
    source.push({ type: MessageType.Reject, seq: 1, error: "moving to shard zone/1" });
    events.length = 0;

    source.transfer("zone/1", "T1");
    expect(fake.sockets).toHaveLength(2);
    const target = fake.last();
    // The same base URL and prefix, the shard id percent-encoded.
    expect(target.url).toBe("ws://127.0.0.1:4321/game/shard/zone%2F1");
    expect(source.closedByClient).toEqual({ code: 1000, reason: "transferred" });
    expect(moves).toEqual([{ from: "zone-0", to: "zone/1" }]);
    expect(conn.shardId).toBe("zone/1");
    expect(conn.transfers).toBe(1);
    expect(conn.state).toBe("connecting");
    // Neither an error nor a close to retry: the 4011 was not even waited for.
    expect(events).toEqual(["transfer zone-0 -> zone/1", "state connecting"]);
    // The last picture stays until the target's first frame.
    expect(conn.snapshot).toEqual({ zone: "zone-0", x: 99 });

    // An input made while moving waits for the target's WELCOME.
    expect(conn.send({ move: { dx: 2 } })).toBe(2);
    target.accept();
    expect(target.messages()).toEqual([{ type: MessageType.Hello, version: 1, ticket: "T1", flags: 1 }]);
    target.welcome("msgpack", "ann", 40, HelloFlags.FrameAcks);
    expect(conn.state).toBe("open");
    expect(conn.welcome?.shardId).toBe("zone/1");
    expect(inputs(target).map((i) => i.seq)).toEqual([2]);
    expect(decode(inputs(target)[0]!.payload)).toEqual({ move: { dx: 2 } });

    const acks: number[] = [];
    conn.on("ack", (seq) => acks.push(seq));
    frame(target, 41, 2, { zone: "zone/1", x: 100 });
    expect(acks).toEqual([2]);
    expect(conn.snapshot).toEqual({ zone: "zone/1", x: 100 });
    expect(conn.tick).toBe(41);
    expect(conn.send({ move: { dx: 3 } })).toBe(3);
    expect(inputs(target).map((i) => i.seq)).toEqual([2, 3]);
    expect(inputs(source).map((i) => i.seq)).toEqual([1]);

    // Nothing else happens later: no reconnect with backoff, no second move.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fake.sockets).toHaveLength(2);
    expect(moves).toHaveLength(1);
    expect(events).toEqual([
      "transfer zone-0 -> zone/1",
      "state connecting",
      "state open",
      "open zone/1",
      "snapshot zone/1 100",
    ]);
    await expect(conn.ready).resolves.toMatchObject({ shardId: "zone-0" });
  });

  it("follows a TRANSFER that comes instead of WELCOME (a reconnect to a shard the player left)", async () => {
    const ticket = vi.fn(async (shard: string) => `fresh-${shard}`);
    const moves: ShardTransfer[] = [];
    const conn = connect({ ticket, onTransfer: (t) => moves.push(t) });
    await flush();
    const source = fake.last();
    source.accept();
    expect(source.messages()[0]).toMatchObject({ ticket: "fresh-zone-0" });
    source.transfer("zone-1", "T1");
    const target = fake.last();
    expect(target.url).toBe("ws://127.0.0.1:4321/game/shard/zone-1");
    target.accept();
    // The TRANSFER's ticket, not the ticket function's.
    expect(target.messages()[0]).toMatchObject({ ticket: "T1" });
    expect(ticket).toHaveBeenCalledTimes(1);
    target.welcome();
    await expect(conn.ready).resolves.toMatchObject({ shardId: "zone-1" });
    expect(moves).toEqual([{ from: "zone-0", to: "zone-1" }]);
    expect(conn.transfers).toBe(1);
    expect(conn.error).toBeUndefined();
  });

  it("follows several moves, and reconnects to the current shard with the TRANSFER ticket", async () => {
    const ticket = vi.fn(async (shard: string) => `fresh-${shard}`);
    const conn = connect({ ticket });
    await flush();
    fake.last().acceptAndWelcome();
    fake.last().transfer("zone-1", "T1");
    fake.last().acceptAndWelcome();
    fake.last().transfer("zone-2", "T2");
    fake.last().acceptAndWelcome();
    expect(conn.shardId).toBe("zone-2");
    expect(conn.transfers).toBe(2);

    // The connection drops: back to zone-2 (after the usual backoff), with T2.
    fake.last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fake.sockets).toHaveLength(4);
    expect(fake.last().url).toBe("ws://127.0.0.1:4321/game/shard/zone-2");
    fake.last().accept();
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "T2" });
    // T2 has expired by now: the ticket function is asked for zone-2, at once.
    fake.last().serverClose(4002, "ticket expired");
    await flush();
    expect(ticket).toHaveBeenLastCalledWith("zone-2");
    expect(fake.sockets).toHaveLength(5);
    fake.last().accept();
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "fresh-zone-2" });
    fake.last().welcome();
    expect(conn.state).toBe("open");
  });

  it("with a fixed ticket string, a refused TRANSFER ticket ends the connection", () => {
    const conn = connect();
    fake.last().acceptAndWelcome();
    fake.last().transfer("zone-1", "T1");
    fake.last().accept();
    fake.last().serverClose(4001, "ticket signature does not verify");
    expect(conn.state).toBe("closed");
    expect(conn.error).toBeInstanceOf(ShardClosedError);
    expect(conn.error!.message).toContain('shard "zone-1", close 4001 ticket_invalid');
    vi.advanceTimersByTime(60_000);
    expect(fake.sockets).toHaveLength(2);
  });

  it("a malformed TRANSFER is a bad message: close 4000, reconnect to the same shard", () => {
    const conn = connect();
    const events = record(conn);
    const ws = fake.last();
    ws.acceptAndWelcome();
    ws.pushRaw(encode([MessageType.Transfer, "zone-1"]));
    expect(events).toContainEqual(expect.stringMatching(/^error tessera: bad message from the server: TRANSFER needs 2/));
    expect(ws.closedByClient?.code).toBe(4000);
    expect(conn.shardId).toBe("zone-0");
    expect(conn.transfers).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(fake.sockets).toHaveLength(2);
    expect(fake.last().url).toBe("ws://127.0.0.1:4321/game/shard/zone-0");

    fake.last().acceptAndWelcome();
    fake.last().pushRaw(encode([MessageType.Transfer, "", "T1"]));
    expect(events.filter((e) => e.startsWith("error"))).toHaveLength(2);
    expect(events.at(-2)).toMatch(/shard_id must not be empty/);
    expect(events).not.toContainEqual(expect.stringMatching(/^transfer/));
  });

  it("a 4011 close without a TRANSFER is a dropped connection (reconnect with backoff to the same shard)", () => {
    const conn = connect();
    const events = record(conn);
    fake.last().acceptAndWelcome();
    fake.last().serverClose(4011, "moved to shard zone-1");
    expect(events).toContain("close 4011");
    expect(conn.state).toBe("connecting");
    expect(fake.sockets).toHaveLength(1);
    vi.advanceTimersByTime(10_000);
    expect(fake.sockets).toHaveLength(2);
    expect(fake.last().url).toBe("ws://127.0.0.1:4321/game/shard/zone-0");
  });

  it("gives up when shards keep sending the player on without a WELCOME", () => {
    const conn = connect();
    fake.last().accept();
    for (let i = 1; i <= 9; i++) {
      fake.last().accept();
      fake.last().transfer(`zone-${i % 2}`, `T${i}`);
    }
    expect(conn.state).toBe("closed");
    expect(conn.error?.message).toMatch(/moved 9 times in a row without a WELCOME/);
    expect(fake.sockets).toHaveLength(9);
  });

  it("a transfer listener may close the connection: nothing connects then", () => {
    const conn = connect({ onTransfer: () => conn.close() });
    fake.last().acceptAndWelcome();
    fake.last().transfer("zone-1", "T1");
    expect(conn.state).toBe("closed");
    expect(conn.error).toBeUndefined();
    expect(fake.sockets).toHaveLength(1);
  });

  it("reconnect() opens a new socket to the current shard at once", () => {
    const conn = connect();
    const first = fake.last();
    first.acceptAndWelcome();
    first.transfer("zone-1", "T1");
    fake.last().acceptAndWelcome();
    conn.reconnect();
    expect(fake.sockets[1]!.closedByClient).toEqual({ code: 1000, reason: "reconnecting" });
    expect(fake.sockets).toHaveLength(3);
    fake.last().accept();
    expect(fake.last().url).toBe("ws://127.0.0.1:4321/game/shard/zone-1");
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "T1" });
    conn.close();
    conn.reconnect();
    expect(fake.sockets).toHaveLength(3);
  });
});
