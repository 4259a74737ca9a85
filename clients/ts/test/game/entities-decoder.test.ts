import { describe, expect, it } from "vitest";
import {
  decodeEntities,
  EntitiesDecodeError,
  EntityReplica,
  MASK_C,
  MASK_X,
  MASK_Y,
  MASK_Z,
  type EntitiesErrorKind,
} from "../../src/game/index.js";
import { BitWriter, ByteWriter, bytes, encodeEntities } from "./encode-entities.js";

function expectMalformed(fn: () => unknown, kind: EntitiesErrorKind): EntitiesDecodeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(EntitiesDecodeError);
    expect((e as EntitiesDecodeError).kind).toBe(kind);
    return e as EntitiesDecodeError;
  }
  throw new Error(`expected a ${kind} error`);
}

function state(r: EntityReplica): Record<number, { q: number[]; c: Record<number, number[]> }> {
  const out: Record<number, { q: number[]; c: Record<number, number[]> }> = {};
  for (const [id, e] of r.entities) {
    const c: Record<number, number[]> = {};
    for (const [cid, b] of e.components) c[cid] = [...b];
    out[id] = { q: [...e.q], c };
  }
  return out;
}

const baseline = encodeEntities({
  baseline: true,
  precision: 0.01,
  spawns: [
    { id: 3, q: [100, -200, 0], components: [[1, bytes(7)], [2, bytes(0x61, 0x62)]] },
    { id: 10, q: [0, 0, 5] },
    { id: 11, q: [-1, 1, -1], components: [[3, bytes()]] },
  ],
});

describe("decodeEntities", () => {
  it("parses flags, precision, spawns with components", () => {
    const d = decodeEntities(baseline);
    expect(d.baseline).toBe(true);
    expect(d.yUp).toBe(false);
    expect(d.precision).toBe(0.01);
    expect(d.despawns).toEqual([]);
    expect(d.spawns.map((s) => s.id)).toEqual([3, 10, 11]);
    expect(d.spawns[0]!.q).toEqual([100, -200, 0]);
    expect(d.spawns[0]!.components).toEqual([
      [1, bytes(7)],
      [2, bytes(0x61, 0x62)],
    ]);
    expect(d.spawns[2]!.components).toEqual([[3, bytes()]]);
    expect(d.updates).toEqual([]);
  });

  it("parses the bit section: ids, same_mask, per-axis orders, component section in record order", () => {
    const p = encodeEntities({
      yUp: true,
      k: [0, 3, 5],
      despawns: [4, 9],
      updates: [
        { id: 3, dx: 1, dy: -1 }, // X|Y = the initial previous mask: same_mask
        { id: 5, dx: 1000, dy: 0 }, // same again
        { id: 6, dz: -7, components: [[1, bytes(9)], [2, null]] },
        { id: 40, components: [[4, bytes(1, 2, 3)]] },
        { id: 41 }, // empty mask
      ],
    });
    const d = decodeEntities(p);
    expect(d.baseline).toBe(false);
    expect(d.yUp).toBe(true);
    expect(d.precision).toBeUndefined();
    expect(d.despawns).toEqual([4, 9]);
    expect(d.updates.map((u) => [u.id, u.mask, [...u.dq]])).toEqual([
      [3, MASK_X | MASK_Y, [1, -1, 0]],
      [5, MASK_X | MASK_Y, [1000, 0, 0]],
      [6, MASK_Z | MASK_C, [0, 0, -7]],
      [40, MASK_C, [0, 0, 0]],
      [41, 0, [0, 0, 0]],
    ]);
    expect(d.updates[2]!.components).toEqual([
      [1, bytes(9)],
      [2, null],
    ]);
    expect(d.updates[3]!.components).toEqual([[4, bytes(1, 2, 3)]]);
  });

  it("reads ids up to 2^53 - 1 exactly, with arithmetic rather than 32-bit ops", () => {
    const big = 2 ** 53 - 1;
    const mid = 2 ** 40 + 12345;
    const p = encodeEntities({
      baseline: true,
      spawns: [
        { id: 2 ** 32 + 1, q: [0, 0, 0] },
        { id: mid, q: [2 ** 51, -(2 ** 51), 3] },
        { id: big, q: [0, 0, 0] },
      ],
    });
    const d = decodeEntities(p);
    expect(d.spawns.map((s) => s.id)).toEqual([2 ** 32 + 1, mid, big]);
    expect(d.spawns[1]!.q).toEqual([2 ** 51, -(2 ** 51), 3]);

    const u = decodeEntities(
      encodeEntities({ k: [0, 0, 0], updates: [{ id: mid, dx: 2 ** 40 }, { id: big, dx: -(2 ** 45) - 1 }] }),
    );
    expect(u.updates.map((x) => [x.id, x.dq[0]])).toEqual([
      [mid, 2 ** 40],
      [big, -(2 ** 45) - 1],
    ]);
  });

  it("reads deltas wider than 53 bits (zigzag of up to 2^53) exactly", () => {
    const d = decodeEntities(
      encodeEntities({ k: [32, 0, 0], updates: [{ id: 1, dx: -(2 ** 53) + 1, dy: 2 ** 53 - 1 }] }),
    );
    expect(d.updates[0]!.dq).toEqual([-(2 ** 53) + 1, 2 ** 53 - 1, 0]);
  });

  it("reads Exp-Golomb codes of every order 0..32", () => {
    for (let k = 0; k <= 32; k++) {
      const values = [1, -1, 2 ** k, -(2 ** k) + 3, 123456789];
      const d = decodeEntities(
        encodeEntities({ k: [k, k, k], updates: [{ id: 0, dx: 0, dy: 0, dz: 0 }, ...values.map((v, i) => ({ id: i + 1, dx: v, dy: -v, dz: v }))] }),
      );
      expect(d.updates.map((u) => [...u.dq])).toEqual([[0, 0, 0], ...values.map((v) => [v, -v, v])]);
    }
  });
});

