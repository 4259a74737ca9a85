// connectShardGame when the player moves to another shard: the picture of
// the source is kept until the target's first FRAME, then replica,
// timeline and clock start over on the target's ticks and ids.
import { decode, encode } from "@msgpack/msgpack";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectShardGame, type ConnectShardGameOptions, type ShardTransfer } from "../../src/index.js";
import { MessageType, type InputMessage } from "../../src/protocol.js";
import { fakeWebSocket, type FakeSocket } from "../helpers/fake-websocket.js";
import { encodeEntities, type PayloadSpec } from "./encode-entities.js";

type Input = { move: { dx: number } };

let fake: ReturnType<typeof fakeWebSocket>;
let time = 0;

function connect(options: Partial<ConnectShardGameOptions> = {}) {
  return connectShardGame<Input>("zone-0", {
    subscriberId: "ann",
    ticket: "T0",
    url: "http://127.0.0.1:4321",
    WebSocket: fake.WebSocket,
    random: () => 0.5,
    pingIntervalMs: 0,
    idleTimeoutMs: 0,
    now: () => time,
    ...options,
  });
}

/** A FRAME with entities from the current socket, arriving at local time `at`. */
function frame(at: number, tick: number, spec: PayloadSpec, lastSeq = 0, snapshot: Uint8Array | null = null): void {
  time = at;
  fake.last().push({ type: MessageType.Frame, tick, lastSeq, snapshot, entities: encodeEntities(spec) });
}

function inputs(ws: FakeSocket): InputMessage[] {
  return ws.messages().filter((m): m is InputMessage => m.type === MessageType.Input);
}

const xs = (game: ReturnType<typeof connect>) =>
  Object.fromEntries([...game.entities.values()].map((e) => [e.id, e.x]));

