import { encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { ShardGame, type GameLink } from "../../src/game/index.js";
import { MessageType, type FrameMessage } from "../../src/protocol.js";
import { bytes, encodeEntities, type PayloadSpec } from "./encode-entities.js";

interface Sent<I> {
  seq: number;
  input: I;
  viewTick: number | null;
}

class FakeLink<I> implements GameLink<I> {
  sent: Sent<I>[] = [];
  reconnects: string[] = [];
  closed = false;
  private seq = 0;
  sendInput(input: I, viewTick: number | null): number {
    const seq = ++this.seq;
    this.sent.push({ seq, input, viewTick });
    return seq;
  }
  reconnect(reason: string): void {
    this.reconnects.push(reason);
  }
  close(): void {
    this.closed = true;
  }
}

const TICK_MS = 50;

/** A game at 20 Hz, 100 ms (two ticks) behind, with a fake clock. */
function setup<I = unknown>(opts: { interpolationDelayMs?: number } = {}) {
  const link = new FakeLink<I>();
  let time = 0;
  const game = new ShardGame<I>(link, { tickRate: 20, now: () => time, ...opts });
  return {
    game,
    link,
    setTime: (t: number) => (time = t),
    /** Delivers the FRAME of `tick` at its exact time (tick * 50 ms: no delay). */
    frame(tick: number, spec: PayloadSpec | null, lastSeq = 0, at = tick * TICK_MS): void {
      time = at;
      const msg: FrameMessage = { type: MessageType.Frame, tick, lastSeq, snapshot: null };
      if (spec) msg.entities = encodeEntities(spec);
      game.receive(msg, at);
    },
    /** Draws the render tick `r` (local time chosen so that renderTick = r). */
    draw(r: number): void {
      game.frame(r * TICK_MS + (opts.interpolationDelayMs ?? 100));
    },
  };
}

const P = 0.5; // precision

describe("ShardGame interpolation", () => {
  it("draws positions between the two received ticks around the render time, with from/to/t", () => {
    const g = setup();
    g.frame(10, { baseline: true, precision: P, spawns: [{ id: 1, q: [20, 0, 4] }] });
    for (let tick = 11; tick <= 14; tick++) g.frame(tick, { updates: [{ id: 1, dx: 2, dz: -1 }] });

    g.draw(12.25);
    const e = g.game.entities.get(1)!;
    // x = q * 0.5: 12 at tick 12, 13 at tick 13; z: 1 at tick 12, 0.5 at tick 13.
    expect(e.x).toBeCloseTo(12.25, 9);
    expect(e.y).toBe(0);
    expect(e.z).toBeCloseTo(0.875, 9);
    expect(e.from.x).toBe(12);
    expect(e.to.x).toBe(13);
    expect(e.t).toBeCloseTo(0.25, 9);
    expect(g.game.render).toMatchObject({ fromTick: 12, toTick: 13 });
    expect(g.game.render.tick).toBeCloseTo(12.25, 9);
    // Inside [fromTick, toTick] the drawn tick is the render tick itself, unrounded.
    expect(g.game.viewTick).toBe(g.game.render.tick);

    g.draw(13.999);
    expect(g.game.entities.get(1)!.x).toBeCloseTo(13.999, 9);
  });

  it("holds the newest state when the render time is past it, and the oldest before it", () => {
    const g = setup();
    g.frame(10, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] });
    g.frame(11, { updates: [{ id: 1, dx: 10 }] });
    g.draw(25);
    const e = g.game.entities.get(1)!;
    expect(e.x).toBe(10);
    expect(e.from).toBe(e.to);
    expect(g.game.render).toMatchObject({ fromTick: 11, toTick: 11, t: 0 });
    expect(g.game.viewTick).toBe(11);

    const h = setup();
    h.frame(10, { baseline: true, precision: 1, spawns: [{ id: 1, q: [3, 0, 0] }] });
    h.draw(8); // before the first frame: the baseline is shown
    expect(h.game.entities.get(1)!.x).toBe(3);
    expect(h.game.viewTick).toBe(10);
  });

  it("interpolates across a missing tick", () => {
    const g = setup();
    g.frame(20, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] });
    g.frame(22, { updates: [{ id: 1, dx: 10 }] });
    g.draw(21);
    expect(g.game.entities.get(1)!.x).toBe(5);
    expect(g.game.render).toMatchObject({ fromTick: 20, toTick: 22, t: 0.5 });
    expect(g.game.viewTick).toBe(21);
  });

  it("shows spawns, despawns and component changes at the tick they happened; entered/left per frame() call", () => {
    const g = setup();
    g.frame(10, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0], components: [[3, bytes(100)]] }] });
    g.frame(11, { spawns: [{ id: 2, q: [50, 0, 0] }], updates: [{ id: 1, dx: 1 }] });
    g.frame(12, { updates: [{ id: 1, dx: 1, components: [[3, bytes(90)]] }, { id: 2, dx: 1 }] });
    g.frame(13, { despawns: [2], updates: [{ id: 1, dx: 1 }] });
    g.frame(14, { updates: [{ id: 1, dx: 1 }] });

    g.draw(10.5);
    expect([...g.game.entities.keys()]).toEqual([1]);
    expect(g.game.entered).toEqual([1]);
    expect(g.game.left).toEqual([]);

    g.draw(10.99);
    expect(g.game.entered).toEqual([]); // nothing new since the last frame()

    g.draw(11);
    expect(g.game.entered).toEqual([2]);
    expect(g.game.entities.get(2)!.x).toBe(50);

    g.draw(11.9);
    expect(g.game.entities.get(1)!.components.get(3)).toEqual(bytes(100)); // not yet
    // The next sample's components are visible through `to` (for your own interpolation).
    expect(g.game.entities.get(1)!.to.components.get(3)).toEqual(bytes(90));

    g.draw(12);
    expect(g.game.entities.get(1)!.components.get(3)).toEqual(bytes(90));

    g.draw(12.5);
    const two = g.game.entities.get(2)!;
    expect(two.x).toBe(51); // gone at 13: held, not interpolated towards nothing
    expect(two.to).toBe(two.from);

    g.draw(13);
    expect(g.game.entities.has(2)).toBe(false);
    expect(g.game.left).toEqual([2]);
    expect(g.game.entered).toEqual([]);
  });

  it("an entity that spawns and leaves between two frame() calls is never reported", () => {
    const g = setup();
    g.frame(10, { baseline: true, precision: 1 });
    g.frame(11, { spawns: [{ id: 5, q: [0, 0, 0] }] });
    g.frame(12, { despawns: [5] });
    g.draw(10);
    g.draw(12.5);
    expect(g.game.entered).toEqual([]);
    expect(g.game.left).toEqual([]);
  });

  it("a removed and reused id is in both entered and left, and is not interpolated across", () => {
    const g = setup();
    g.frame(10, { baseline: true, precision: 1, spawns: [{ id: 7, q: [0, 0, 0] }] });
    g.frame(11, { despawns: [7], spawns: [{ id: 7, q: [500, 0, 0] }] });
    g.draw(10.5);
    const e = g.game.entities.get(7)!;
    expect(e.x).toBe(0);
    expect(e.to).toBe(e.from);
    g.draw(11.2);
    expect(g.game.entered).toEqual([7]);
    expect(g.game.left).toEqual([7]);
    expect(g.game.entities.get(7)!.x).toBe(500);
  });

  it("a spawn of a held id without a despawn is a new entity too (entered and left)", () => {
    const g = setup();
    g.frame(10, { baseline: true, precision: 1, spawns: [{ id: 7, q: [0, 0, 0] }] });
    g.frame(11, { spawns: [{ id: 7, q: [300, 0, 0] }] });
    g.draw(10.5);
    expect(g.game.entities.get(7)!.x).toBe(0);
    g.draw(11);
    expect(g.game.entered).toEqual([7]);
    expect(g.game.left).toEqual([7]);
  });

  it("ignores FRAMEs before the first BASELINE", () => {
    const g = setup();
    g.frame(9, { spawns: [{ id: 1, q: [0, 0, 0] }] });
    g.draw(9);
    expect(g.game.entities.size).toBe(0);
    expect(g.game.viewTick).toBeUndefined();
    g.frame(10, { baseline: true, precision: 1, spawns: [{ id: 2, q: [0, 0, 0] }] });
    g.draw(10);
    expect([...g.game.entities.keys()]).toEqual([2]);
  });

  it("after a reconnect the new BASELINE keeps the entities it lists and the others leave at its tick", () => {
    const g = setup();
    g.frame(10, {
      baseline: true,
      precision: 1,
      spawns: [
        { id: 1, q: [0, 0, 0] },
        { id: 2, q: [10, 0, 0] },
        { id: 3, q: [20, 0, 0] },
      ],
    });
    g.frame(11, { updates: [{ id: 1, dx: 1 }] });
    g.draw(11);
    expect(g.game.entered).toEqual([1, 2, 3]);

    g.game.connectionReset();
    g.frame(12, { updates: [{ id: 1, dx: 1 }] }); // a stale delta: ignored until the BASELINE
    g.frame(14, { baseline: true, precision: 1, spawns: [{ id: 1, q: [5, 0, 0] }, { id: 3, q: [20, 0, 0] }, { id: 4, q: [0, 9, 0] }] });
    g.draw(13);
    expect(g.game.entities.get(1)!.x).toBeCloseTo(1 + (4 * 2) / 3, 9); // 1 at tick 11 -> 5 at tick 14
    expect(g.game.left).toEqual([]);
    g.draw(14);
    expect(g.game.left).toEqual([2]);
    expect(g.game.entered).toEqual([4]); // 1 and 3 continue
    expect([...g.game.entities.keys()].sort()).toEqual([1, 3, 4]);
  });

  it("a malformed payload leaves the state alone, reports the error and asks the link to reconnect", () => {
    const errors: Error[] = [];
    const link = new FakeLink<unknown>();
    const game = new ShardGame(link, { tickRate: 20, now: () => 0, onError: (e) => errors.push(e) });
    game.receive({ type: MessageType.Frame, tick: 1, lastSeq: 0, snapshot: null, entities: encodeEntities({ baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] }) }, 50);
    game.receive({ type: MessageType.Frame, tick: 2, lastSeq: 0, snapshot: null, entities: encodeEntities({ despawns: [99] }) }, 100);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.name).toBe("EntitiesDecodeError");
    expect(link.reconnects).toHaveLength(1);
    expect(game.replica.entities.size).toBe(1);
    expect(game.replica.synced).toBe(false); // waits for the new connection's BASELINE
  });

  it("keeps the latest snapshot (decoded lazily in the codec) while FRAMEs carry nil", () => {
    const g = setup();
    g.game.receive({ type: MessageType.Welcome, shardId: "z", subscriberId: "s", tickRate: 20, codec: "msgpack", tick: 0 });
    g.game.receive({ type: MessageType.Frame, tick: 1, lastSeq: 0, snapshot: encode({ n: 1 }), entities: encodeEntities({ baseline: true, precision: 1 }) }, 50);
    g.game.receive({ type: MessageType.Frame, tick: 2, lastSeq: 0, snapshot: null, entities: encodeEntities({}) }, 100);
    expect(g.game.snapshot).toEqual({ n: 1 });
    expect(g.game.tick).toBe(2);
    expect(g.game.framesReceived).toBe(2);
    expect(g.game.bytesReceived).toBeGreaterThan(5);
  });
});

