/**
 * Decoder for the `entities` element of a FRAME (replication mode), as
 * specified in `docs/protocol.md`, section "Interest and replication".
 *
 * Two layers:
 * - {@link decodeEntities} parses one payload into plain data, checking
 *   everything that can be checked without the replica (truncation,
 *   trailing bytes, flags, id range, Exp-Golomb limits).
 * - {@link EntityReplica} holds the entities a connection can see and
 *   applies payloads to them atomically: a malformed payload throws and
 *   leaves the replica as it was.
 *
 * @module
 */

/** Flags bit 0: drop every held entity, then apply. */
export const FLAG_BASELINE = 0x01;
/** Flags bit 1: y is up (ground plane x, z); otherwise z is up. */
export const FLAG_Y_UP = 0x02;

/** Largest entity id the protocol allows (ids are below 2^53). */
export const MAX_ENTITY_ID = Number.MAX_SAFE_INTEGER;

/**
 * Largest magnitude of a quantised coordinate (`|v / precision|` stays below
 * 2^52, `docs/guest-abi.md`); a payload going beyond it is refused.
 */
export const MAX_QUANTISED = 2 ** 52;

/** Largest Exp-Golomb order the protocol allows for an axis. */
export const MAX_EXP_GOLOMB_ORDER = 32;

/** Position-mask bits of an update record (wire order X, Y, Z, C). */
export const MASK_X = 0b1000;
/** @see MASK_X */
export const MASK_Y = 0b0100;
/** @see MASK_X */
export const MASK_Z = 0b0010;
/** Component bit of an update record's mask. */
export const MASK_C = 0b0001;

/**
 * Why a payload was refused. Every kind means the payload is malformed in
 * the sense of the protocol: the client should close and reconnect.
 */
export type EntitiesErrorKind =
  /** The payload (or its bit section) ends before a complete value. */
  | "truncated"
  /** Bytes (or whole bytes of the bit section) are left over. */
  | "trailing_bytes"
  /** Flags bits 2-7 are set. */
  | "bad_flags"
  /** A despawn or update names an id the replica does not hold. */
  | "unknown_id"
  /** A spawn list names one id twice. */
  | "repeated_id"
  /** An id is 2^53 or above. */
  | "id_out_of_range"
  /** A varint is longer than 10 bytes or wider than 64 bits. */
  | "bad_varint"
  /** An Exp-Golomb code is longer than 64 bits, or an order is above 32. */
  | "bad_exp_golomb"
  /** A BASELINE's precision is not a finite positive number. */
  | "bad_precision"
  /** A spawn lists its components out of ascending id order (or twice). */
  | "component_order"
  /** A quantised coordinate is beyond +-2^52. */
  | "value_out_of_range";

/** Thrown for a malformed `entities` payload. */
export class EntitiesDecodeError extends Error {
  /** What is wrong with the payload. */
  readonly kind: EntitiesErrorKind;
  /** Byte offset in the payload where the problem was found. */
  readonly offset: number;

  /**
   * @param kind what is wrong
   * @param offset byte offset in the payload
   * @param detail human-readable detail
   */
  constructor(kind: EntitiesErrorKind, offset: number, detail: string) {
    super(`malformed entities payload (${kind} at byte ${offset}): ${detail}`);
    this.name = "EntitiesDecodeError";
    this.kind = kind;
    this.offset = offset;
  }
}

/** A three-axis quantised position: `v = q * precision` per axis. */
export type QuantisedPosition = readonly [number, number, number];

/** One spawn of a payload: a new entity with its full state. */
export interface DecodedSpawn {
  /** Entity id. */
  readonly id: number;
  /** Absolute quantised position. */
  readonly q: QuantisedPosition;
  /** Components in ascending id order: [component id, bytes]. */
  readonly components: ReadonlyArray<readonly [number, Uint8Array]>;
}

