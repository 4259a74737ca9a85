/**
 * The replica's state at each received tick, and the interpolated view of it
 * at a render tick.
 *
 * Each received FRAME becomes one {@link TickState}: every visible entity's
 * position and components at that tick. Rendering at a fractional tick `r`
 * takes the last state at or before `r` (A) and the first one after it (B):
 * the set of entities and their components come from A (so spawns, despawns
 * and component changes show at the tick they happened), and positions are
 * interpolated from A to B for entities present in both as the same
 * incarnation. An id that was removed and reused is a new incarnation.
 *
 * The definition, exactly (the server's lag-compensation rewind,
 * `src/replication/sent_history.h`, computes the same doubles, and the
 * shared fixtures in `tests/fixtures/lagcomp/` check it, with
 * `test/game/lagcomp-fixtures.test.ts`):
 * - `t = min(1, max(0, (r - A.tick) / (B.tick - A.tick)))`, `t = 0`
 *   without B (r past the newest tick) or when r is before the oldest kept
 *   tick (A is then the oldest);
 * - `x = A.x + (B.x - A.x) * t` (the same for y and z), where `A.x` is the
 *   replica's `qx * precision` after that tick's payload; an entity that B
 *   does not hold as the same incarnation stays at `A.x`. Keep this exact
 *   form: an algebraically equal one (`A.x * (1 - t) + B.x * t`) rounds
 *   differently and fails the fixtures.
 * - Hold when quiet: frames arrive every tick, and an entity a payload does
 *   not update holds its position at that tick (its state is carried from
 *   the tick before): between two updates several ticks apart it stands
 *   still, then moves during the tick before the update, instead of
 *   gliding across the whole gap. There is no snapping and no
 *   extrapolation.
 *
 * {@link EntityTimeline.drawnTick} is the fractional tick the last render
 * drew; clients stamp inputs with it (INPUT `view_tick`) and the server
 * rewinds to that picture.
 *
 * @module
 */
import type { EntityReplica, ReplicaChange, ReplicaEntity } from "./entities-decoder.js";

/** One entity's state at one received tick. Never mutated. */
export interface EntitySample {
  /** World x (`qx * precision`). */
  readonly x: number;
  /** World y. */
  readonly y: number;
  /** World z. */
  readonly z: number;
  /** Component bytes by component id. */
  readonly components: ReadonlyMap<number, Uint8Array>;
}

/** An entity as drawn by the last `frame()`. */
export interface RenderEntity {
  /** Entity id. */
  readonly id: number;
  /** Interpolated world x. */
  readonly x: number;
  /** Interpolated world y. */
  readonly y: number;
  /** Interpolated world z. */
  readonly z: number;
  /** Components at the tick drawn (those of {@link from}). */
  readonly components: ReadonlyMap<number, Uint8Array>;
  /** The entity at the received tick at or before the render time. */
  readonly from: EntitySample;
  /**
   * The entity at the next received tick; the same object as {@link from}
   * when there is none or the entity is gone (or a new incarnation) by then.
   */
  readonly to: EntitySample;
  /** Fraction of the way from {@link from} to {@link to}, in [0, 1]. */
  readonly t: number;
}

interface Held {
  readonly gen: number;
  readonly sample: EntitySample;
}

/** The visible entities at one received tick. */
export interface TickState {
  /** The FRAME's tick. */
  readonly tick: number;
  /** Entities at that tick (with their incarnation numbers). */
  readonly entities: ReadonlyMap<number, Held>;
}

class MutableRenderEntity implements RenderEntity {
  x = 0;
  y = 0;
  z = 0;
  t = 0;
  constructor(
    readonly id: number,
    readonly gen: number,
    public from: EntitySample,
    public to: EntitySample,
  ) {}
  get components(): ReadonlyMap<number, Uint8Array> {
    return this.from.components;
  }
}

/** Where the last render fell between received ticks. */
export interface RenderPosition {
  /** The (fractional) render tick asked for. */
  readonly tick: number;
  /** The received tick drawn as "from" (`undefined` before any frame). */
  readonly fromTick: number | undefined;
  /** The received tick drawn as "to" (equal to `fromTick` when holding). */
  readonly toTick: number | undefined;
  /** Fraction between them. */
  readonly t: number;
}

/**
 * Per-tick history of the replica plus the render view built from it.
 */
export class EntityTimeline {
  private states: TickState[] = [];
  private current: ReadonlyMap<number, Held> | undefined; // entities at the newest received tick
  private nextGen = 1;
  private readonly rendered = new Map<number, MutableRenderEntity>();
  private enteredIds: number[] = [];
  private leftIds: number[] = [];
  private position: RenderPosition = { tick: 0, fromTick: undefined, toTick: undefined, t: 0 };

  /** @param maxStates most received ticks kept (older ones are dropped first) */
  constructor(private readonly maxStates = 600) {}

  /** Entities drawn by the last {@link render}. */
  get entities(): ReadonlyMap<number, RenderEntity> {
    return this.rendered;
  }

  /** Ids that appeared in the last {@link render} (not drawn by the one before). */
  get entered(): readonly number[] {
    return this.enteredIds;
  }

  /** Ids that disappeared in the last {@link render}. An id in both lists was removed and reused. */
  get left(): readonly number[] {
    return this.leftIds;
  }

  /** Where the last render fell. */
  get renderPosition(): RenderPosition {
    return this.position;
  }

  /** Newest received tick, or `undefined`. */
  get newestTick(): number | undefined {
    return this.states[this.states.length - 1]?.tick;
  }