describe("ShardGame clock", () => {
  it("draws interpolationDelayMs behind the estimated current tick, using WELCOME's tick rate", () => {
    const link = new FakeLink();
    const game = new ShardGame(link, { interpolationDelayMs: 150 });
    game.receive({ type: MessageType.Welcome, shardId: "z", subscriberId: "s", tickRate: 10, codec: "msgpack", tick: 0 });
    expect(game.clock.tickMs).toBe(100);
    const payload = (tick: number) =>
      tick === 0 ? encodeEntities({ baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] }) : encodeEntities({ updates: [{ id: 1, dx: 10 }] });
    // Frames arrive 30..70 ms after their tick; the least delayed (30 ms) anchors the clock.
    const delays = [70, 30, 55, 40, 65, 50];
    delays.forEach((d, tick) => game.receive({ type: MessageType.Frame, tick, lastSeq: 0, snapshot: null, entities: payload(tick) }, tick * 100 + d));
    game.frame(530); // current tick 5.0, drawn 1.5 ticks behind: 3.5
    expect(game.render.tick).toBeCloseTo(3.5, 9);
    expect(game.entities.get(1)!.x).toBeCloseTo(35, 9);
  });

  it("never draws back in time when the estimate dips by less than a tick; follows a larger jump back", () => {
    const link = new FakeLink();
    const game = new ShardGame(link, { interpolationDelayMs: 150 });
    game.receive({ type: MessageType.Welcome, shardId: "z", subscriberId: "s", tickRate: 10, codec: "msgpack", tick: 0 });
    const payload = (tick: number) =>
      tick === 0 ? encodeEntities({ baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] }) : encodeEntities({ updates: [{ id: 1, dx: 10 }] });
    for (let tick = 0; tick < 6; tick++) {
      game.receive({ type: MessageType.Frame, tick, lastSeq: 0, snapshot: null, entities: payload(tick) }, tick * 100 + 30);
    }
    game.frame(530);
    expect(game.render.tick).toBeCloseTo(3.5, 9);
    game.frame(500); // 0.3 ticks earlier: the picture holds
    expect(game.render.tick).toBeCloseTo(3.5, 9);
    expect(game.entities.get(1)!.x).toBeCloseTo(35, 9);
    expect(game.viewTick).toBeCloseTo(3.5, 9);
    game.frame(540); // forward again
    expect(game.render.tick).toBeCloseTo(3.6, 9);
    game.frame(300); // 2.4 ticks back: followed
    expect(game.render.tick).toBeCloseTo(1.2, 9);
  });
});