/** One update record of a payload. */
export interface DecodedUpdate {
  /** Entity id. */
  readonly id: number;
  /** Mask bits ({@link MASK_X}, {@link MASK_Y}, {@link MASK_Z}, {@link MASK_C}). */
  readonly mask: number;
  /** Differences to add to the held quantised axes (0 for an axis not in the mask). */
  readonly dq: QuantisedPosition;
  /**
   * Component changes when the mask has C: [component id, bytes], where
   * `null` bytes mean the component was removed. Empty without C.
   */
  readonly components: ReadonlyArray<readonly [number, Uint8Array | null]>;
}

/** A parsed `entities` payload (not yet applied to a replica). */
export interface DecodedEntities {
  /** The BASELINE flag. */
  readonly baseline: boolean;
  /** The Y_UP flag. */
  readonly yUp: boolean;
  /** The quantisation step; present only with BASELINE. */
  readonly precision: number | undefined;
  /** Despawned ids, ascending. */
  readonly despawns: readonly number[];
  /** Spawns, ascending ids. */
  readonly spawns: readonly DecodedSpawn[];
  /** Updates, ascending ids. */
  readonly updates: readonly DecodedUpdate[];
}

/** Byte cursor over a payload. Multi-byte reads never use 32-bit bitwise ops on wide values. */
class ByteReader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  need(n: number, what: string): void {
    if (n > this.buf.length - this.pos) {
      throw new EntitiesDecodeError("truncated", this.pos, `${what}: need ${n} bytes, have ${this.remaining}`);
    }
  }

  u8(what: string): number {
    this.need(1, what);
    return this.buf[this.pos++]!;
  }

  f64(what: string): number {
    this.need(8, what);
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8);
    this.pos += 8;
    return view.getFloat64(0, true);
  }

  bytes(n: number, what: string): Uint8Array {
    this.need(n, what);
    // A copy: component bytes outlive the (possibly large) message buffer.
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /**
   * Unsigned LEB128, at most 10 bytes / 64 bits. Returns a number when the
   * value is a safe integer, else a bigint (exact).
   */
  varint(what: string): number | bigint {
    const start = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) {
        throw new EntitiesDecodeError("truncated", start, `${what}: varint runs past the end`);
      }
      const b = this.buf[this.pos++]!;
      if (i === 9 && b > 1) {
        throw new EntitiesDecodeError("bad_varint", start, `${what}: varint wider than 64 bits`);
      }
      value += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) {
        if (value <= Number.MAX_SAFE_INTEGER) return value;
        return varintBig(this.buf, start, this.pos);
      }
    }
    throw new EntitiesDecodeError("bad_varint", start, `${what}: varint longer than 10 bytes`);
  }

  /** A varint that must fit a safe integer (counts, lengths, id deltas). */
  size(what: string): number {
    const start = this.pos;
    const v = this.varint(what);
    if (typeof v === "bigint") {
      // A count or length this large can never be satisfied by the payload.
      throw new EntitiesDecodeError("truncated", start, `${what}: ${v} is more than the payload holds`);
    }
    return v;
  }
}

function varintBig(buf: Uint8Array, start: number, end: number): bigint {
  let v = 0n;
  for (let i = end - 1; i >= start; i--) v = (v << 7n) | BigInt(buf[i]! & 0x7f);
  return v;
}

/** MSB-first bit cursor over the bit section. */
class BitReader {
  private bit = 0;
  constructor(
    private readonly buf: Uint8Array,
    private readonly start: number,
    private readonly length: number,
  ) {}

  /** Bits consumed so far. */
  get consumed(): number {
    return this.bit;
  }

  private offset(): number {
    return this.start + (this.bit >>> 3);
  }

  readBit(): number {
    if (this.bit >= this.length * 8) {
      throw new EntitiesDecodeError("truncated", this.offset(), "bit section ends inside a record");
    }
    const byte = this.buf[this.start + (this.bit >>> 3)]!;
    const b = (byte >>> (7 - (this.bit & 7))) & 1;
    this.bit++;
    return b;
  }