beforeEach(() => {
  fake = fakeWebSocket();
  vi.useFakeTimers();
  time = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

describe("connectShardGame across a TRANSFER", () => {
  it("keeps drawing the source until the target's baseline, then draws the target on its own ticks", () => {
    const moves: { transfer: ShardTransfer; moving: boolean; shardId: string }[] = [];
    const game = connect({
      interpolationDelayMs: 100,
      onTransfer: (transfer) => moves.push({ transfer, moving: game.moving, shardId: game.shardId }),
    });
    const source = fake.last();
    source.acceptAndWelcome();
    // Source: own unit 1 walks right, unit 2 stands; 20 Hz, ticks 1000..1003.
    frame(0, 1000, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }, { id: 2, q: [50, 0, 0] }] });
    for (let i = 1; i <= 3; i++) frame(50 * i, 1000 + i, { updates: [{ id: 1, dx: 1 }] });
    game.frame(150); // render tick 1001
    expect(xs(game)).toEqual({ 1: 1, 2: 50 });
    const predictor = game.predict<number>((s, i) => s + i.move.dx);
    time = 160;
    expect(game.send({ move: { dx: 1 } })).toBe(1);
    expect(inputs(source)[0]!.viewTick).toBe(1001);
    expect(predictor.pending).toHaveLength(1);

    time = 170;
    source.transfer("zone-1", "T1");
    expect(moves).toEqual([{ transfer: { from: "zone-0", to: "zone-1" }, moving: true, shardId: "zone-1" }]);
    expect(game.shardId).toBe("zone-1");
    expect(game.transfers).toBe(1);
    expect(predictor.pending).toEqual([]); // the source's unapplied inputs are gone with it
    expect(game.lastSeq).toBe(0);

    // The last picture goes on: the render time runs to the newest tick, then holds.
    game.frame(200); // render tick 1002
    expect(xs(game)).toEqual({ 1: 2, 2: 50 });
    game.frame(400); // past the newest tick: held
    expect(xs(game)).toEqual({ 1: 3, 2: 50 });
    expect(game.left).toEqual([]);
    time = 410;
    expect(game.send({ move: { dx: 1 } })).toBe(2); // queued for the target

    const target = fake.last();
    expect(target.url).toBe("ws://127.0.0.1:4321/shard/zone-1");
    time = 420;
    target.accept();
    expect(target.messages()[0]).toMatchObject({ type: MessageType.Hello, ticket: "T1" });
    target.welcome("msgpack", "ann", 40);
    // The input made while moving carries no view tick (the source's ticks mean nothing there).
    expect(inputs(target).map((i) => [i.seq, i.viewTick])).toEqual([[2, null]]);
    expect(decode(inputs(target)[0]!.payload)).toEqual({ move: { dx: 1 } });
    game.frame(430);
    expect(xs(game)).toEqual({ 1: 3, 2: 50 }); // still the source's picture
    expect(game.moving).toBe(true);

    // The target's first FRAME, a BASELINE on its own ticks: its id 1 is another
    // entity than the source's id 1; the player is its id 5.
    frame(450, 40, { baseline: true, precision: 1, spawns: [{ id: 1, q: [130, 0, 0] }, { id: 5, q: [100, 0, 0] }] }, 2);
    expect(game.moving).toBe(false);
    expect(game.tick).toBe(40);
    expect(game.lastSeq).toBe(2);
    game.frame(450);
    expect(xs(game)).toEqual({ 1: 130, 5: 100 });
    expect([...game.left].sort()).toEqual([1, 2]);
    expect([...game.entered].sort()).toEqual([1, 5]); // id 1 in both: a new incarnation
    expect(game.render.fromTick).toBe(40);
    expect(game.clock.tickAt(450)).toBe(40);

    // From here on the target's timeline, drawn forward without jumping back.
    frame(500, 41, { updates: [{ id: 5, dx: 1 }] });
    frame(550, 42, { updates: [{ id: 5, dx: 1 }] });
    const drawn: number[] = [];
    for (const at of [550, 575, 600, 625, 650]) {
      game.frame(at);
      drawn.push(game.entities.get(5)!.x);
    }
    expect(drawn).toEqual([100, 100.5, 101, 101.5, 102]);
    expect(game.left).toEqual([]);
    time = 650;
    game.send({ move: { dx: 1 } });
    expect(inputs(target).at(-1)).toMatchObject({ seq: 3, viewTick: 42 });
    expect(moves).toHaveLength(1);
  });

  it("draws the target's baseline at once when the target's ticks are ahead of the source's", () => {
    const game = connect();
    fake.last().acceptAndWelcome();
    frame(0, 1000, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] });
    frame(50, 1001, { updates: [{ id: 1, dx: 1 }] });
    game.frame(150); // render tick 1001
    expect(xs(game)).toEqual({ 1: 1 });
    fake.last().transfer("zone-1", "T1");
    fake.last().acceptAndWelcome();
    frame(200, 90_000, { baseline: true, precision: 1, spawns: [{ id: 1, q: [2, 0, 0] }] });
    frame(250, 90_001, { updates: [{ id: 1, dx: 1 }] });
    game.frame(250); // render tick 89_999: before the oldest target tick, which is drawn
    expect(xs(game)).toEqual({ 1: 2 });
    expect(game.left).toEqual([1]);
    expect(game.entered).toEqual([1]);
    expect(game.render.fromTick).toBe(90_000);
    game.frame(325); // render tick 90_000.5
    expect(xs(game)).toEqual({ 1: 2.5 });
  });

  it("keeps the source's snapshot (in its codec) until the target's first FRAME", () => {
    const game = connect();
    const source = fake.last();
    source.acceptAndWelcome("json");
    frame(0, 7, { baseline: true, precision: 1, spawns: [] }, 0, new TextEncoder().encode('{"zone":0}'));
    source.transfer("zone-1", "T1");
    fake.last().acceptAndWelcome("msgpack");
    expect(game.snapshot).toEqual({ zone: 0 });
    frame(50, 3, { baseline: true, precision: 1, spawns: [] }, 0, encode({ zone: 1 }));
    expect(game.snapshot).toEqual({ zone: 1 });
  });

  it("a malformed entities payload after a move reconnects to the target, not the source", () => {
    const errors: Error[] = [];
    const game = connect({ onError: (e) => errors.push(e) });
    fake.last().acceptAndWelcome();
    fake.last().transfer("zone-1", "T1");
    const target = fake.last();
    target.acceptAndWelcome();
    frame(0, 3, { baseline: true, precision: 1, spawns: [{ id: 4, q: [1, 0, 0] }] });
    frame(50, 4, { despawns: [42] });
    expect(errors.map((e) => e.name)).toEqual(["EntitiesDecodeError"]);
    expect(target.closedByClient).toBeDefined();
    expect(fake.sockets).toHaveLength(3);
    fake.last().accept();
    expect(fake.last().url).toBe("ws://127.0.0.1:4321/shard/zone-1");
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "T1" });
    expect(game.shardId).toBe("zone-1");
    game.close();
    expect(game.connection.state).toBe("closed");
  });
});
