/**
 * Estimates a shard's current tick from the arrival times of its FRAMEs.
 *
 * Frame `tick` arrives at `arrival = anchor + tick * tickMs + delay`, where
 * `delay >= 0` varies frame to frame (network jitter, the event loop). The
 * frame with the smallest delay is the best picture of when the shard
 * produced its tick, so the clock keeps, over a sliding window of recent
 * frames, the least `arrival - tick * tickMs` as its anchor.
 *
 * `tickMs` is the pace at which ticks really arrive: the given (or WELCOME)
 * rate until a few seconds of frames are in, then the slope of the lower
 * envelope of the arrivals (a shard that falls behind its nominal rate, or
 * a clock that runs a little fast, is followed; a given rate bounds it to
 * between half and twice the nominal duration). The window lets the anchor follow a drift; the applied
 * anchor moves toward the window's minimum at a bounded rate, so the
 * estimate never jumps back in time.
 *
 * @module
 */

/** Options of a {@link ShardClock}. */
export interface ShardClockOptions {
  /** Nominal ticks per second when known (the pace measured from arrivals may differ by up to 2x); otherwise measured. */
  tickRate?: number;
  /** How far back (ms of arrivals) the anchor minimum looks. Default 4000. */
  windowMs?: number;
  /** Most frames kept in the window. Default 256. */
  maxSamples?: number;
  /**
   * How fast the applied anchor may move toward the window minimum, as a
   * fraction of elapsed time (0.05 = 50 ms per second). Default 0.05.
   */
  slewRate?: number;
  /** A gap between the applied anchor and the target larger than this (ms) is closed at once. Default 1000. */
  snapMs?: number;
}

interface Sample {
  tick: number;
  at: number;
}

/** Fallback tick duration before anything is known (20 Hz). */
const DEFAULT_TICK_MS = 50;

/**
 * The shard's clock as seen from this client. Feed it each FRAME with
 * {@link ShardClock.observe}; read the estimate with {@link ShardClock.tickAt}.
 */
export class ShardClock {
  private samples: Sample[] = [];
  private givenTickMs: number | undefined;
  private paceMs: number | undefined; // measured from the window's lower envelope
  // The applied anchor: tick `refTick` is taken to be current at local
  // time `refAt`. Kept relative to a recent tick so that an error in a
  // measured tick duration is not multiplied by a large tick number.
  private refTick = 0;
  private refAt: number | undefined;
  private lastAt: number | undefined;
  private windowFull = false;
  private readonly windowMs: number;
  private readonly maxSamples: number;
  private readonly slewRate: number;
  private readonly snapMs: number;

  /** @param options see {@link ShardClockOptions} */
  constructor(options: ShardClockOptions = {}) {
    this.windowMs = options.windowMs ?? 4000;
    this.maxSamples = options.maxSamples ?? 256;
    this.slewRate = options.slewRate ?? 0.05;
    this.snapMs = options.snapMs ?? 1000;
    if (options.tickRate !== undefined) this.setTickRate(options.tickRate);
  }

  /**
   * Sets the tick rate (ticks per second), e.g. from WELCOME. A given rate
   * replaces the measured one.
   *
   * @param tickRate ticks per second, > 0
   */
  setTickRate(tickRate: number): void {
    if (!(tickRate > 0) || !Number.isFinite(tickRate)) throw new RangeError(`tick rate ${tickRate} must be positive`);
    this.givenTickMs = 1000 / tickRate;
  }

  /** True when the tick rate was given (option or {@link setTickRate}) rather than measured. */
  get tickRateKnown(): boolean {
    return this.givenTickMs !== undefined;
  }

  /**
   * Milliseconds per tick as frames really arrive: measured from the
   * arrivals once enough are in (within 0.5x..2x of a given rate), else the
   * given rate, else a rough measure, else 50.
   */
  get tickMs(): number {
    return this.paceMs ?? this.givenTickMs ?? this.roughTickMs() ?? DEFAULT_TICK_MS;
  }

  /** Ticks per second (see {@link tickMs}). */
  get tickRate(): number {
    return 1000 / this.tickMs;
  }

  /** True once at least one frame was observed. */
  get ready(): boolean {
    return this.refAt !== undefined;
  }

  /**
   * The local time (ms) at which the shard is estimated to have been at
   * `tick`, i.e. when that tick's frame arrives with the least delay seen.
   * `undefined` before the first frame.
   *
   * @param tick a tick number
   */
  timeOfTick(tick: number): number | undefined {
    if (this.refAt === undefined) return undefined;
    return this.refAt + (tick - this.refTick) * this.tickMs;
  }