  /** Reads n <= 24 bits as an unsigned number. */
  readSmall(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + this.readBit();
    return v;
  }

  /**
   * Exp-Golomb order k. Returns a number for a safe value, else a bigint.
   */
  expGolomb(k: number): number | bigint {
    const at = this.offset();
    let z = 0;
    while (this.readBit() === 0) {
      z++;
      if (z + k + 1 > 64) {
        throw new EntitiesDecodeError("bad_exp_golomb", at, `code longer than 64 bits (order ${k})`);
      }
    }
    if (z + k + 1 > 64) {
      throw new EntitiesDecodeError("bad_exp_golomb", at, `code longer than 64 bits (order ${k})`);
    }
    const rest = z + k; // bits after the leading 1
    if (rest <= 52) {
      let w = 1;
      let left = rest;
      while (left > 0) {
        const n = Math.min(left, 24);
        w = w * 2 ** n + this.readSmall(n);
        left -= n;
      }
      return w - 2 ** k;
    }
    let w = 1n;
    for (let i = 0; i < rest; i++) w = (w << 1n) | BigInt(this.readBit());
    const v = w - (1n << BigInt(k));
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }

  /**
   * Checks that the records end in the last byte of the section (the rest
   * of it is padding; like the reference decoder, its bits are not checked).
   */
  finish(): void {
    if (Math.ceil(this.bit / 8) !== this.length) {
      throw new EntitiesDecodeError(
        "trailing_bytes",
        this.offset(),
        `bit section has ${this.length} bytes but its records end after ${Math.ceil(this.bit / 8)}`,
      );
    }
  }
}

/** zigzag decode of a number or bigint to a signed number (or bigint when wide). */
function unzigzag(v: number | bigint): number | bigint {
  if (typeof v === "number") {
    // Arithmetic, not bitwise: v may exceed 32 bits.
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }
  const r = v & 1n ? -((v + 1n) >> 1n) : v >> 1n;
  return r >= BigInt(Number.MIN_SAFE_INTEGER) && r <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r) : r;
}

function coordinate(v: number | bigint, offset: number, what: string): number {
  if (typeof v === "bigint" || Math.abs(v) > MAX_QUANTISED) {
    throw new EntitiesDecodeError("value_out_of_range", offset, `${what}: |${v}| is above 2^52`);
  }
  return v;
}

function delta(v: number | bigint, offset: number): number {
  // |q| <= 2^52 before and after, so a difference beyond 2^53 cannot be valid.
  if (typeof v === "bigint" || !Number.isSafeInteger(v)) {
    throw new EntitiesDecodeError("value_out_of_range", offset, `update delta ${v} is out of range`);
  }
  return v;
}

function nextId(prev: number | undefined, v: number | bigint, offset: number, what: string): number {
  if (typeof v === "bigint") {
    throw new EntitiesDecodeError("id_out_of_range", offset, `${what}: id at or above 2^53`);
  }
  const id = prev === undefined ? v : prev + 1 + v;
  if (id > MAX_ENTITY_ID) {
    throw new EntitiesDecodeError("id_out_of_range", offset, `${what}: id at or above 2^53`);
  }
  return id;
}

/**
 * Parses one `entities` payload. Throws {@link EntitiesDecodeError} when it
 * is malformed in any way that does not depend on the replica (truncation,
 * trailing bytes, also in the bit section; flags bits 2-7; ids at or above
 * 2^53; over-long varints or Exp-Golomb codes; orders above 32; a BASELINE
 * precision that is not finite and positive; a spawn's component ids not
 * strictly ascending; a spawn coordinate beyond +-2^52). The checks are
 * those of the C++ reference decoder (`src/replication/decoder.cc`).
 *
 * @param payload the `entities` bytes of one FRAME
 * @returns the parsed payload
 */
