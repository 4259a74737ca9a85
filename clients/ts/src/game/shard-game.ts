/**
 * The game layer over one shard session: a replica fed by FRAMEs, a clock,
 * an interpolated render view, prediction and round-trip measurement.
 * Independent of the transport: {@link connectShardGame} wires it to a
 * connection; tests drive it with messages and fake time.
 *
 * Lag compensation: {@link ShardGame.send} stamps each INPUT with the
 * fractional tick the last {@link ShardGame.frame} drew (the render tick
 * clamped to the two received ticks it drew between; not the newest tick
 * received since). A shard with lag compensation rewinds to that tick
 * with the same interpolation as {@link EntityTimeline} (hold when quiet,
 * no snapping), so it sees what this client drew.
 *
 * @module
 */
import { decodePayload, MessageType, type Codec, type ServerMessage } from "../protocol.js";
import { ShardClock } from "./clock.js";
import { EntitiesDecodeError, EntityReplica } from "./entities-decoder.js";
import { Predictor, type StepFunction } from "./predictor.js";
import { EntityTimeline, type RenderEntity, type RenderPosition } from "./timeline.js";

/** What a {@link ShardGame} needs from a connection. */
export interface GameLink<Input> {
  /**
   * Sends one INPUT and returns its seq (strictly increasing per
   * connection, restarting at 1 on a new connection).
   *
   * @param input the input value (encoded in the shard's codec by the link)
   * @param viewTick the fractional tick the last drawn frame showed, or
   *   `null` before one (a non-negative finite number; sent as INPUT's
   *   `view_tick`)
   */
  sendInput(input: Input, viewTick: number | null): number;
  /**
   * Drops the current connection and opens a new one (after a malformed
   * `entities` payload). Optional: without it the game only reports the error.
   */
  reconnect?(reason: string): void;
  /** Closes the session for good. */
  close(): void;
}

/** Options of a {@link ShardGame} (the timing part of {@link ShardGameOptions}). */
export interface GameTimingOptions {
  /** Ticks per second, when known; otherwise WELCOME's rate is used (or it is measured). */
  tickRate?: number;
  /** How far behind the shard's estimated current tick entities are drawn (ms). Default 100. */
  interpolationDelayMs?: number;
  /** Local clock for arrival times, in ms. Default `performance.now()`. Tests pass a fake. */
  now?: () => number;
  /** Weight of a new sample in the smoothed round trip (EWMA). Default 0.125. */
  rttSmoothing?: number;
  /** Called with each malformed `entities` payload (after which the game asks the link to reconnect). */
  onError?: (error: Error) => void;
}

const defaultNow = (): number =>
  typeof performance !== "undefined" && typeof performance.now === "function" ? performance.now() : Date.now();

/**
 * A replicated shard as a game sees it. Call {@link frame} once per
 * rendered frame, then read {@link entities}, {@link entered} and
 * {@link left}.
 *
 * @typeParam Input the shard's input type
 */
export class ShardGame<Input = unknown> {
  /** The shard clock estimated from frame arrivals. */
  readonly clock: ShardClock;
  /** The connection's entity replica (the newest received state, not interpolated). */
  readonly replica = new EntityReplica();

  private readonly timeline = new EntityTimeline();
  private readonly predictors = new Set<Predictor<unknown, Input>>();
  private readonly sentAt = new Map<number, number>();
  private readonly delayMs: number;
  private readonly now: () => number;
  private readonly alpha: number;
  private readonly onError: ((error: Error) => void) | undefined;
  private readonly givenTickRate: boolean;
  private link: GameLink<Input> | undefined;
  private rtt: number | undefined;
  private codec: Codec = "msgpack";
  private snapshotBytes: Uint8Array | null = null;
  private snapshotCodec: Codec = "msgpack"; // the codec of snapshotBytes
  private switching = false; // moved to another shard; its first FRAME starts a new history
  private snapshotValue: unknown;
  private snapshotDecoded = false;
  private newestTick: number | undefined;
  private lastRenderTick = -Infinity;
  private lastSeqValue = 0;
  private bytes = 0;
  private frames = 0;

  /**
   * @param link the connection (may be attached later with {@link attach})
   * @param options timing options
   */
  constructor(link?: GameLink<Input>, options: GameTimingOptions = {}) {
    this.link = link;
    this.clock = new ShardClock(options.tickRate !== undefined ? { tickRate: options.tickRate } : {});
    this.delayMs = options.interpolationDelayMs ?? 100;
    this.now = options.now ?? defaultNow;
    this.alpha = options.rttSmoothing ?? 0.125;
    this.onError = options.onError;
    this.givenTickRate = options.tickRate !== undefined;
  }

