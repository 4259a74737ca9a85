// The Predictor on its own: recording, acknowledgement, refusal, replay
// order, purity of the step function, and clearing.
import { describe, expect, it } from "vitest";
import { Predictor } from "../../src/game/predictor.js";

interface Pos {
  x: number;
  y: number;
}
interface Move {
  dx: number;
  dy: number;
}
const move = (s: Pos, m: Move): Pos => ({ x: s.x + m.dx, y: s.y + m.dy });

describe("Predictor", () => {
  it("starts empty, with no state", () => {
    const p = new Predictor<Pos, Move>(move);
    expect(p.pending).toEqual([]);
    expect(p.state).toBeUndefined();
  });

  it("records inputs in the order they were sent", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 1, dy: 0 });
    p.record(2, { dx: 0, dy: 1 });
    expect(p.pending).toEqual([
      { seq: 1, input: { dx: 1, dy: 0 } },
      { seq: 2, input: { dx: 0, dy: 1 } },
    ]);
  });

  it("predicts from the server state with every input not yet applied", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 10, dy: 0 });
    p.record(2, { dx: 0, dy: 5 });
    // Nothing acked yet: both inputs are replayed on the server state.
    expect(p.reconcile({ x: 0, y: 0 }, 0)).toEqual({ x: 10, y: 5 });
    expect(p.state).toEqual({ x: 10, y: 5 });
    expect(p.pending.map((i) => i.seq)).toEqual([1, 2]);
  });

  it("drops inputs the server state already includes, and only those", () => {
    const p = new Predictor<Pos, Move>(move);
    for (let seq = 1; seq <= 4; seq++) p.record(seq, { dx: seq, dy: 0 });
    // The server applied 1 and 2 (x = 3); 3 and 4 are replayed on top.
    expect(p.reconcile({ x: 3, y: 0 }, 2)).toEqual({ x: 10, y: 0 });
    expect(p.pending.map((i) => i.seq)).toEqual([3, 4]);
    // A later frame with the same ack replays the same inputs again (not
    // twice: each reconcile starts from the server's state).
    expect(p.reconcile({ x: 3, y: 0 }, 2)).toEqual({ x: 10, y: 0 });
    // Everything applied: the prediction is the server state itself.
    expect(p.reconcile({ x: 10, y: 0 }, 4)).toEqual({ x: 10, y: 0 });
    expect(p.pending).toEqual([]);
  });

  it("an ack beyond every recorded seq drops them all", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 1, dy: 1 });
    p.record(2, { dx: 1, dy: 1 });
    expect(p.reconcile({ x: 7, y: 7 }, 99)).toEqual({ x: 7, y: 7 });
    expect(p.pending).toEqual([]);
  });

  it("an older ack does not bring back dropped inputs", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 1, dy: 0 });
    p.record(2, { dx: 2, dy: 0 });
    p.reconcile({ x: 1, y: 0 }, 1);
    expect(p.reconcile({ x: 1, y: 0 }, 0)).toEqual({ x: 3, y: 0 });
    expect(p.pending.map((i) => i.seq)).toEqual([2]);
  });

  it("replays in seq order and keeps order across refusals", () => {
    const order: number[] = [];
    const p = new Predictor<number[], number>((s, i) => {
      order.push(i);
      return [...s, i];
    });
    [10, 20, 30, 40].forEach((v, k) => p.record(k + 1, v));
    p.refuse(2);
    expect(p.reconcile([], 0)).toEqual([10, 30, 40]);
    expect(order).toEqual([10, 30, 40]);
  });

  it("a refused input is never predicted, whatever the ack", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 1, dy: 0 });
    p.record(2, { dx: 100, dy: 0 }); // refused by the shard
    p.record(3, { dx: 1, dy: 0 });
    p.refuse(2);
    expect(p.reconcile({ x: 0, y: 0 }, 0)).toEqual({ x: 2, y: 0 });
    expect(p.reconcile({ x: 1, y: 0 }, 1)).toEqual({ x: 2, y: 0 });
    expect(p.pending.map((i) => i.seq)).toEqual([3]);
  });

  it("refuses the oldest, the newest and the only pending input", () => {
    const p = new Predictor<number[], number>((s, i) => [...s, i]);
    [1, 2, 3].forEach((seq) => p.record(seq, seq));
    p.refuse(1);
    expect(p.reconcile([], 0)).toEqual([2, 3]);
    p.refuse(3);
    expect(p.reconcile([], 0)).toEqual([2]);
    p.refuse(2);
    expect(p.reconcile([], 0)).toEqual([]);
    expect(p.pending).toEqual([]);
  });

  it("refusing an unknown or already dropped seq changes nothing", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 1, dy: 0 });
    p.record(2, { dx: 1, dy: 0 });
    p.reconcile({ x: 1, y: 0 }, 1);
    p.refuse(1); // already applied and dropped
    p.refuse(42); // never sent
    expect(p.pending.map((i) => i.seq)).toEqual([2]);
    expect(p.reconcile({ x: 1, y: 0 }, 1)).toEqual({ x: 2, y: 0 });
  });

  it("does not modify the server state it is given", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 5, dy: 5 });
    const server = { x: 1, y: 2 };
    const predicted = p.reconcile(server, 0);
    expect(server).toEqual({ x: 1, y: 2 });
    expect(predicted).not.toBe(server);
  });

  it("returns the server state object itself when nothing is pending", () => {
    const p = new Predictor<Pos, Move>(move);
    const server = { x: 4, y: 4 };
    expect(p.reconcile(server, 0)).toBe(server);
    expect(p.state).toBe(server);
  });

  it("calls step once per pending input per reconcile", () => {
    let calls = 0;
    const p = new Predictor<number, number>((s, i) => {
      calls++;
      return s + i;
    });
    p.record(1, 1);
    p.record(2, 1);
    p.record(3, 1);
    p.reconcile(0, 0);
    expect(calls).toBe(3);
    p.reconcile(1, 1);
    expect(calls).toBe(5);
  });

  it("clear forgets every input and the last state", () => {
    const p = new Predictor<Pos, Move>(move);
    p.record(1, { dx: 1, dy: 0 });
    p.reconcile({ x: 0, y: 0 }, 0);
    p.clear();
    expect(p.pending).toEqual([]);
    expect(p.state).toBeUndefined();
    // A new connection restarts seqs at 1: they are recorded afresh.
    p.record(1, { dx: 0, dy: 3 });
    expect(p.reconcile({ x: 9, y: 9 }, 0)).toEqual({ x: 9, y: 12 });
  });
});