export function decodeEntities(payload: Uint8Array): DecodedEntities {
  const r = new ByteReader(payload);
  const flags = r.u8("flags");
  if ((flags & ~(FLAG_BASELINE | FLAG_Y_UP)) !== 0) {
    throw new EntitiesDecodeError("bad_flags", 0, `flags 0x${flags.toString(16)} set reserved bits 2-7`);
  }
  const baseline = (flags & FLAG_BASELINE) !== 0;
  const yUp = (flags & FLAG_Y_UP) !== 0;
  let precision: number | undefined;
  if (baseline) {
    const at = r.pos;
    precision = r.f64("precision");
    if (!Number.isFinite(precision) || precision <= 0) {
      throw new EntitiesDecodeError("bad_precision", at, `precision ${precision} is not finite and positive`);
    }
  }

  // Despawns.
  const despawns: number[] = [];
  const despawnCount = r.size("despawn_count");
  let prev: number | undefined;
  for (let i = 0; i < despawnCount; i++) {
    const at = r.pos;
    prev = nextId(prev, r.varint("despawn id"), at, "despawn");
    despawns.push(prev);
  }

  // Spawns.
  const spawns: DecodedSpawn[] = [];
  const spawnCount = r.size("spawn_count");
  prev = undefined;
  for (let i = 0; i < spawnCount; i++) {
    const at = r.pos;
    const id = nextId(prev, r.varint("spawn id"), at, "spawn");
    if (prev !== undefined && id <= prev) {
      throw new EntitiesDecodeError("repeated_id", at, `spawn id ${id} repeated`);
    }
    prev = id;
    const q: number[] = [];
    for (const axis of ["qx", "qy", "qz"]) {
      const qa = r.pos;
      q.push(coordinate(unzigzag(r.varint(axis)), qa, `spawn of id ${id}: ${axis}`));
    }
    const componentCount = r.size("component_count");
    const components: [number, Uint8Array][] = [];
    for (let c = 0; c < componentCount; c++) {
      const ca = r.pos;
      const cid = r.u8("component_id");
      if (c > 0 && cid <= components[c - 1]![0]) {
        throw new EntitiesDecodeError("component_order", ca, `spawn of id ${id}: component ids not strictly ascending`);
      }
      const len = r.size("component len");
      components.push([cid, r.bytes(len, "component bytes")]);
    }
    spawns.push({ id, q: q as unknown as QuantisedPosition, components });
  }

  // Updates.
  const updates: DecodedUpdate[] = [];
  const updateCount = r.size("update_count");
  if (updateCount > 0) {
    const orders: number[] = [];
    for (const axis of ["kx", "ky", "kz"]) {
      const at = r.pos;
      const k = r.u8(axis);
      if (k > MAX_EXP_GOLOMB_ORDER) {
        throw new EntitiesDecodeError("bad_exp_golomb", at, `${axis} = ${k} is above ${MAX_EXP_GOLOMB_ORDER}`);
      }
      orders.push(k);
    }
    const bitBytes = r.size("bit_bytes");
    r.need(bitBytes, "bit section");
    const bits = new BitReader(payload, r.pos, bitBytes);
    const bitStart = r.pos;
    let mask = MASK_X | MASK_Y;
    prev = undefined;
    const masks: number[] = [];
    const records: { id: number; mask: number; dq: number[] }[] = [];
    for (let i = 0; i < updateCount; i++) {
      const at = bitStart + (bits.consumed >>> 3);
      const id = nextId(prev, bits.expGolomb(0), at, "update");
      prev = id;
      if (bits.readBit() === 0) mask = bits.readSmall(4);
      masks.push(mask);
      const dq = [0, 0, 0];
      for (let axis = 0; axis < 3; axis++) {
        if ((mask & (MASK_X >>> axis)) === 0) continue;
        const va = bitStart + (bits.consumed >>> 3);
        dq[axis] = delta(unzigzag(bits.expGolomb(orders[axis]!)), va);
      }
      records.push({ id, mask, dq });
    }
    bits.finish();
    r.pos += bitBytes;

    for (const rec of records) {
      const components: [number, Uint8Array | null][] = [];
      if ((rec.mask & MASK_C) !== 0) {
        const changeCount = r.size("change_count");
        for (let c = 0; c < changeCount; c++) {
          const cid = r.u8("component_id");
          const lenPlusOne = r.size("len_plus_one");
          components.push([cid, lenPlusOne === 0 ? null : r.bytes(lenPlusOne - 1, "component bytes")]);
        }
      }
      updates.push({ id: rec.id, mask: rec.mask, dq: rec.dq as unknown as QuantisedPosition, components });
    }
  }

  if (r.remaining !== 0) {
    throw new EntitiesDecodeError("trailing_bytes", r.pos, `${r.remaining} bytes after the payload`);
  }
  return { baseline, yUp, precision, despawns, spawns, updates };
}

