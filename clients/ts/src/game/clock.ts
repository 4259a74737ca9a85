/**
 * Estimates a shard's current tick from the arrival times of its FRAMEs.
 *
 * Every frame `tick` arrives at `arrival = anchor + tick * tickMs + delay`,
 * where `delay >= 0` varies frame to frame (network jitter, the event loop).
 * The frame with the smallest delay is the best picture of when the shard
 * produced its tick, so the clock keeps, over a sliding window of recent
 * frames, the minimum of `arrival - tick * tickMs` as its anchor. The
 * window lets the anchor follow a slow drift (clock skew, a route that got
 * slower); the applied anchor moves toward the window's minimum at a
 * bounded rate so the estimate never jumps back in time.
 *
 * @module
 */

/** Options of a {@link ShardClock}. */
export interface ShardClockOptions {
  /** Ticks per second when known; otherwise measured from arrivals. */
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

  /** Milliseconds per tick: given, else measured from arrivals (50 until measurable). */
  get tickMs(): number {
    return this.givenTickMs ?? this.measuredTickMs() ?? DEFAULT_TICK_MS;
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

  /**
   * Least-squares slope of arrival time over tick in the window, from at
   * least 8 frames spanning 8 ticks; `undefined` before that.
   */
  private measuredTickMs(): number | undefined {
    const n = this.samples.length;
    if (n < 8) return undefined;
    const first = this.samples[0]!;
    const span = this.samples[n - 1]!.tick - first.tick;
    if (span < 8) return undefined;
    let st = 0;
    let sa = 0;
    for (const s of this.samples) {
      st += s.tick - first.tick;
      sa += s.at - first.at;
    }
    const mt = st / n;
    const ma = sa / n;
    let num = 0;
    let den = 0;
    for (const s of this.samples) {
      const dt = s.tick - first.tick - mt;
      num += dt * (s.at - first.at - ma);
      den += dt * dt;
    }
    const slope = num / den;
    return slope > 0 && Number.isFinite(slope) ? slope : undefined;
  }
}
