import { decode, encode } from "@msgpack/msgpack";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectShard, type ConnectShardOptions, ShardClosedError, shardUrl } from "../src/client.js";
import { HelloFlags, ProtocolError } from "../src/protocol.js";
import { fakeWebSocket } from "./helpers/fake-websocket.js";

type Snap = { players: { id: string; x: number; y: number }[] };
type Input = { move_to: { x: number; y: number } };

let fake: ReturnType<typeof fakeWebSocket>;

function connect(options: Partial<ConnectShardOptions> = {}) {
  return connectShard<Snap, Input>("arena-1", {
    ticket: "T1",
    url: "http://127.0.0.1:4321",
    WebSocket: fake.WebSocket,
    random: () => 0.5,
    pingIntervalMs: 0,
    ...options,
  });
}

/** Lets pending promise callbacks (an async ticket function) run. */
const flush = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  fake = fakeWebSocket();
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("connecting", () => {
  it("opens /shard/<id> with the subprotocol and sends HELLO with the ticket and the frame-acks flag", async () => {
    const conn = connect();
    expect(conn.state).toBe("connecting");
    const ws = fake.last();
    expect(ws.url).toBe("ws://127.0.0.1:4321/shard/arena-1");
    expect(ws.protocols).toBe("tessera.v1");
    expect(ws.binaryType).toBe("arraybuffer");
    ws.accept();
    expect(ws.messages()).toEqual([{ type: 1, version: 1, ticket: "T1", flags: 1 }]);
    expect([...ws.sent[0]!]).toEqual([0x94, 0x01, 0x01, 0xa2, 0x54, 0x31, 0x01]); // [1, 1, "T1", 1]
    ws.welcome();
    expect(conn.state).toBe("open");
    expect(conn.subscriberId).toBe("ann");
    await expect(conn.ready).resolves.toMatchObject({ shardId: "arena-1", codec: "msgpack", tickRate: 20 });
  });

  it("builds ws(s) URLs from http(s) bases and percent-encodes the shard", () => {
    expect(shardUrl("https://games.example.com", "a b/c")).toBe("wss://games.example.com/shard/a%20b%2Fc");
    expect(shardUrl("http://h:1/prefix/", "x")).toBe("ws://h:1/prefix/shard/x");
    expect(shardUrl("ws://h:2", "x")).toBe("ws://h:2/shard/x");
    expect(() => shardUrl("ftp://h", "x")).toThrow(/http\(s\)/);
    expect(() => shardUrl("/relative", "x")).toThrow(/absolute/);
  });

  it("needs a url outside a browser, and a ticket", () => {
    expect(() => connectShard("s", { ticket: "t", WebSocket: fake.WebSocket })).toThrow(/options.url is required/);
    expect(() => connectShard("s", { url: "http://h" } as ConnectShardOptions)).toThrow(/ticket/);
    expect(() => connectShard("", { url: "http://h", ticket: "t", WebSocket: fake.WebSocket })).toThrow(/shardId/);
  });

  it("uses the page origin in a browser", () => {
    vi.stubGlobal("location", { origin: "https://play.example.org" });
    try {
      connectShard("arena-1", { ticket: "t", WebSocket: fake.WebSocket });
      expect(fake.last().url).toBe("wss://play.example.org/shard/arena-1");
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("calls an async ticket function before connecting", async () => {
    const ticket = vi.fn(async () => "fresh");
    connect({ ticket });
    expect(fake.sockets).toHaveLength(0);
    await flush();
    expect(ticket).toHaveBeenCalledTimes(1);
    fake.last().accept();
    expect(fake.last().messages()[0]).toEqual({ type: 1, version: 1, ticket: "fresh", flags: 1 });
  });
});

describe("frames and snapshots", () => {
  it("decodes msgpack snapshots and emits frames", () => {
    const conn = connect();
    const snaps: Snap[] = [];
    const frames: number[] = [];
    conn.on("snapshot", (s) => snaps.push(s));
    conn.on("frame", (f) => frames.push(f.tick));
    const ws = fake.last();
    ws.acceptAndWelcome();
    const snap: Snap = { players: [{ id: "ann", x: 1.5, y: 2 }] };
    ws.push({ type: 19, tick: 101, lastSeq: 0, snapshot: encode(snap) });
    expect(snaps).toEqual([snap]);
    expect(conn.snapshot).toEqual(snap);
    expect(conn.tick).toBe(101);
    // A replicated shard's FRAME with an unchanged (nil) snapshot: a frame, no snapshot event.
    ws.push({ type: 19, tick: 102, lastSeq: 0, snapshot: null, entities: new Uint8Array([1]) });
    expect(frames).toEqual([101, 102]);
    expect(snaps).toHaveLength(1);
    expect(conn.snapshot).toEqual(snap);
  });

  it("decodes JSON snapshots and encodes inputs as JSON when WELCOME says json", () => {
    const conn = connect();
    const ws = fake.last();
    ws.acceptAndWelcome("json");
    ws.push({ type: 19, tick: 1, lastSeq: 0, snapshot: new TextEncoder().encode('{"players":[]}') });
    expect(conn.snapshot).toEqual({ players: [] });
    conn.send({ move_to: { x: 3, y: 4 } });
    const input = ws.messages()[1];
    expect(input.type).toBe(2);
    expect(new TextDecoder().decode((input as { payload: Uint8Array }).payload)).toBe('{"move_to":{"x":3,"y":4}}');
  });

  it("answers PING with PONG and measures RTT with its own PINGs", () => {
    const conn = connect({ pingIntervalMs: 1000 });
    const ws = fake.last();
    ws.acceptAndWelcome();
    ws.push({ type: 3, nonce: 55 });
    const msgs = ws.messages();
    const myPing = msgs.find((m) => m.type === 3) as { nonce: number };
    expect(msgs).toContainEqual({ type: 4, nonce: 55 });
    expect(myPing).toBeDefined();
    vi.advanceTimersByTime(40);
    ws.push({ type: 4, nonce: myPing.nonce });
    expect(conn.rttMs).toBe(40);
    vi.advanceTimersByTime(1000);
    const second = ws.messages().filter((m) => m.type === 3);
    expect(second).toHaveLength(2);
  });
});

describe("send", () => {
  it("numbers inputs 1, 2, 3 and encodes them in the shard codec", () => {
    const conn = connect();
    const ws = fake.last();
    ws.acceptAndWelcome();
    expect(conn.send({ move_to: { x: 1, y: 2 } })).toBe(1);
    expect(conn.send({ move_to: { x: 3, y: 4 } }, { viewTick: 99 })).toBe(2);
    expect(conn.send({ move_to: { x: 5, y: 6 } })).toBe(3);
    const inputs = ws.messages().filter((m) => m.type === 2) as { seq: number; payload: Uint8Array; viewTick: number | null }[];
    expect(inputs.map((i) => i.seq)).toEqual([1, 2, 3]);
    expect(decode(inputs[0].payload)).toEqual({ move_to: { x: 1, y: 2 } });
    expect(inputs.map((i) => i.viewTick)).toEqual([null, 99, null]);
  });

  it("sends a fractional view tick as it is, and refuses a bad one before numbering or queueing it", () => {
    const conn = connect();
    expect(() => conn.send({ move_to: { x: 0, y: 0 } }, { viewTick: -0.25 })).toThrow(ProtocolError);
    expect(conn.send({ move_to: { x: 1, y: 1 } }, { viewTick: 41.5 })).toBe(1); // queued until WELCOME
    const ws = fake.last();
    ws.acceptAndWelcome();
    expect(() => conn.send({ move_to: { x: 0, y: 0 } }, { viewTick: NaN })).toThrow(/view_tick/);
    expect(conn.send({ move_to: { x: 2, y: 2 } }, { viewTick: 42.0625 })).toBe(2);
    const inputs = ws.messages().filter((m) => m.type === 2) as { seq: number; viewTick: number | null }[];
    expect(inputs.map((i) => [i.seq, i.viewTick])).toEqual([
      [1, 41.5],
      [2, 42.0625],
    ]);
  });

  it("queues inputs until WELCOME, then sends them in order", () => {
    const conn = connect();
    expect(conn.send({ move_to: { x: 1, y: 1 } })).toBe(1);
    expect(conn.send({ move_to: { x: 2, y: 2 } })).toBe(2);
    const ws = fake.last();
    ws.accept();
    expect(ws.messages()).toHaveLength(1); // HELLO only
    ws.welcome();
    expect(ws.messages().slice(1).map((m) => (m as { seq: number }).seq)).toEqual([1, 2]);
  });

  it("keeps numbering across reconnects", () => {
    const conn = connect();
    fake.last().acceptAndWelcome();
    conn.send({ move_to: { x: 1, y: 1 } });
    fake.last().serverClose(1001, "server shutting down");
    vi.advanceTimersByTime(10_000);
    fake.last().acceptAndWelcome();
    expect(conn.send({ move_to: { x: 1, y: 1 } })).toBe(2);
  });

  it("reports ACKs and rejections", () => {
    const conn = connect();
    const ws = fake.last();
    ws.acceptAndWelcome();
    const acks: number[] = [];
    const rejects: unknown[] = [];
    conn.on("ack", (s) => acks.push(s));
    conn.on("reject", (r) => rejects.push(r));
    conn.send({ move_to: { x: 1, y: 1 } });
    const seq = conn.send({ move_to: { x: -5, y: 1 } });
    ws.push({ type: 17, seq: 1 });
    ws.push({ type: 18, seq, error: "outside the arena" });
    expect(acks).toEqual([1]);
    expect(rejects).toEqual([{ seq: 2, error: "outside the arena" }]);
    expect(conn.lastRejection).toEqual({ seq: 2, error: "outside the arena" });
  });

  it("refuses inputs over 64 KiB and sends after close", () => {
    const conn = connect();
    fake.last().acceptAndWelcome();
    expect(() => conn.send({ blob: "x".repeat(70_000) } as unknown as Input)).toThrow(RangeError);
    conn.close();
    expect(() => conn.send({ move_to: { x: 1, y: 1 } })).toThrow(/closed/);
  });

  it("unsubscribes listeners", () => {
    const conn = connect();
    const ws = fake.last();
    ws.acceptAndWelcome();
    const seen: number[] = [];
    const off = conn.on("ack", (s) => seen.push(s));
    conn.send({ move_to: { x: 1, y: 1 } });
    conn.send({ move_to: { x: 2, y: 2 } });
    ws.push({ type: 17, seq: 1 });
    off();
    ws.push({ type: 17, seq: 2 });
    expect(seen).toEqual([1]);
  });
});

describe("frame acks", () => {
  const move = { move_to: { x: 1, y: 1 } };
  const snapshot = encode({ players: [] });
  const frame = (tick: number, lastSeq: number) => ({ type: 19 as const, tick, lastSeq, snapshot });

  /**
   * Connects and records ack, reject and frame events in arrival order;
   * `flags` are the WELCOME's (default: the server honours frame acks).
   */
  function recorded(flags: number = HelloFlags.FrameAcks) {
    const conn = connect();
    const events: string[] = [];
    conn.on("ack", (seq) => events.push(`ack ${seq}`));
    conn.on("reject", (r) => events.push(`reject ${r.seq}`));
    conn.on("frame", (f) => events.push(`frame ${f.tick}`));
    const ws = fake.last();
    ws.acceptAndWelcome("msgpack", flags);
    return { conn, ws, events };
  }

  it("a FRAME's last_seq acks every unanswered input up to it, once, before the frame", () => {
    const { conn, ws, events } = recorded();
    expect([conn.send(move), conn.send(move), conn.send(move)]).toEqual([1, 2, 3]);
    ws.push({ type: 18, seq: 2, error: "outside the arena" }); // REJECTs come before their tick's FRAME
    ws.push(frame(101, 3));
    expect(events).toEqual(["reject 2", "ack 1", "ack 3", "frame 101"]);
    ws.push(frame(102, 3)); // nothing left to ack
    expect(events).toEqual(["reject 2", "ack 1", "ack 3", "frame 101", "frame 102"]);
    events.length = 0;
    conn.send(move);
    conn.send(move);
    ws.push({ type: 18, seq: 5, error: "outside the arena" });
    ws.push(frame(103, 5));
    expect(events).toEqual(["reject 5", "ack 4", "frame 103"]);
    // Duplicates (ACK messages after a FRAME acked, a second REJECT) and
    // answers for seqs never sent emit nothing.
    ws.push({ type: 17, seq: 3 });
    ws.push({ type: 17, seq: 4 });
    ws.push({ type: 18, seq: 5, error: "again" });
    ws.push({ type: 17, seq: 9 });
    ws.push(frame(104, 5));
    expect(events).toEqual(["reject 5", "ack 4", "frame 103", "frame 104"]);
    expect(conn.lastRejection).toEqual({ seq: 5, error: "outside the arena" });
  });

  it("ACK messages still ack inputs (ticks without a FRAME), and a later FRAME does not ack them again", () => {
    const { conn, ws, events } = recorded();
    conn.send(move);
    conn.send(move);
    ws.push({ type: 17, seq: 1 });
    ws.push({ type: 17, seq: 2 });
    ws.push({ type: 17, seq: 2 });
    ws.push(frame(101, 2));
    ws.push(frame(102, 2));
    expect(events).toEqual(["ack 1", "ack 2", "frame 101", "frame 102"]);
  });

  it("a server that ignores the flag (ACK/REJECT after the FRAME) never has a refused input acked", () => {
    const { conn, ws, events } = recorded(0); // its WELCOME has no flags
    for (let i = 0; i < 3; i++) conn.send(move);
    ws.push(frame(101, 3)); // last_seq counts the refused input too
    ws.push({ type: 17, seq: 1 });
    ws.push({ type: 18, seq: 2, error: "outside the arena" });
    ws.push({ type: 17, seq: 3 });
    conn.send(move);
    ws.push(frame(102, 4));
    ws.push({ type: 17, seq: 4 });
    ws.push(frame(103, 4));
    expect(events).toEqual(["frame 101", "ack 1", "reject 2", "ack 3", "frame 102", "ack 4", "frame 103"]);
  });

  it("inputs queued before WELCOME are acked once they went out", () => {
    const conn = connect({ maxQueuedInputs: 2 });
    const acks: number[] = [];
    conn.on("ack", (seq) => acks.push(seq));
    for (let i = 0; i < 3; i++) conn.send(move); // seq 1 is dropped from the queue
    const ws = fake.last();
    ws.acceptAndWelcome("msgpack", HelloFlags.FrameAcks);
    expect(ws.messages().filter((m) => m.type === 2).map((m) => (m as { seq: number }).seq)).toEqual([2, 3]);
    ws.push({ type: 17, seq: 1 }); // never sent
    ws.push(frame(101, 3));
    expect(acks).toEqual([2, 3]);
  });

  it("after a reconnect the new socket's FRAMEs and ACKs do not answer the old socket's inputs", () => {
    const conn = connect();
    const acks: number[] = [];
    conn.on("ack", (seq) => acks.push(seq));
    const first = fake.last();
    first.acceptAndWelcome("msgpack", HelloFlags.FrameAcks);
    conn.send(move);
    first.push(frame(101, 1));
    expect(acks).toEqual([1]);
    conn.send(move);
    conn.send(move); // 2 and 3: lost with the socket
    first.serverClose(1001, "restart");
    vi.advanceTimersByTime(10_000);
    const second = fake.last();
    expect(second).not.toBe(first);
    second.acceptAndWelcome("msgpack", HelloFlags.FrameAcks);
    expect(conn.send(move)).toBe(4);
    second.push({ type: 17, seq: 2 });
    second.push(frame(201, 4));
    expect(acks).toEqual([1, 4]);
    first.push({ type: 17, seq: 3 }); // late messages of the old socket are ignored
    expect(acks).toEqual([1, 4]);
  });

  it("stops reporting a FRAME when an ack listener closes the connection", () => {
    const { conn, ws, events } = recorded();
    conn.on("ack", () => conn.close());
    conn.send(move);
    ws.push(frame(101, 0));
    ws.push(frame(102, 1));
    ws.push(frame(103, 1));
    expect(events).toEqual(["frame 101", "ack 1"]);
    expect(conn.state).toBe("closed");
  });
});

describe("reconnecting", () => {
  it("backs off exponentially with jitter and calls the ticket function again each time", async () => {
    const tickets = ["a", "b", "c", "d"];
    const ticket = vi.fn(async () => tickets.shift()!);
    const random = vi.fn(() => 0.5);
    const conn = connect({ ticket, random, reconnect: { initialDelayMs: 100, maxDelayMs: 1000, jitter: 0.5 } });
    await flush();
    fake.last().serverClose(1006);
    expect(conn.state).toBe("connecting");
    // attempt 0: 100 * (0.5 + 0.5 * 0.5) = 75 ms
    await vi.advanceTimersByTimeAsync(74);
    expect(fake.sockets).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(fake.sockets).toHaveLength(2);
    fake.last().serverClose(1006);
    // attempt 1: 200 * 0.75 = 150 ms
    await vi.advanceTimersByTimeAsync(149);
    expect(fake.sockets).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(fake.sockets).toHaveLength(3);
    expect(ticket).toHaveBeenCalledTimes(3);
    fake.last().accept();
    expect(fake.last().messages()[0]).toEqual({ type: 1, version: 1, ticket: "c", flags: 1 });
    fake.last().welcome();
    expect(conn.state).toBe("open");
    // A success resets the backoff: the next drop waits 75 ms again.
    fake.last().serverClose(1001, "shutting down");
    await vi.advanceTimersByTimeAsync(75);
    expect(fake.sockets).toHaveLength(4);
    expect(random).toHaveBeenCalled();
  });

  it("caps the delay at maxDelayMs and spreads it with jitter", async () => {
    const random = vi.fn(() => 0);
    connect({ random, reconnect: { initialDelayMs: 1000, maxDelayMs: 2000, jitter: 1 } });
    for (let i = 0; i < 5; i++) fake.last().serverClose(1006), await vi.advanceTimersByTimeAsync(0);
    // with jitter 1 and random 0 every delay is 0
    expect(fake.sockets.length).toBe(6);
  });

  it("reconnects after 1001, 1008, 4007 and 4008", () => {
    connect();
    for (const code of [1001, 1008, 4007, 4008]) {
      const before = fake.sockets.length;
      fake.last().serverClose(code, "x");
      vi.advanceTimersByTime(10_000);
      expect(fake.sockets.length).toBe(before + 1);
    }
  });

  for (const [code, reason, what] of [
    [4005, "kicked by an operator", /kicked/],
    [4006, "stopped: game over", /the shard stopped/],
    [1009, "message too big", /client error/],
    [4000, "bad frame", /client error/],
    [4009, "unsupported version 2", /protocol version/],
    [4010, "hello expected", /client error/],
  ] as const) {
    it(`does not reconnect after ${code}`, async () => {
      const conn = connect({ ticket: async () => "t" });
      await flush();
      const errors: Error[] = [];
      conn.on("error", (e) => errors.push(e));
      fake.last().accept();
      fake.last().serverClose(code, reason);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(fake.sockets).toHaveLength(1);
      expect(conn.state).toBe("closed");
      expect(conn.error).toBeInstanceOf(ShardClosedError);
      expect((conn.error as ShardClosedError).code).toBe(code);
      expect(conn.error!.message).toContain(String(code));
      expect(conn.error!.message).toContain(reason);
      expect(conn.error!.message).toMatch(what);
      expect(errors).toEqual([conn.error]);
      await expect(conn.ready).rejects.toBe(conn.error);
    });
  }

  it("fails with a clear error when a fixed ticket is refused", async () => {
    const conn = connect({ ticket: "forged" });
    fake.last().accept();
    fake.last().serverClose(4001, "ticket signature does not verify");
    await expect(conn.ready).rejects.toThrow(
      'tessera: the server refused the ticket (shard "arena-1", close 4001 ticket_invalid: ticket signature does not verify)',
    );
    expect(conn.state).toBe("closed");
    vi.advanceTimersByTime(60_000);
    expect(fake.sockets).toHaveLength(1);
  });

  it("gets a fresh ticket once after a refusal, and fails if that is refused too", async () => {
    const ticket = vi.fn(async () => "t" + ticket.mock.calls.length);
    const conn = connect({ ticket });
    await flush();
    fake.last().accept();
    fake.last().serverClose(4003, "ticket is for shard other");
    await flush();
    expect(ticket).toHaveBeenCalledTimes(2);
    expect(fake.sockets).toHaveLength(2);
    fake.last().accept();
    fake.last().serverClose(4003, "ticket is for shard other");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fake.sockets).toHaveLength(2);
    expect(conn.state).toBe("closed");
    expect((conn.error as ShardClosedError).codeName).toBe("ticket_wrong_shard");
  });

  it("recovers from an expired ticket with a fresh one", async () => {
    const ticket = vi.fn(async () => "t" + ticket.mock.calls.length);
    const conn = connect({ ticket });
    await flush();
    fake.last().accept();
    fake.last().serverClose(4002, "ticket expired");
    await flush();
    fake.last().acceptAndWelcome();
    expect(conn.state).toBe("open");
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "t2" });
  });

  it("retries a failing ticket function with backoff", async () => {
    let n = 0;
    const conn = connect({
      ticket: async () => {
        if (n++ === 0) throw new Error("join endpoint down");
        return "ok";
      },
    });
    const errors: string[] = [];
    conn.on("error", (e) => errors.push(e.message));
    await flush();
    expect(errors[0]).toMatch(/getting a ticket for shard "arena-1" failed: join endpoint down/);
    expect(fake.sockets).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fake.sockets).toHaveLength(1);
    expect(conn.state).toBe("connecting");
  });

  it("gives up after maxAttempts", async () => {
    const conn = connect({ reconnect: { maxAttempts: 2, initialDelayMs: 10 } });
    fake.last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(100);
    fake.last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(100);
    fake.last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fake.sockets).toHaveLength(3);
    expect(conn.state).toBe("closed");
    expect(conn.error?.message).toMatch(/gave up reconnecting/);
  });

  it("does not reconnect with reconnect: false", () => {
    const conn = connect({ reconnect: false });
    fake.last().acceptAndWelcome();
    fake.last().serverClose(1001, "bye");
    vi.advanceTimersByTime(60_000);
    expect(conn.state).toBe("closed");
    expect(fake.sockets).toHaveLength(1);
  });

  it("reconnects after a malformed server message", () => {
    const conn = connect();
    const ws = fake.last();
    ws.acceptAndWelcome();
    const errors: Error[] = [];
    conn.on("error", (e) => errors.push(e));
    ws.pushRaw(new Uint8Array([0xc1]));
    expect(errors[0].message).toMatch(/bad message from the server: not valid MessagePack/);
    expect(ws.closedByClient?.code).toBe(4000);
    vi.advanceTimersByTime(10_000);
    expect(fake.sockets).toHaveLength(2);
    ws.pushRaw("text"); // late messages of the old socket are ignored
    expect(errors).toHaveLength(1);
  });

  it("reconnects when the server goes silent", () => {
    connect({ idleTimeoutMs: 3000 });
    fake.last().acceptAndWelcome();
    vi.advanceTimersByTime(2999);
    expect(fake.sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(fake.last().closedByClient).toBeDefined();
    vi.advanceTimersByTime(10_000);
    expect(fake.sockets).toHaveLength(2);
  });

  it("close() stops everything", () => {
    const conn = connect();
    const states: string[] = [];
    conn.on("state", (s) => states.push(s));
    fake.last().acceptAndWelcome();
    fake.last().serverClose(1006);
    conn.close();
    vi.advanceTimersByTime(60_000);
    expect(fake.sockets).toHaveLength(1);
    expect(states).toEqual(["open", "connecting", "closed"]);
    expect(conn.error).toBeUndefined();
    conn.close(); // idempotent
  });
});