describe("ShardGame input", () => {
  it("stamps each INPUT with the fractional tick the last frame() drew, nil before any", () => {
    const g = setup<string>();
    g.game.send("a");
    g.frame(10, { baseline: true, precision: 1 });
    g.frame(11, {});
    g.frame(12, {});
    g.game.send("b"); // nothing drawn yet
    g.draw(10.7);
    g.game.send("c");
    g.draw(11.0);
    g.game.send("d");
    g.draw(30); // past the newest tick: the newest tick is what is drawn
    g.game.send("e");
    expect(g.link.sent.map((s) => s.input)).toEqual(["a", "b", "c", "d", "e"]);
    const ticks = g.link.sent.map((s) => s.viewTick);
    expect(ticks[0]).toBeNull();
    expect(ticks[1]).toBeNull();
    expect(ticks[2]).toBeCloseTo(10.7, 9);
    expect(ticks[3]).toBe(11);
    expect(ticks[4]).toBe(12);
  });

  it("stamps the tick of the last drawn frame, not the newest received; frames after it change nothing", () => {
    const g = setup<string>();
    g.frame(10, { baseline: true, precision: 1, spawns: [{ id: 1, q: [0, 0, 0] }] });
    g.frame(11, { updates: [{ id: 1, dx: 8 }] });
    g.draw(10.5);
    const drawn = g.game.render.tick;
    expect(drawn).toBeCloseTo(10.5, 9);
    expect(g.game.entities.get(1)!.x).toBeCloseTo(4, 9);
    // Newer frames arrive (the clock moves on too), but nothing is drawn yet.
    g.frame(12, { updates: [{ id: 1, dx: 8 }] });
    g.frame(13, { updates: [{ id: 1, dx: 8 }] });
    expect(g.game.tick).toBe(13);
    g.game.send("shot");
    expect(g.link.sent.at(-1)).toEqual({ seq: 1, input: "shot", viewTick: drawn });
    // Past the newest tick the newest tick is what was drawn, and a frame
    // arriving afterwards does not move it to the new newest.
    g.draw(20);
    g.frame(14, { updates: [{ id: 1, dx: 8 }] });
    g.game.send("late");
    expect(g.link.sent.at(-1)!.viewTick).toBe(13);
    g.draw(13.5);
    g.game.send("next");
    expect(g.link.sent.at(-1)!.viewTick).toBe(g.game.render.tick);
    expect(g.link.sent.at(-1)!.viewTick).toBeCloseTo(13.5, 9);
  });

  it("prediction drops acked and refused inputs and replays the rest in order", () => {
    const g = setup<number>();
    const predictor = g.game.predict<number[]>((state, input) => [...state, input]);
    for (const input of [10, 20, 30, 40, 50]) g.game.send(input); // seqs 1..5
    expect(predictor.pending.map((p) => p.seq)).toEqual([1, 2, 3, 4, 5]);

    expect(predictor.reconcile([0], 2)).toEqual([0, 30, 40, 50]);
    expect(predictor.pending.map((p) => p.seq)).toEqual([3, 4, 5]);

    g.game.receive({ type: MessageType.Reject, seq: 4, error: "outside the arena" });
    expect(predictor.reconcile([1], 2)).toEqual([1, 30, 50]);
    expect(predictor.reconcile([2], 3)).toEqual([2, 50]);
    expect(predictor.state).toEqual([2, 50]);
    expect(predictor.reconcile([3], 5)).toEqual([3]);
    expect(predictor.pending).toEqual([]);
  });

  it("prediction is cleared on reconnect; inputs sent afterwards are recorded again", () => {
    const g = setup<number>();
    const predictor = g.game.predict<number>((s, i) => s + i);
    g.game.send(1);
    g.game.send(2);
    g.game.connectionReset();
    expect(predictor.pending).toEqual([]);
    expect(predictor.state).toBeUndefined();
    g.game.send(5);
    expect(predictor.reconcile(100, 0)).toBe(105);
  });

  it("rttMs: EWMA of send -> first FRAME with last_seq >= seq or ACK/REJECT, one sample per input", () => {
    const g = setup<string>();
    g.frame(1, { baseline: true, precision: 1 });
    expect(g.game.rttMs).toBeUndefined();

    g.setTime(1000);
    g.game.send("a"); // seq 1
    g.frame(2, {}, 1, 1100); // FRAME with last_seq 1: 100 ms
    expect(g.game.rttMs).toBe(100);
    g.game.receive({ type: MessageType.Ack, seq: 1 }, 1120); // already measured
    expect(g.game.rttMs).toBe(100);

    g.setTime(2000);
    g.game.send("b"); // seq 2
    g.game.receive({ type: MessageType.Ack, seq: 2 }, 2060); // ACK first: 60 ms
    expect(g.game.rttMs).toBeCloseTo(100 + 0.125 * (60 - 100), 9);

    g.setTime(3000);
    g.game.send("c"); // seq 3
    g.game.receive({ type: MessageType.Reject, seq: 3, error: "no" }, 3300);
    expect(g.game.rttMs).toBeCloseTo(95 + 0.125 * (300 - 95), 9);

    g.setTime(4000);
    g.game.send("d");
    g.game.send("e");
    g.frame(3, {}, 5, 4080); // one frame covers both
    expect(g.game.rttMs).toBeCloseTo(((120.625 * 7) / 8 + 10) * (7 / 8) + 10, 9);
    expect(g.game.lastSeq).toBe(5);
  });

  it("an input lost with a dropped connection gives no round-trip sample", () => {
    const g = setup<string>();
    g.setTime(0);
    g.game.send("a");
    g.game.connectionReset();
    g.game.receive({ type: MessageType.Ack, seq: 1 }, 500);
    expect(g.game.rttMs).toBeUndefined();
  });
});