  /** Attaches the connection the game sends through. */
  attach(link: GameLink<Input>): void {
    this.link = link;
  }

  // ---------------------------------------------------------------- view

  /**
   * Entities drawn by the last {@link frame}, by id. The map and its entries
   * are updated in place by each {@link frame} (an entry keeps its identity
   * while its entity lives); copy what you need to keep.
   */
  get entities(): ReadonlyMap<number, RenderEntity> {
    return this.timeline.entities;
  }

  /** Ids drawn by the last {@link frame} and not by the one before. */
  get entered(): readonly number[] {
    return this.timeline.entered;
  }

  /** Ids drawn by the frame before the last and not by the last. An id in both lists was removed and reused. */
  get left(): readonly number[] {
    return this.timeline.left;
  }

  /** Where the last {@link frame} fell: render tick, the received ticks around it and the fraction. */
  get render(): RenderPosition {
    return this.timeline.renderPosition;
  }

  /**
   * The fractional tick the last {@link frame} drew: its render tick
   * clamped to `[render.fromTick, render.toTick]` (what {@link send}
   * stamps). Frames received after that draw do not change it. `undefined`
   * before a frame drew a received tick.
   */
  get viewTick(): number | undefined {
    return this.timeline.drawnTick();
  }

  /** Smoothed time (ms) from sending an input to its ACK/REJECT or the first FRAME that includes it. */
  get rttMs(): number | undefined {
    return this.rtt;
  }

  /** Newest received FRAME tick. */
  get tick(): number | undefined {
    return this.newestTick;
  }

  /** `last_seq` of the newest FRAME: the highest input seq of this connection the shard applied. */
  get lastSeq(): number {
    return this.lastSeqValue;
  }

  /** The shard's latest snapshot, decoded in its codec (kept while FRAMEs carry `nil`). */
  get snapshot(): unknown {
    if (!this.snapshotDecoded && this.snapshotBytes !== null) {
      this.snapshotValue = decodePayload(this.snapshotCodec, this.snapshotBytes);
      this.snapshotDecoded = true;
    }
    return this.snapshotValue;
  }

  /** Bytes of FRAME payloads (`snapshot` + `entities`) received so far. */
  get bytesReceived(): number {
    return this.bytes;
  }

  /** FRAMEs received so far. */
  get framesReceived(): number {
    return this.frames;
  }

  /** The quantisation step of the replica (world units per step). */
  get precision(): number {
    return this.replica.precision;
  }

  /** True when y is up (ground plane x, z); else z is up. */
  get yUp(): boolean {
    return this.replica.yUp;
  }

  /**
   * Advances the render state to local time `now`: entities are drawn
   * `interpolationDelayMs` behind the shard's estimated current tick.
   *
   * @param now local time in ms (e.g. the `requestAnimationFrame` timestamp); default the game's clock
   */
  frame(now: number = this.now()): void {
    const current = this.clock.tickAt(now);
    let renderTick = current === undefined ? -Infinity : current - this.delayMs / this.clock.tickMs;
    // The estimate can dip a little when the clock re-measures the tick
    // rate; hold the picture then instead of drawing back in time. A dip of
    // a tick or more (a new timeline) is followed.
    const last = this.lastRenderTick;
    if (renderTick < last && last - renderTick < 1) renderTick = last;
    this.lastRenderTick = renderTick;
    this.timeline.render(renderTick);
  }

  // ---------------------------------------------------------------- input

  /**
   * Sends an input, stamped with the fractional tick the last {@link frame}
   * drew ({@link viewTick}; `null` before one).
   *
   * @param input the input value
   * @returns the INPUT's seq
   */
  send(input: Input): number {
    if (this.link === undefined) throw new Error("ShardGame: no connection attached");
    // While moving, the picture drawn is the old shard's: its ticks mean nothing to the new one.
    const viewTick = this.switching ? null : (this.timeline.drawnTick() ?? null);
    const seq = this.link.sendInput(input, viewTick);
    this.sentAt.set(seq, this.now());
    for (const p of this.predictors) p.record(seq, input);
    return seq;
  }

