import { describe, expect, it } from "vitest";
import { PendingAcks } from "../src/acks.js";

describe("PendingAcks", () => {
  it("answers each seq sent once, in any order, and ignores others", () => {
    const p = new PendingAcks();
    for (const seq of [3, 4, 7]) p.sent(seq);
    expect(p.answer(4)).toBe(true);
    expect(p.answer(4)).toBe(false);
    expect(p.answer(5)).toBe(false); // never sent (on this socket)
    expect(p.pending).toEqual([3, 7]);
  });

  it("with frame acks a FRAME acks every pending seq up to its last_seq", () => {
    const p = new PendingAcks();
    p.welcome(true);
    for (const seq of [1, 2, 3]) p.sent(seq);
    expect(p.answer(2)).toBe(true); // REJECT before the FRAME
    expect(p.frame(3)).toEqual([1, 3]);
    expect(p.frame(3)).toEqual([]);
    p.sent(4);
    p.sent(5);
    expect(p.frame(4)).toEqual([4]);
    expect(p.pending).toEqual([5]);
  });

  it("without frame acks (the WELCOME has no flag) FRAMEs ack nothing", () => {
    const p = new PendingAcks();
    p.welcome(false);
    for (const seq of [1, 2]) p.sent(seq);
    expect(p.frame(2)).toEqual([]);
    expect(p.answer(1)).toBe(true);
    expect(p.answer(2)).toBe(true); // e.g. a REJECT after the FRAME
    expect(p.frame(2)).toEqual([]);
  });

  it("reset forgets the inputs and the mode", () => {
    const p = new PendingAcks();
    p.welcome(true);
    p.sent(1);
    p.sent(2);
    p.reset();
    expect(p.pending).toEqual([]);
    p.sent(3);
    expect(p.frame(3)).toEqual([]); // no WELCOME on the new socket yet
    p.welcome(true);
    expect(p.frame(3)).toEqual([3]);
  });
});