/**
 * One entity held by a {@link EntityReplica}. These objects are never
 * mutated: an update replaces the entity's object (and its component map
 * when components change), so older references stay valid snapshots.
 */
export interface ReplicaEntity {
  /** Quantised position [qx, qy, qz]; world units are `q * precision`. */
  readonly q: QuantisedPosition;
  /** Component bytes by component id. */
  readonly components: ReadonlyMap<number, Uint8Array>;
}

/** What one applied payload did to the replica. */
export interface ReplicaChange {
  /** True when the payload came before the first BASELINE and was ignored. */
  readonly ignored: boolean;
  /** True when the payload was a BASELINE. */
  readonly baseline: boolean;
  /**
   * Ids that left: the despawns, or with a BASELINE the held ids it did not
   * spawn again. Ascending. (A spawn of a held id that was not despawned
   * replaces it and is only in `entered`, as in the reference decoder.)
   */
  readonly left: readonly number[];
  /** Spawned ids (ascending); with a BASELINE, every id it lists. */
  readonly entered: readonly number[];
  /** Ids whose position or components an update changed (ascending). */
  readonly updated: readonly number[];
  /**
   * With a BASELINE: ids that were held before and are listed again (they
   * are in `entered` but not in `left`). Empty otherwise.
   */
  readonly kept: readonly number[];
}

const IGNORED: ReplicaChange = { ignored: true, baseline: false, left: [], entered: [], updated: [], kept: [] };

/**
 * The entities one connection can see, kept in step with the server by
 * applying each FRAME's `entities` payload with {@link EntityReplica.apply}.
 */
export class EntityReplica {
  private readonly held = new Map<number, ReplicaEntity>();
  private hasBaseline = false;
  private precisionValue = 1;
  private yUpValue = false;

  /** Held entities by id. Do not mutate; the objects are replaced, not changed, by updates. */
  get entities(): ReadonlyMap<number, ReplicaEntity> {
    return this.held;
  }

  /** The quantisation step of the last BASELINE (1 before any). */
  get precision(): number {
    return this.precisionValue;
  }

  /** The Y_UP flag of the last applied payload. */
  get yUp(): boolean {
    return this.yUpValue;
  }

  /** True once a BASELINE has been applied (since construction or {@link awaitBaseline}). */
  get synced(): boolean {
    return this.hasBaseline;
  }

  /**
   * Makes the replica ignore payloads until the next BASELINE, keeping what
   * it holds (call it when a new connection starts: its first FRAME is a
   * BASELINE, and the held entities it does not list will leave).
   */
  awaitBaseline(): void {
    this.hasBaseline = false;
  }

  /** Drops every held entity and waits for a BASELINE. */
  clear(): void {
    this.held.clear();
    this.hasBaseline = false;
  }

  /**
   * World position of a held entity: `q * precision` per axis.
   *
   * @param entity a held entity
   * @returns [x, y, z] in world units
   */
  position(entity: ReplicaEntity): [number, number, number] {
    const p = this.precisionValue;
    return [entity.q[0] * p, entity.q[1] * p, entity.q[2] * p];
  }

