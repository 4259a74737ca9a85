import { describe, expect, it } from "vitest";
import { ProtocolError } from "../../src/protocol.js";
import { RealmDocument } from "../../src/realm/document.js";
import { type JsonObject, type Op, PatchError } from "../../src/realm/patch.js";

const set = (path: (string | number)[], value: unknown): Op => ({ op: "set", path, value: value as never });
const del = (path: (string | number)[]): Op => ({ op: "delete", path });

function hydrated(state: JsonObject = { players: {} }, version = 10): RealmDocument {
  const d = new RealmDocument();
  d.hydrate(1, version, state);
  return d;
}

/** Adds a write and sends it (as the connection does) as `seq`. */
function sent(d: RealmDocument, writeId: number, ops: Op[], seq: number): void {
  d.add(writeId, ops);
  const w = d.nextUnsent()!;
  expect(w.writeId).toBe(writeId);
  d.markSent(w, seq);
}

describe("RealmDocument", () => {
  it("shows local writes at once and keeps the confirmed document apart", () => {
    const d = hydrated();
    const u = d.add(1, [set(["players", "ann"], { x: 1 })]);
    expect(u.changed).toBe(true);
    expect(d.view).toEqual({ players: { ann: { x: 1 } } });
    expect(d.confirmed).toEqual({ players: {} });
    expect(d.pending.map((p) => [p.writeId, p.seq])).toEqual([[1, undefined]]);
  });

  it("refuses a local write that does not apply to the view, changing nothing", () => {
    const d = hydrated();
    const before = d.view;
    expect(() => d.add(1, [del(["nope"])])).toThrow(PatchError);
    expect(d.view).toBe(before);
    expect(d.pendingCount).toBe(0);
  });

  it("ACK of the oldest pending write confirms it and leaves the view the same object", () => {
    const d = hydrated();
    sent(d, 1, [set(["players", "ann"], 1)], 1);
    sent(d, 2, [set(["players", "bob"], 2)], 2);
    const view = d.view;
    const u = d.ack(1, 11);
    expect(u.changed).toBe(false);
    expect(u.write.writeId).toBe(1);
    expect(d.view).toBe(view);
    expect(d.confirmed).toEqual({ players: { ann: 1 } });
    expect(d.version).toBe(11);
    expect(d.pendingCount).toBe(1);
  });

  it("rebases pending writes on another writer's commit", () => {
    const d = hydrated();
    sent(d, 1, [set(["players", "ann"], 1)], 1);
    d.add(2, [set(["players", "ann"], 5)]);
    const u = d.commit(11, [set(["players", "bob"], 7)]);
    expect(u.changed).toBe(true);
    expect(u.dropped).toEqual([]);
    expect(d.confirmed).toEqual({ players: { bob: 7 } });
    expect(d.view).toEqual({ players: { bob: 7, ann: 5 } });
  });

  it("drops pending writes that no longer apply: unsent ones go, sent ones wait for their REJECT", () => {
    const d = hydrated({ players: { ann: { hp: 3 } } });
    sent(d, 1, [set(["players", "ann", "hp"], 2)], 1);
    d.add(2, [set(["players", "ann", "hp"], 1)]);
    d.add(3, [set(["other"], true)]);
    const u = d.commit(11, [del(["players", "ann"])]);
    expect(u.dropped.map((w) => [w.writeId, w.seq])).toEqual([
      [1, 1],
      [2, undefined],
    ]);
    expect(u.dropped[0]!.reason).toMatch(/"players" has no key "ann"/);
    expect(d.view).toEqual({ players: {}, other: true });
    expect(d.pending.map((p) => [p.writeId, p.dropped])).toEqual([
      [1, true],
      [3, false],
    ]);
    // The server refuses seq 1 later: nothing changes in the view.
    const r = d.reject(1);
    expect(r.changed).toBe(false);
    expect(r.write.dropped).toBe(true);
    expect(d.pending.map((p) => p.writeId)).toEqual([3]);
    // A dropped write is not sent.
    expect(d.nextUnsent()!.writeId).toBe(3);
  });

  it("REJECT rolls the write back; writes after it are applied again without it", () => {
    const d = hydrated();
    sent(d, 1, [set(["players", "ann"], {})], 1);
    d.add(2, [set(["players", "ann", "x"], 1)]);
    const u = d.reject(1);
    expect(u.write.writeId).toBe(1);
    expect(u.dropped.map((w) => w.writeId)).toEqual([2]); // it needed the refused write
    expect(d.view).toEqual({ players: {} });
    expect(d.pendingCount).toBe(0);
  });

  it("COMMIT with a seq replaces the pending write by the server's (sliced) version", () => {
    const d = hydrated();
    sent(d, 1, [set(["players", "ann"], { pub: 1, secret: 2 })], 1);
    const u = d.commit(11, [set(["players", "ann"], { pub: 1 })], 1);
    expect(u.replaced?.writeId).toBe(1);
    expect(d.pendingCount).toBe(0);
    expect(d.confirmed).toEqual({ players: { ann: { pub: 1 } } });
    expect(d.view).toEqual(d.confirmed);
  });

  it("HYDRATE replaces the document and applies the pending writes again on top", () => {
    const d = hydrated({ players: {}, gone: {} });
    d.add(1, [set(["players", "ann"], 1)]);
    d.add(2, [set(["gone", "x"], 1)]);
    const u = d.hydrate(2, 50, { players: { bob: 1 } });
    expect(d.epoch).toBe(2);
    expect(d.version).toBe(50);
    expect(u.dropped.map((w) => w.writeId)).toEqual([2]);
    expect(d.view).toEqual({ players: { bob: 1, ann: 1 } });
  });

  it("queues writes made before the first hydrate and applies them to the hydrated document", () => {
    const d = new RealmDocument();
    expect(d.hydrated).toBe(false);
    expect(d.add(1, [set(["players", "ann"], 1)]).changed).toBe(false);
    d.add(2, [del(["missing"])]);
    expect(d.view).toEqual({});
    const u = d.hydrate(1, 3, { players: {} });
    expect(u.dropped.map((w) => w.writeId)).toEqual([2]);
    expect(d.view).toEqual({ players: { ann: 1 } });
  });

  it("on a dropped connection forgets sent writes, keeps unsent ones", () => {
    const d = hydrated();
    sent(d, 1, [set(["players", "ann"], 1)], 1);
    d.add(2, [set(["players", "bob"], 2)]);
    const u = d.dropSent();
    expect(u.forgotten.map((w) => [w.writeId, w.seq])).toEqual([[1, 1]]);
    expect(d.view).toEqual({ players: { bob: 2 } });
    expect(d.nextUnsent()!.writeId).toBe(2);
  });

  it("splits a write when it is sent: the rest stays unsent right after it, the view does not change", () => {
    const d = hydrated();
    d.add(1, [set(["a"], 1), set(["b"], 2), set(["c"], 3)]);
    d.add(2, [set(["d"], 4)]);
    const view = d.view;
    d.markSent(d.nextUnsent()!, 1, 2);
    expect(d.view).toBe(view);
    expect(d.pending.map((p) => [p.writeId, p.seq, p.ops.length])).toEqual([
      [1, 1, 2],
      [1, undefined, 1],
      [2, undefined, 1],
    ]);
    expect(d.nextUnsent()!.ops).toEqual([set(["c"], 3)]);
    expect(d.cancel(1).cancelled.map((c) => c.ops.length)).toEqual([1]);
    expect(d.view).toEqual({ players: {}, a: 1, b: 2, d: 4 });
  });

  it("unsend makes a sent write unsent again, in its place", () => {
    const d = hydrated();
    sent(d, 1, [set(["a"], 1)], 1);
    sent(d, 2, [set(["b"], 1)], 2);
    expect(d.unsend(1).removed).toBe(false);
    expect(d.nextUnsent()!.writeId).toBe(1);
    expect(d.pending.map((p) => p.writeId)).toEqual([1, 2]);
  });

  it("inserts a write in front of the unsent ones", () => {
    const d = hydrated();
    sent(d, 1, [set(["a"], 1)], 1);
    d.add(2, [set(["b"], 1)]);
    d.add(3, [set(["b"], 0)], true);
    expect(d.pending.map((p) => p.writeId)).toEqual([1, 3, 2]);
    expect(d.view).toEqual({ players: {}, a: 1, b: 1 });
  });

  it("refuses messages that do not fit what it holds, changing nothing", () => {
    const d = hydrated();
    sent(d, 1, [set(["a"], 1)], 1);
    expect(() => d.ack(2, 11)).toThrow(ProtocolError);
    expect(() => d.ack(1, 10)).toThrow(/does not follow version 10/);
    expect(() => d.commit(9, [])).toThrow(ProtocolError);
    expect(() => d.reject(5)).toThrow(ProtocolError);
    expect(() => d.resume(1, 9)).toThrow(/RESUME from epoch 1 version 9/);
    expect(() => d.resume(2, 10)).toThrow(ProtocolError);
    expect(() => d.resume(1, 10)).not.toThrow();
    expect(() => new RealmDocument().resume(0, 0)).toThrow(/holds no document/);
    expect(d.version).toBe(10);
  });

  it("throws a PatchError for a commit that does not apply to the confirmed document, changing nothing", () => {
    const d = hydrated();
    const confirmed = d.confirmed;
    expect(() => d.commit(11, [del(["nope"])])).toThrow(PatchError);
    expect(d.confirmed).toBe(confirmed);
    expect(d.version).toBe(10);
  });
});
