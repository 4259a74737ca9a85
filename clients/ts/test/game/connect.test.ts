// connectShardGame over connectShard, with the package's WebSocket double
// playing the server.
import { decode } from "@msgpack/msgpack";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectShardGame, type ConnectShardGameOptions } from "../../src/index.js";
import { HelloFlags, MessageType, type InputMessage } from "../../src/protocol.js";
import { fakeWebSocket } from "../helpers/fake-websocket.js";
import { encodeEntities, type PayloadSpec } from "./encode-entities.js";

type Input = { move_to: { x: number; y: number } };

let fake: ReturnType<typeof fakeWebSocket>;
let time = 0;

function connect(options: Partial<ConnectShardGameOptions> = {}) {
  return connectShardGame<Input>("zone-1", {
    subscriberId: "ann",
    ticket: "T1",
    url: "http://127.0.0.1:4321",
    WebSocket: fake.WebSocket,
    random: () => 0.5,
    pingIntervalMs: 0,
    idleTimeoutMs: 0,
    now: () => time,
    ...options,
  });
}

function frame(tick: number, spec: PayloadSpec, lastSeq = 0): void {
  time = tick * 50;
  fake.last().push({ type: MessageType.Frame, tick, lastSeq, snapshot: null, entities: encodeEntities(spec) });
}

function inputs(): InputMessage[] {
  return fake
    .last()
    .messages()
    .filter((m): m is InputMessage => m.type === MessageType.Input);
}

beforeEach(() => {
  fake = fakeWebSocket();
  vi.useFakeTimers();
  time = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

describe("connectShardGame", () => {
  it("replicates, interpolates and stamps inputs with the drawn tick over a real connection", () => {
    const game = connect();
    const ws = fake.last();
    ws.acceptAndWelcome();
    expect(game.connection.state).toBe("open");
    expect(game.clock.tickMs).toBe(50); // WELCOME's 20 Hz

    frame(100, { baseline: true, precision: 0.5, spawns: [{ id: 9, q: [0, 0, 0] }] });
    frame(101, { updates: [{ id: 9, dx: 4 }] });
    game.frame(100.5 * 50 + 100);
    expect(game.entities.get(9)!.x).toBeCloseTo(1, 9);
    expect(game.entered).toEqual([9]);

    const seq = game.send({ move_to: { x: 1, y: 2 } });
    const [input] = inputs();
    // The fractional tick drawn, through the wire (float64) unchanged.
    expect(input).toMatchObject({ seq, viewTick: game.render.tick });
    expect(input!.viewTick).toBeCloseTo(100.5, 9);
    expect(decode(input!.payload)).toEqual({ move_to: { x: 1, y: 2 } });

    const predictor = game.predict<number>((s) => s + 1);
    game.send({ move_to: { x: 3, y: 4 } });
    fake.last().push({ type: MessageType.Reject, seq: seq + 1, error: "outside" });
    expect(predictor.pending).toEqual([]);
    frame(102, {}, seq);
    expect(game.lastSeq).toBe(seq);
    // Both inputs went out at 5050 ms: the REJECT came at once (0 ms), the
    // FRAME including seq came at 5100 ms (50 ms): EWMA 0 + 50 / 8.
    expect(game.rttMs).toBeCloseTo(6.25, 9);
  });

  it("frame acks: an input's ack comes before the FRAME including it; prediction and round trip hold", () => {
    const game = connect();
    const events: string[] = [];
    game.connection.on("ack", (seq) => events.push(`ack ${seq}`));
    game.connection.on("frame", (f) => events.push(`frame ${f.tick}`));
    fake.last().acceptAndWelcome("msgpack", HelloFlags.FrameAcks);
    frame(100, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] });
    const predictor = game.predict<number>((s, i) => s + i.move_to.x);
    game.send({ move_to: { x: 1, y: 0 } }); // seq 1 at 5000 ms
    frame(101, {}, 1); // acks 1 (5050 ms)
    frame(102, {}, 1);
    game.send({ move_to: { x: 10, y: 0 } }); // seq 2 at 5100 ms
    game.send({ move_to: { x: 100, y: 0 } }); // seq 3
    fake.last().push({ type: MessageType.Reject, seq: 3, error: "outside" });
    expect(predictor.reconcile(1, game.lastSeq)).toBe(11);
    frame(103, {}, 3); // acks 2 at once (5150 ms)
    expect(events).toEqual(["frame 100", "ack 1", "frame 101", "frame 102", "ack 2", "frame 103"]);
    expect(game.lastSeq).toBe(3);
    expect(predictor.reconcile(11, game.lastSeq)).toBe(11);
    expect(predictor.pending).toEqual([]);
    // Samples: 50 ms (seq 1, FRAME 101), 0 ms (seq 3, REJECT), 50 ms (seq 2).
    expect(game.rttMs).toBeCloseTo((50 * 7) / 8 * (7 / 8) + 50 / 8, 9);
  });

  it("a dropped connection clears predictions; the new one's BASELINE decides who leaves", async () => {
    const game = connect();
    fake.last().acceptAndWelcome();
    frame(100, {
      baseline: true,
      precision: 1,
      spawns: [
        { id: 1, q: [0, 0, 0] },
        { id: 2, q: [0, 0, 0] },
      ],
    });
    game.frame(100 * 50 + 100);
    const predictor = game.predict<number>((s) => s + 1);
    game.send({ move_to: { x: 0, y: 0 } });
    expect(predictor.pending).toHaveLength(1);

    fake.last().serverClose(1001, "restart");
    expect(predictor.pending).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fake.sockets).toHaveLength(2);
    fake.last().acceptAndWelcome();
    frame(140, { baseline: true, precision: 1, spawns: [{ id: 2, q: [5, 0, 0] }] });
    game.frame(140 * 50 + 100);
    expect(game.left).toEqual([1]);
    expect(game.entered).toEqual([]);
    expect(game.entities.get(2)!.x).toBe(5);
  });

  it("replaces the connection after a malformed entities payload", () => {
    const errors: Error[] = [];
    const game = connect({ onError: (e) => errors.push(e) });
    const first = fake.last();
    first.acceptAndWelcome();
    frame(100, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] });
    frame(101, { despawns: [42] });
    expect(errors.map((e) => e.name)).toEqual(["EntitiesDecodeError"]);
    expect(first.closedByClient).toBeDefined();
    expect(fake.sockets).toHaveLength(2);
    const second = fake.last();
    second.acceptAndWelcome();
    expect(game.connection.state).toBe("open");
    frame(102, { baseline: true, precision: 1, spawns: [{ id: 1, q: [3, 0, 0] }] });
    expect(game.replica.entities.get(1)!.q[0]).toBe(3);
    game.close();
    expect(game.connection.state).toBe("closed");
  });
});