  /**
   * A predictor that records every input sent from now on, drops refused
   * ones and is cleared on reconnect. After each frame call
   * `reconcile(stateOfYourEntity, game.lastSeq)`.
   *
   * @param step applies one input to a state (pure)
   */
  predict<State>(step: StepFunction<State, Input>): Predictor<State, Input> {
    const p = new Predictor<State, Input>(step);
    this.predictors.add(p as Predictor<unknown, Input>);
    return p;
  }

  /** Closes the session. */
  close(): void {
    this.link?.close();
  }

  // ---------------------------------------------------------------- transport side

  /**
   * The connection dropped and a new one will follow. Inputs not yet
   * applied are lost with it, so predictions and pending round-trip
   * measurements are cleared (inputs sent from now on, which go out on the
   * new connection, are recorded again). The new connection's first FRAME
   * is a BASELINE: held entities it does not list will leave.
   */
  connectionReset(): void {
    this.replica.awaitBaseline();
    for (const p of this.predictors) p.clear();
    this.sentAt.clear();
    this.lastSeqValue = 0;
  }

  /**
   * The session moved to another shard (TRANSFER): what follows comes from
   * a shard with its own ticks and entity ids. Like {@link connectionReset}
   * (predictions and pending round trips are cleared), and until the new
   * shard's first FRAME the game keeps drawing the last picture (the render
   * time runs on; past the newest tick the newest state is held) and sends
   * inputs with no view tick. That FRAME (a BASELINE) starts a new history:
   * the replica, the timeline and the clock begin again from it, so the
   * next {@link frame} draws the new shard's entities (the old ids are
   * reported in {@link left}, the new ones in {@link entered}) at its time
   * instead of holding or jumping back.
   */
  shardChanged(): void {
    this.connectionReset();
    this.switching = true;
  }

  /** True between {@link shardChanged} and the new shard's first FRAME. */
  get moving(): boolean {
    return this.switching;
  }

  /**
   * Handles one message from the server.
   *
   * @param msg a decoded server message
   * @param at local arrival time (ms); default the game's clock
   */
  receive(msg: ServerMessage, at: number = this.now()): void {
    switch (msg.type) {
      case MessageType.Welcome:
        this.codec = msg.codec;
        if (!this.givenTickRate && msg.tickRate > 0) this.clock.setTickRate(msg.tickRate);
        return;
      case MessageType.Frame:
        this.onFrame(msg.tick, msg.lastSeq, msg.snapshot, msg.entities, at);
        return;
      case MessageType.Ack:
        this.sample(msg.seq, at);
        return;
      case MessageType.Reject:
        this.sample(msg.seq, at);
        for (const p of this.predictors) p.refuse(msg.seq);
        return;
      default:
        return;
    }
  }

  private onFrame(
    tick: number,
    lastSeq: number,
    snapshot: Uint8Array | null,
    entities: Uint8Array | undefined,
    at: number,
  ): void {
    if (this.switching) {
      // The new shard's first FRAME: its ticks, ids and clock start over.
      this.switching = false;
      this.replica.clear();
      this.timeline.reset();
      this.clock.reset();
      this.lastRenderTick = -Infinity;
      this.snapshotBytes = null;
      this.snapshotValue = undefined;
      this.snapshotDecoded = false;
    }
    this.frames++;
    this.bytes += (snapshot?.length ?? 0) + (entities?.length ?? 0);
    if (snapshot !== null) {
      this.snapshotBytes = snapshot;
      this.snapshotCodec = this.codec;
      this.snapshotDecoded = false;
    }
    if (entities !== undefined) {
      let change;
      try {
        change = this.replica.apply(entities);
      } catch (e) {
        if (!(e instanceof EntitiesDecodeError)) throw e;
        // The replica is unchanged; the protocol says: close and reconnect.
        this.onError?.(e);
        this.connectionReset();
        this.link?.reconnect?.(e.message);
        return;
      }
      this.timeline.push(tick, change, this.replica); // no-op for an ignored payload
    }
    this.newestTick = tick;
    this.clock.observe(tick, at);
    this.lastSeqValue = lastSeq;
    for (const seq of [...this.sentAt.keys()]) if (seq <= lastSeq) this.sample(seq, at);
  }

  private sample(seq: number, at: number): void {
    const sent = this.sentAt.get(seq);
    if (sent === undefined) return;
    this.sentAt.delete(seq);
    const ms = Math.max(0, at - sent);
    this.rtt = this.rtt === undefined ? ms : this.rtt + this.alpha * (ms - this.rtt);
  }
}
