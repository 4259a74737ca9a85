import { describe, expect, it } from "vitest";
import { ShardClock } from "../../src/game/index.js";

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TICK_MS = 50;
const START = 100_000; // arbitrary tick number: large ticks must not amplify errors
const OFFSET = 1234.5; // local time of tick START's least-delayed arrival

/** The tick the shard is at when its frame would arrive with the base delay. */
const trueTick = (now: number, offset = OFFSET) => START + (now - offset) / TICK_MS;

describe("ShardClock", () => {
  it("converges to the true tick with jittered arrivals and a constant offset, anchored on the least-delayed frame", () => {
    const random = rng(1);
    const clock = new ShardClock({ tickRate: 20 });
    expect(clock.tickAt(0)).toBeUndefined();
    let meanDelay = 0;
    const n = 200;
    for (let i = 0; i < n; i++) {
      const delay = random() * 40; // 0..40 ms on top of the constant offset
      meanDelay += delay / n;
      clock.observe(START + i, OFFSET + i * TICK_MS + delay);
      if (i > 20) {
        // Once a few frames are in, the estimate is within a tick.
        const now = OFFSET + i * TICK_MS + 45;
        expect(Math.abs(clock.tickAt(now)! - trueTick(now))).toBeLessThan(1);
      }
    }
    const now = OFFSET + n * TICK_MS + 17;
    const err = clock.tickAt(now)! - trueTick(now);
    // Within 3 ms (0.06 tick) of the least-delayed frames; an average would
    // be about 20 ms (0.4 tick) behind.
    expect(Math.abs(err)).toBeLessThan(0.06);
    expect(meanDelay).toBeGreaterThan(15);
    expect(Math.abs(clock.tickMs - 50)).toBeLessThan(0.25); // the measured pace agrees with the given rate
    expect(clock.tickRateKnown).toBe(true);
  });

  it("jumps to a frame that arrives earlier than all before it", () => {
    const clock = new ShardClock({ tickRate: 20 });
    for (let i = 0; i < 10; i++) clock.observe(START + i, OFFSET + i * TICK_MS + 60);
    const now = OFFSET + 10 * TICK_MS;
    expect(clock.tickAt(now)! - trueTick(now)).toBeCloseTo(-60 / TICK_MS, 6);
    clock.observe(START + 10, OFFSET + 10 * TICK_MS + 5); // least delayed so far
    expect(clock.tickAt(now)! - trueTick(now)).toBeCloseTo(-5 / TICK_MS, 6);
  });

  it("measures the tick rate from arrivals when it is not given", () => {
    const random = rng(2);
    const clock = new ShardClock();
    expect(clock.tickRateKnown).toBe(false);
    expect(clock.tickMs).toBe(50); // fallback before any measurement
    const ms = 1000 / 30;
    for (let i = 0; i < 120; i++) clock.observe(START + i, OFFSET + i * ms + random() * 25);
    expect(Math.abs(clock.tickMs - ms) / ms).toBeLessThan(0.01);
    expect(clock.tickRate).toBeCloseTo(30, 0);
    const now = OFFSET + 120 * ms;
    expect(Math.abs(clock.tickAt(now)! - (START + (now - OFFSET) / ms))).toBeLessThan(0.3);
  });

  it("follows a slow drift without ever going back in time", () => {
    const random = rng(3);
    const clock = new ShardClock({ tickRate: 20 });
    let last = -Infinity;
    // The base delay grows by 80 ms over 30 s (a slower route, clock skew).
    for (let i = 0; i < 600; i++) {
      const drift = (i / 600) * 80;
      const at = OFFSET + i * TICK_MS + drift + random() * 30;
      clock.observe(START + i, at);
      for (const dt of [0, 10, 20, 30, 40]) {
        const now = OFFSET + i * TICK_MS + 30 + dt;
        const est = clock.tickAt(now)!;
        expect(est).toBeGreaterThanOrEqual(last - 1e-9);
        last = est;
      }
    }
    // At the end the estimate has followed the drift (within ~10 ms).
    const now = OFFSET + 600 * TICK_MS;
    expect(Math.abs(clock.tickAt(now)! - trueTick(now, OFFSET + 80))).toBeLessThan(0.2);
  });

  it("follows a shard that ticks slower than its nominal rate (given 20 Hz, really 52 ms a tick)", () => {
    const random = rng(4);
    const clock = new ShardClock({ tickRate: 20 });
    const real = 52;
    let last = -Infinity;
    for (let i = 0; i < 300; i++) {
      clock.observe(START + i, OFFSET + i * real + random() * 30);
      const now = OFFSET + i * real + 35;
      const est = clock.tickAt(now)!;
      expect(est).toBeGreaterThanOrEqual(last - 1e-9);
      last = est;
      if (i > 100) expect(Math.abs(est - (START + (now - OFFSET) / real))).toBeLessThan(0.2);
    }
    expect(clock.tickMs).toBeCloseTo(52, 0);
  });

  it("closes a large gap at once (e.g. after the tab slept)", () => {
    const clock = new ShardClock({ tickRate: 20, windowMs: 1000 });
    for (let i = 0; i < 100; i++) clock.observe(START + i, OFFSET + i * TICK_MS);
    // From now on every frame is 3 s later than before.
    for (let i = 100; i < 150; i++) clock.observe(START + i, OFFSET + 3000 + i * TICK_MS);
    const now = OFFSET + 3000 + 150 * TICK_MS;
    expect(Math.abs(clock.tickAt(now)! - trueTick(now, OFFSET + 3000))).toBeLessThan(0.01);
  });

  it("starts over when ticks go back (the shard restarted)", () => {
    const clock = new ShardClock({ tickRate: 20 });
    for (let i = 0; i < 20; i++) clock.observe(START + i, OFFSET + i * TICK_MS);
    clock.observe(5, 50_000);
    expect(clock.tickAt(50_000)).toBeCloseTo(5, 9);
    expect(clock.timeOfTick(7)).toBeCloseTo(50_100, 9);
  });
});