describe("decodeEntities refuses malformed payloads", () => {
  it("every truncation of a valid payload", () => {
    const p = encodeEntities({
      despawns: [1, 2],
      spawns: [{ id: 5, q: [1, 2, 3], components: [[1, bytes(1, 2)]] }],
      updates: [{ id: 5, dx: 3, components: [[2, bytes(5)]] }, { id: 9, dy: -4 }],
    });
    decodeEntities(p);
    for (let n = 0; n < p.length; n++) {
      expect(() => decodeEntities(p.subarray(0, n)), `prefix ${n}`).toThrow(EntitiesDecodeError);
      expectMalformed(() => decodeEntities(p.subarray(0, n)), "truncated");
    }
  });

  it("trailing bytes after the payload", () => {
    const p = encodeEntities({ spawns: [{ id: 1, q: [0, 0, 0] }] });
    expectMalformed(() => decodeEntities(Uint8Array.from([...p, 0])), "trailing_bytes");
  });

  it("flags bits 2-7", () => {
    for (let bit = 2; bit < 8; bit++) {
      const p = new ByteWriter().u8(1 << bit).varint(0).varint(0).varint(0).done();
      expectMalformed(() => decodeEntities(p), "bad_flags");
      expectMalformed(() => new EntityReplica().apply(Uint8Array.from([p[0]! | 1, ...new ByteWriter().f64(1).done(), 0, 0, 0])), "bad_flags");
      const synced = new EntityReplica();
      synced.apply(baseline);
      expectMalformed(() => synced.apply(p), "bad_flags");
    }
  });

  it("ids at or above 2^53 (despawn, spawn, update; first id and via deltas)", () => {
    const tooBig = 2n ** 53n;
    expectMalformed(() => decodeEntities(encodeEntities({ despawns: [tooBig] })), "id_out_of_range");
    expectMalformed(
      () => decodeEntities(encodeEntities({ baseline: true, spawns: [{ id: tooBig, q: [0, 0, 0] }] })),
      "id_out_of_range",
    );
    expectMalformed(
      () =>
        decodeEntities(
          encodeEntities({ spawns: [{ id: 2n ** 53n - 2n, q: [0, 0, 0] }, { id: tooBig, q: [0, 0, 0] }] }),
        ),
      "id_out_of_range",
    );
    expectMalformed(() => decodeEntities(encodeEntities({ updates: [{ id: tooBig }] })), "id_out_of_range");
    expectMalformed(() => decodeEntities(encodeEntities({ despawns: [2n ** 64n - 1n] })), "id_out_of_range");
  });

  it("varints longer than 10 bytes or wider than 64 bits", () => {
    const eleven = new ByteWriter().u8(0).raw([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    expectMalformed(() => decodeEntities(eleven.varint(0).varint(0).done()), "bad_varint");
    const wide = new ByteWriter().u8(0).raw([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]);
    expectMalformed(() => decodeEntities(wide.varint(0).varint(0).done()), "bad_varint");
  });

  it("a count larger than the payload can hold", () => {
    const p = new ByteWriter().u8(0).varint(2n ** 60n).done();
    expectMalformed(() => decodeEntities(p), "truncated");
  });

  it("Exp-Golomb order above 32, and codes longer than 64 bits", () => {
    expectMalformed(() => decodeEntities(encodeEntities({ k: [33, 0, 0], updates: [{ id: 1, dx: 0 }] })), "bad_exp_golomb");
    // id code with 64 leading zeros: z + 0 + 1 = 65 > 64.
    const bits = new BitWriter().write(0, 64).bit(1).write(0, 64).bit(1).write(0, 0);
    const section = bits.done();
    const p = new ByteWriter().u8(0).varint(0).varint(0).varint(1).u8(0).u8(0).u8(0).varint(section.length).raw(section).done();
    expectMalformed(() => decodeEntities(p), "bad_exp_golomb");
    // order 32 with 32 zeros: z + k + 1 = 65.
    const b2 = new BitWriter().bit(1).bit(1).write(0, 32).bit(1).write(0, 32);
    const s2 = b2.done();
    const p2 = new ByteWriter().u8(0).varint(0).varint(0).varint(1).u8(32).u8(0).u8(0).varint(s2.length).raw(s2).done();
    expectMalformed(() => decodeEntities(p2), "bad_exp_golomb");
  });

  it("a bit section longer than its records (padding bits are not checked, as in the reference decoder)", () => {
    const section = new BitWriter().expGolomb(7, 0).bit(1).zigzagEG(1, 0).zigzagEG(1, 0).done();
    const make = (s: ArrayLike<number>) =>
      new ByteWriter().u8(0).varint(0).varint(0).varint(1).u8(0).u8(0).u8(0).varint(s.length).raw(s).done();
    expect(decodeEntities(make(section)).updates[0]!.dq).toEqual([1, 1, 0]);
    expectMalformed(() => decodeEntities(make([...section, 0])), "trailing_bytes");
    const dirty = Uint8Array.from(section);
    dirty[dirty.length - 1]! |= 1;
    expect(decodeEntities(make(dirty)).updates[0]!.dq).toEqual([1, 1, 0]);
    expectMalformed(() => decodeEntities(make(section.subarray(0, 1))), "truncated");
  });

  it("spawn component ids not strictly ascending", () => {
    for (const ids of [[2, 1], [3, 3]]) {
      const p = encodeEntities({
        baseline: true,
        spawns: [{ id: 1, q: [0, 0, 0], components: ids.map((c) => [c, bytes(c)] as [number, Uint8Array]) }],
      });
      expectMalformed(() => decodeEntities(p), "component_order");
    }
  });

  it("a spawn coordinate beyond +-2^52", () => {
    const ok = encodeEntities({ baseline: true, spawns: [{ id: 1, q: [2 ** 52, -(2 ** 52), 0] }] });
    expect(decodeEntities(ok).spawns[0]!.q).toEqual([2 ** 52, -(2 ** 52), 0]);
    for (const q of [2 ** 52 + 1, -(2 ** 52) - 1, 2 ** 60]) {
      const p = encodeEntities({ baseline: true, spawns: [{ id: 1, q: [0, q, 0] }] });
      expectMalformed(() => decodeEntities(p), "value_out_of_range");
    }
  });

  it("a BASELINE precision that is not finite and positive", () => {
    for (const precision of [0, -1, NaN, Infinity]) {
      const p = new ByteWriter().u8(1).f64(precision).varint(0).varint(0).varint(0).done();
      expectMalformed(() => decodeEntities(p), "bad_precision");
    }
  });
});

describe("EntityReplica", () => {
  it("a spawn of a held id that was not despawned replaces it (entered only, as in the reference decoder)", () => {
    const r = new EntityReplica();
    r.apply(baseline);
    const c = r.apply(encodeEntities({ spawns: [{ id: 10, q: [7, 7, 7] }] }));
    expect(c.entered).toEqual([10]);
    expect(c.left).toEqual([]);
    expect(state(r)[10]).toEqual({ q: [7, 7, 7], c: {} });
  });

  it("ignores payloads before the first BASELINE", () => {
    const r = new EntityReplica();
    const c = r.apply(encodeEntities({ spawns: [{ id: 1, q: [0, 0, 0] }] }));
    expect(c.ignored).toBe(true);
    expect(r.entities.size).toBe(0);
    expect(r.synced).toBe(false);
    // Even one naming unknown ids (it cannot be checked yet).
    expect(r.apply(encodeEntities({ despawns: [77] })).ignored).toBe(true);
    const b = r.apply(baseline);
    expect(b.ignored).toBe(false);
    expect(b.entered).toEqual([3, 10, 11]);
    expect(b.left).toEqual([]);
    expect(r.synced).toBe(true);
    expect(r.precision).toBe(0.01);
    expect(state(r)).toEqual({
      3: { q: [100, -200, 0], c: { 1: [7], 2: [0x61, 0x62] } },
      10: { q: [0, 0, 5], c: {} },
      11: { q: [-1, 1, -1], c: { 3: [] } },
    });
    expect(r.position(r.entities.get(3)!)).toEqual([1, -2, 0]);
  });

  it("applies despawns, spawns, then updates (differences and component set/remove)", () => {
    const r = new EntityReplica();
    r.apply(baseline);
    const before3 = r.entities.get(3)!;
    const c = r.apply(
      encodeEntities({
        yUp: true,
        despawns: [10],
        spawns: [{ id: 12, q: [5, 5, 5], components: [[1, bytes(1)]] }],
        updates: [
          { id: 3, dx: -100, dy: 50, components: [[1, null], [3, bytes(9, 9)]] },
          { id: 12, dz: 1 },
        ],
      }),
    );
    expect(c).toMatchObject({ ignored: false, baseline: false, left: [10], entered: [12], updated: [3, 12], kept: [] });
    expect(r.yUp).toBe(true);
    expect(state(r)).toEqual({
      3: { q: [0, -150, 0], c: { 2: [0x61, 0x62], 3: [9, 9] } },
      11: { q: [-1, 1, -1], c: { 3: [] } },
      12: { q: [5, 5, 6], c: { 1: [1] } },
    });
    // Entities are replaced, not mutated: old references stay intact.
    expect([...before3.q]).toEqual([100, -200, 0]);
    expect(before3.components.has(1)).toBe(true);
  });

  it("an id in both despawn and spawn lists was removed and reused", () => {
    const r = new EntityReplica();
    r.apply(baseline);
    const c = r.apply(encodeEntities({ despawns: [3], spawns: [{ id: 3, q: [0, 0, 0] }] }));
    expect(c.left).toEqual([3]);
    expect(c.entered).toEqual([3]);
    expect(state(r)[3]).toEqual({ q: [0, 0, 0], c: {} });
  });

  it("a BASELINE drops every held entity: those not listed again leave, those listed again are kept", () => {
    const r = new EntityReplica();
    r.apply(baseline);
    const c = r.apply(
      encodeEntities({ baseline: true, precision: 0.5, spawns: [{ id: 3, q: [1, 1, 1] }, { id: 20, q: [2, 2, 2] }] }),
    );
    expect(c).toMatchObject({ baseline: true, left: [10, 11], entered: [3, 20], kept: [3] });
    expect(r.precision).toBe(0.5);
    expect(state(r)).toEqual({ 3: { q: [1, 1, 1], c: {} }, 20: { q: [2, 2, 2], c: {} } });
  });

  it("after awaitBaseline it ignores payloads until the new connection's BASELINE, keeping what it holds", () => {
    const r = new EntityReplica();
    r.apply(baseline);
    r.awaitBaseline();
    expect(r.apply(encodeEntities({ updates: [{ id: 3, dx: 1 }] })).ignored).toBe(true);
    expect(r.entities.size).toBe(3);
    const c = r.apply(encodeEntities({ baseline: true, spawns: [{ id: 11, q: [0, 0, 0] }] }));
    expect(c.left).toEqual([3, 10]);
    expect(c.kept).toEqual([11]);
  });

  describe("refuses, atomically, payloads that do not fit the replica", () => {
    const cases: [string, Uint8Array, EntitiesErrorKind][] = [
      ["a despawn of an id not held", encodeEntities({ despawns: [4] }), "unknown_id"],
      ["an update of an id not held", encodeEntities({ updates: [{ id: 4, dx: 1 }] }), "unknown_id"],
      ["an update of an id despawned in the same payload", encodeEntities({ despawns: [3], updates: [{ id: 3, dx: 1 }] }), "unknown_id"],
      ["a despawn inside a BASELINE", encodeEntities({ baseline: true, despawns: [3] }), "unknown_id"],
      [
        "an update in a BASELINE of an id it does not spawn",
        encodeEntities({ baseline: true, spawns: [{ id: 10, q: [0, 0, 0] }], updates: [{ id: 3, dx: 1 }] }),
        "unknown_id",
      ],
      [
        "an update moving a coordinate beyond +-2^52",
        encodeEntities({ k: [0, 0, 0], updates: [{ id: 3, dx: 2 ** 52 - 99 }] }),
        "value_out_of_range",
      ],
      ["a truncated payload", encodeEntities({ despawns: [3, 10] }).subarray(0, 3), "truncated"],
    ];
    for (const [name, payload, kind] of cases) {
      it(name, () => {
        const r = new EntityReplica();
        r.apply(baseline);
        const before = state(r);
        expectMalformed(() => r.apply(payload), kind);
        expect(state(r)).toEqual(before);
        expect(r.synced).toBe(true);
      });
    }
  });

  it("a spawn list that repeats an id (only expressible by an id overflow) is refused", () => {
    // The ascending coding cannot repeat an id; a decoder given repeated ids directly still refuses.
    const r = new EntityReplica();
    expectMalformed(
      () =>
        r.applyDecoded({
          baseline: true,
          yUp: false,
          precision: 1,
          despawns: [],
          spawns: [
            { id: 1, q: [0, 0, 0], components: [] },
            { id: 1, q: [0, 0, 0], components: [] },
          ],
          updates: [],
        }),
      "repeated_id",
    );
    expect(r.synced).toBe(false);
  });

  it("copies component bytes out of the message buffer", () => {
    const p = encodeEntities({ baseline: true, spawns: [{ id: 1, q: [0, 0, 0], components: [[1, bytes(42)]] }] });
    const r = new EntityReplica();
    r.apply(p);
    p.fill(0);
    expect([...r.entities.get(1)!.components.get(1)!]).toEqual([42]);
  });
});