  /** Forgets every observation (e.g. the shard restarted and its ticks went back). Keeps a given tick rate. */
  reset(): void {
    this.samples = [];
    this.paceMs = undefined;
    this.refAt = undefined;
    this.lastAt = undefined;
    this.windowFull = false;
  }

  /**
   * Records the arrival of the frame of `tick` at local time `at` (ms).
   *
   * @param tick the FRAME's tick
   * @param at local arrival time in ms (e.g. `performance.now()`)
   */
  observe(tick: number, at: number): void {
    const last = this.samples[this.samples.length - 1];
    if (last !== undefined && tick <= last.tick) {
      // Ticks only go forward on a connection; an older tick means a new
      // timeline (restart): start over.
      if (tick < last.tick) this.reset();
      else return;
    }
    this.samples.push({ tick, at });
    while (
      this.samples.length > this.maxSamples ||
      (this.samples.length > 2 && at - this.samples[0]!.at > this.windowMs)
    ) {
      this.samples.shift();
      this.windowFull = true;
    }
    this.paceMs = this.envelopeTickMs();
    const target = this.leastDelayedArrival(tick);
    if (this.refAt === undefined || this.lastAt === undefined || !this.windowFull) {
      // Until a sample leaves the window the minimum only goes down (the
      // estimate only moves forward), so it is adopted at once.
      this.refAt = target;
    } else {
      const applied = this.refAt + (tick - this.refTick) * this.tickMs;
      const diff = target - applied;
      const step = Math.max(0, at - this.lastAt) * this.slewRate;
      this.refAt = Math.abs(diff) > this.snapMs ? target : applied + Math.max(-step, Math.min(step, diff));
    }
    this.refTick = tick;
    this.lastAt = at;
  }

  /**
   * The estimated (fractional) tick the shard is at, at local time `now`:
   * the tick whose frame would arrive at `now` with the least delay seen.
   * `undefined` before the first frame.
   *
   * @param now local time in ms
   */
  tickAt(now: number): number | undefined {
    if (this.refAt === undefined) return undefined;
    return this.refTick + (now - this.refAt) / this.tickMs;
  }

  /** When the frame of `tick` would have arrived with the least delay in the window. */
  private leastDelayedArrival(tick: number): number {
    const ms = this.tickMs;
    let min = Infinity;
    for (const s of this.samples) min = Math.min(min, s.at + (tick - s.tick) * ms);
    return min;
  }

  /** Average ms per tick over the window (first to last frame); needs 2 ticks of span. */
  private roughTickMs(): number | undefined {
    const n = this.samples.length;
    if (n < 2) return undefined;
    const a = this.samples[0]!;
    const b = this.samples[n - 1]!;
    return b.tick - a.tick >= 2 && b.at > a.at ? (b.at - a.at) / (b.tick - a.tick) : undefined;
  }

  /**
   * The slope of the lower envelope of the arrivals: the window is cut in 8
   * buckets, the least-delayed frame of each is kept, and a line is fitted
   * through those. Late frames (only ever late, never early) do not move
   * it. Needs 16 frames spanning 16 ticks.
   */
  private envelopeTickMs(): number | undefined {
    const samples = this.samples;
    const n = samples.length;
    const base = this.givenTickMs ?? this.roughTickMs();
    if (base === undefined || n < 16 || samples[n - 1]!.tick - samples[0]!.tick < 16) return undefined;
    const buckets = 8;
    const t0 = samples[0]!.tick;
    const a0 = samples[0]!.at;
    const pts: { t: number; r: number }[] = [];
    for (let b = 0; b < buckets; b++) {
      const lo = Math.floor((b * n) / buckets);
      const hi = Math.floor(((b + 1) * n) / buckets);
      let best: { t: number; r: number } | undefined;
      for (let i = lo; i < hi; i++) {
        const s = samples[i]!;
        const t = s.tick - t0;
        const r = s.at - a0 - t * base; // residual against the base pace
        if (best === undefined || r < best.r) best = { t, r };
      }
      if (best !== undefined) pts.push(best);
    }
    let mt = 0;
    let mr = 0;
    for (const p of pts) (mt += p.t), (mr += p.r);
    mt /= pts.length;
    mr /= pts.length;
    let num = 0;
    let den = 0;
    for (const p of pts) (num += (p.t - mt) * (p.r - mr)), (den += (p.t - mt) ** 2);
    if (!(den > 0)) return undefined;
    let pace = base + num / den;
    if (this.givenTickMs !== undefined) {
      pace = Math.min(this.givenTickMs * 2, Math.max(this.givenTickMs * 0.5, pace));
    }
    return pace > 0 && Number.isFinite(pace) ? pace : undefined;
  }
}