  /**
   * Applies one `entities` payload. Atomic: when the payload is malformed
   * this throws {@link EntitiesDecodeError} and the replica is unchanged.
   * A payload before the first BASELINE is ignored (not even checked).
   *
   * @param payload the `entities` bytes of one FRAME
   * @returns what changed
   */
  apply(payload: Uint8Array): ReplicaChange {
    // Before the first BASELINE anything else is ignored unread.
    if (!this.hasBaseline && payload.length > 0 && (payload[0]! & FLAG_BASELINE) === 0) return IGNORED;
    const d = decodeEntities(payload);
    return this.applyDecoded(d);
  }

  /**
   * Applies an already parsed payload (see {@link decodeEntities}). Same
   * contract as {@link apply}.
   *
   * @param d the parsed payload
   * @returns what changed
   */
  applyDecoded(d: DecodedEntities): ReplicaChange {
    if (!this.hasBaseline && !d.baseline) return IGNORED;
    const held = this.held;

    // Validate against the replica first (ascending lists: no duplicates
    // within one list by construction, checked again for spawns).
    const despawned = new Set<number>();
    for (const id of d.despawns) {
      if (d.baseline || !held.has(id)) {
        throw new EntitiesDecodeError("unknown_id", 0, `despawn of id ${id}, which is not held`);
      }
      despawned.add(id);
    }
    const spawned = new Set<number>();
    for (const s of d.spawns) {
      if (spawned.has(s.id)) throw new EntitiesDecodeError("repeated_id", 0, `spawn id ${s.id} repeated`);
      spawned.add(s.id);
    }
    const heldAfterSpawns = (id: number): boolean =>
      spawned.has(id) || (!d.baseline && held.has(id) && !despawned.has(id));
    for (const u of d.updates) {
      if (!heldAfterSpawns(u.id)) {
        throw new EntitiesDecodeError("unknown_id", 0, `update of id ${u.id}, which is not held`);
      }
    }
    // Positions after updates must stay exact.
    const spawnQ = new Map<number, QuantisedPosition>();
    for (const s of d.spawns) spawnQ.set(s.id, s.q);
    const newQ = new Map<number, [number, number, number]>();
    for (const u of d.updates) {
      if ((u.mask & (MASK_X | MASK_Y | MASK_Z)) === 0) continue;
      const base = spawnQ.get(u.id) ?? held.get(u.id)!.q;
      const q: [number, number, number] = [base[0] + u.dq[0], base[1] + u.dq[1], base[2] + u.dq[2]];
      for (const v of q) {
        if (Math.abs(v) > MAX_QUANTISED) {
          throw new EntitiesDecodeError("value_out_of_range", 0, `update of id ${u.id}: |q| above 2^52`);
        }
      }
      newQ.set(u.id, q);
    }

    // Apply.
    const left: number[] = [];
    const kept: number[] = [];
    if (d.baseline) {
      for (const id of held.keys()) {
        if (spawned.has(id)) kept.push(id);
        else left.push(id);
      }
      held.clear();
      this.precisionValue = d.precision!;
      this.hasBaseline = true;
    } else {
      for (const id of d.despawns) {
        held.delete(id);
        left.push(id);
      }
    }
    this.yUpValue = d.yUp;
    const entered: number[] = [];
    for (const s of d.spawns) {
      held.set(s.id, { q: s.q, components: new Map(s.components) });
      entered.push(s.id);
    }
    const updated: number[] = [];
    for (const u of d.updates) {
      const cur = held.get(u.id)!;
      let components = cur.components;
      if (u.components.length > 0) {
        const m = new Map(components);
        for (const [cid, bytes] of u.components) {
          if (bytes === null) m.delete(cid);
          else m.set(cid, bytes);
        }
        components = m;
      }
      held.set(u.id, { q: newQ.get(u.id) ?? cur.q, components });
      updated.push(u.id);
    }
    left.sort((a, b) => a - b);
    kept.sort((a, b) => a - b);
    return { ignored: false, baseline: d.baseline, left, entered, updated, kept };
  }
}
