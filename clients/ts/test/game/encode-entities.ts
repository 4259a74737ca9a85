// A straightforward encoder of the `entities` payload (docs/protocol.md,
// "Entity changes"), written independently of the decoder, for tests. It can
// also emit deliberately broken payloads through its low-level writers.

export class ByteWriter {
  bytes: number[] = [];

  u8(v: number): this {
    this.bytes.push(v & 0xff);
    return this;
  }

  f64(v: number): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    this.bytes.push(...b);
    return this;
  }

  /** Unsigned LEB128 of a number (arithmetic, safe for values above 2^32) or bigint. */
  varint(v: number | bigint): this {
    let x = BigInt(v);
    if (x < 0n) throw new Error("negative varint");
    do {
      let b = Number(x & 0x7fn);
      x >>= 7n;
      if (x > 0n) b |= 0x80;
      this.bytes.push(b);
    } while (x > 0n);
    return this;
  }

  zigzag(v: number | bigint): this {
    const x = BigInt(v);
    return this.varint(x >= 0n ? x * 2n : -x * 2n - 1n);
  }

  raw(b: ArrayLike<number>): this {
    for (let i = 0; i < b.length; i++) this.bytes.push(b[i]!);
    return this;
  }

  done(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

export class BitWriter {
  private bits: number[] = [];

  bit(b: number): this {
    this.bits.push(b ? 1 : 0);
    return this;
  }

  /** n bits of v, most significant first (v may be a bigint). */
  write(v: number | bigint, n: number): this {
    const x = BigInt(v);
    for (let i = n - 1; i >= 0; i--) this.bits.push(Number((x >> BigInt(i)) & 1n));
    return this;
  }

  expGolomb(v: number | bigint, k: number): this {
    const w = BigInt(v) + (1n << BigInt(k));
    const n = w.toString(2).length;
    for (let i = 0; i < n - 1 - k; i++) this.bits.push(0);
    return this.write(w, n);
  }

  zigzagEG(v: number | bigint, k: number): this {
    const x = BigInt(v);
    return this.expGolomb(x >= 0n ? x * 2n : -x * 2n - 1n, k);
  }

  get length(): number {
    return this.bits.length;
  }

  done(): Uint8Array {
    const out = new Uint8Array(Math.ceil(this.bits.length / 8));
    this.bits.forEach((b, i) => {
      if (b) out[i >> 3]! |= 0x80 >> (i & 7);
    });
    return out;
  }
}

export interface SpawnSpec {
  id: number | bigint;
  q: [number, number, number];
  components?: [number, Uint8Array][];
}

export interface UpdateSpec {
  id: number | bigint;
  /** Axis differences; `undefined` = axis not in the mask. */
  dx?: number | bigint;
  dy?: number | bigint;
  dz?: number | bigint;
  /** Component changes (null = removed); present = C in the mask. */
  components?: [number, Uint8Array | null][];
}

export interface PayloadSpec {
  baseline?: boolean;
  yUp?: boolean;
  precision?: number;
  despawns?: (number | bigint)[];
  spawns?: SpawnSpec[];
  updates?: UpdateSpec[];
  /** Exp-Golomb orders; default [2, 2, 0]. */
  k?: [number, number, number];
}

function idDeltas(ids: (number | bigint)[]): bigint[] {
  const out: bigint[] = [];
  let prev: bigint | undefined;
  for (const raw of ids) {
    const id = BigInt(raw);
    out.push(prev === undefined ? id : id - prev - 1n);
    prev = id;
  }
  return out;
}

/** Encodes a payload exactly as docs/protocol.md describes. */
export function encodeEntities(spec: PayloadSpec): Uint8Array {
  const w = new ByteWriter();
  w.u8((spec.baseline ? 1 : 0) | (spec.yUp ? 2 : 0));
  if (spec.baseline) w.f64(spec.precision ?? 0.01);
  const despawns = spec.despawns ?? [];
  w.varint(despawns.length);
  for (const d of idDeltas(despawns)) w.varint(d);
  const spawns = spec.spawns ?? [];
  w.varint(spawns.length);
  const sd = idDeltas(spawns.map((s) => s.id));
  spawns.forEach((s, i) => {
    w.varint(sd[i]!);
    for (const q of s.q) w.zigzag(q);
    const comps = s.components ?? [];
    w.varint(comps.length);
    for (const [cid, bytes] of comps) w.u8(cid).varint(bytes.length).raw(bytes);
  });
  const updates = spec.updates ?? [];
  w.varint(updates.length);
  if (updates.length > 0) {
    const [kx, ky, kz] = spec.k ?? [2, 2, 0];
    w.u8(kx).u8(ky).u8(kz);
    const bits = new BitWriter();
    const ud = idDeltas(updates.map((u) => u.id));
    let prevMask = 0b1100;
    updates.forEach((u, i) => {
      bits.expGolomb(ud[i]!, 0);
      const mask =
        (u.dx !== undefined ? 8 : 0) | (u.dy !== undefined ? 4 : 0) | (u.dz !== undefined ? 2 : 0) | (u.components ? 1 : 0);
      if (mask === prevMask) bits.bit(1);
      else bits.bit(0).write(mask, 4);
      prevMask = mask;
      if (u.dx !== undefined) bits.zigzagEG(u.dx, kx);
      if (u.dy !== undefined) bits.zigzagEG(u.dy, ky);
      if (u.dz !== undefined) bits.zigzagEG(u.dz, kz);
    });
    const section = bits.done();
    w.varint(section.length).raw(section);
    for (const u of updates) {
      if (!u.components) continue;
      w.varint(u.components.length);
      for (const [cid, bytes] of u.components) {
        w.u8(cid);
        if (bytes === null) w.varint(0);
        else w.varint(bytes.length + 1).raw(bytes);
      }
    }
  }
  return w.done();
}

export const bytes = (...v: number[]): Uint8Array => Uint8Array.from(v);