  /** Oldest received tick still kept, or `undefined`. */
  get oldestTick(): number | undefined {
    return this.states[0]?.tick;
  }

  /** Number of received ticks kept. */
  get size(): number {
    return this.states.length;
  }

  /**
   * Forgets the received ticks (the next {@link push} starts a new history),
   * e.g. after the shard's ticks went back. The drawn entities stay until
   * the next render.
   */
  clearHistory(): void {
    this.states = [];
  }

  /**
   * Starts over for another shard's entities (their ids name other
   * entities): forgets the received ticks and the entities held, so every
   * entity of the next {@link push} is a new incarnation (the next render
   * reports the ids drawn now as left, the new ones as entered; an id in
   * both was reused). The drawn entities stay until the next render;
   * {@link drawnTick} is `undefined` until a render finds a received tick.
   */
  reset(): void {
    this.states = [];
    this.current = undefined;
    this.position = { tick: this.position.tick, fromTick: undefined, toTick: undefined, t: 0 };
  }

  /**
   * Records the replica's state after the FRAME of `tick` was applied.
   *
   * @param tick the FRAME's tick (greater than the previous one, else the history restarts)
   * @param change what the payload did (from {@link EntityReplica.apply})
   * @param replica the replica after applying it
   */
  push(tick: number, change: ReplicaChange, replica: EntityReplica): void {
    if (change.ignored) return;
    const prev = this.states[this.states.length - 1];
    if (prev !== undefined && tick <= prev.tick) this.states = [];
    const before = this.current;
    const sample = (e: ReplicaEntity): EntitySample => {
      const [x, y, z] = replica.position(e);
      return { x, y, z, components: e.components };
    };
    let entities: Map<number, Held>;
    if (change.baseline || before === undefined) {
      // Everything is listed; ids held before and listed again continue.
      entities = new Map();
      const kept = new Set(change.kept);
      for (const [id, e] of replica.entities) {
        const old = before?.get(id);
        const gen = old !== undefined && kept.has(id) ? old.gen : this.nextGen++;
        entities.set(id, { gen, sample: sample(e) });
      }
    } else {
      entities = new Map(before);
      for (const id of change.left) entities.delete(id);
      for (const id of change.entered) entities.set(id, { gen: this.nextGen++, sample: sample(replica.entities.get(id)!) });
      for (const id of change.updated) {
        const gen = entities.get(id)!.gen;
        entities.set(id, { gen, sample: sample(replica.entities.get(id)!) });
      }
    }
    this.current = entities;
    this.states.push({ tick, entities });
    if (this.states.length > this.maxStates) this.states.splice(0, this.states.length - this.maxStates);
  }

  /**
   * Builds the view at the fractional tick `renderTick` and prunes received
   * ticks that no later render can need (those before the "from" tick).
   *
   * @param renderTick the tick to draw
   */
  render(renderTick: number): void {
    const entered: number[] = [];
    const left: number[] = [];
    const states = this.states;
    if (states.length === 0) {
      this.position = { tick: renderTick, fromTick: undefined, toTick: undefined, t: 0 };
      this.enteredIds = entered;
      this.leftIds = left;
      return;
    }
    // A: last state at or before renderTick (the oldest when all are after).
    let ai = 0;
    for (let i = states.length - 1; i >= 0; i--) {
      if (states[i]!.tick <= renderTick) {
        ai = i;
        break;
      }
    }
    const a = states[ai]!;
    const b = a.tick <= renderTick ? states[ai + 1] : undefined;
    const t = b === undefined ? 0 : Math.min(1, Math.max(0, (renderTick - a.tick) / (b.tick - a.tick)));

    for (const [id, r] of this.rendered) {
      const held = a.entities.get(id);
      if (held === undefined || held.gen !== r.gen) {
        this.rendered.delete(id);
        left.push(id);
      }
    }
    for (const [id, held] of a.entities) {
      let r = this.rendered.get(id);
      const next = b?.entities.get(id);
      const to = next !== undefined && next.gen === held.gen ? next.sample : held.sample;
      if (r === undefined) {
        r = new MutableRenderEntity(id, held.gen, held.sample, to);
        this.rendered.set(id, r);
        entered.push(id);
      } else {
        r.from = held.sample;
        r.to = to;
      }
      const from = held.sample;
      r.t = t;
      r.x = from.x + (to.x - from.x) * t;
      r.y = from.y + (to.y - from.y) * t;
      r.z = from.z + (to.z - from.z) * t;
    }
    this.position = { tick: renderTick, fromTick: a.tick, toTick: b?.tick ?? a.tick, t };
    this.enteredIds = entered;
    this.leftIds = left;
    if (ai > 0) states.splice(0, ai);
  }

  /**
   * The (fractional) tick drawn by the last {@link render}: its render tick
   * clamped to `[fromTick, toTick]`, the received ticks it drew between
   * (so a render past the newest tick, or before the oldest, drew that
   * tick). Rendering at this value again draws the same positions. This is
   * the view tick an input is stamped with; the server's rewind
   * interpolates its record of what it sent at it the same way (module
   * comment). `undefined` before a render found a received tick. Later
   * {@link push} calls do not change it: it is what was drawn, not what
   * arrived since.
   */
  drawnTick(): number | undefined {
    const p = this.position;
    if (p.fromTick === undefined) return undefined;
    const hi = Math.max(p.toTick ?? p.fromTick, p.fromTick);
    return Math.min(hi, Math.max(p.fromTick, p.tick));
  }
}
