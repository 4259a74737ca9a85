/**
 * The binary patch form (`docs/realms.md` "Binary form"): MessagePack with
 * interned keys. Every object key and path key travels once as text (the
 * announce `[id, "text"]`) and afterwards as its integer id; ids are dense
 * from 0 in order of first use and kept in a {@link KeyTable}, one per
 * direction of a connection (the encoder interns, the decoder learns what
 * the peer announces).
 *
 * ```
 * patch   = array(op*)
 * op      = array(0, path, value) | array(1, path) | array(2, path, value)
 * path    = array(segment*)          ; key-ref, or negative int n: index -1 - n
 * key-ref = uint id | array(uint id, str text)
 * value   = nil | bool | int | float64 | str | array(value*) | map((key-ref value)*)
 * ```
 *
 * The encoder writes the shortest form of every integer and header, floats
 * as float64 and an object's entries in byte-wise UTF-8 key order, exactly
 * as the server does. The decoder takes untrusted bytes, refuses anything
 * malformed with a {@link PatchDecodeError} (never another exception) and
 * leaves its table unchanged then.
 *
 * @packageDocumentation
 */
import { arrayHeaderSize, compareBytes, ITEM_NAMES, type MsgItem, MsgReader, MsgReadError, MsgWriter, utf8 } from "./msgpack.js";
import { type JsonObject, type JsonValue, type Op, type Patch, type PathSegment, putKey } from "./patch.js";

const OPCODES = { set: 0, delete: 1, append: 2 } as const;
const OP_NAMES = ["set", "delete", "append"] as const;

/**
 * Interned keys of one direction of a connection: ids are dense from 0 in
 * order of first use. The encoder side {@link intern}s, the decoder side
 * {@link learn}s what the peer announced.
 */
export class KeyTable {
  private readonly keys: string[] = [];
  private readonly ids = new Map<string, number>();

  /** How many keys the table holds (the next id). */
  get size(): number {
    return this.keys.length;
  }

  /** The id of `key`, adding it if new; `added` says it was new. */
  intern(key: string): { id: number; added: boolean } {
    const known = this.ids.get(key);
    if (known !== undefined) return { id: known, added: false };
    const id = this.keys.length;
    this.keys.push(key);
    this.ids.set(key, id);
    return { id, added: true };
  }

  /** The key with id `id`, or `undefined`. */
  keyOf(id: number): string | undefined {
    return this.keys[id];
  }

  /** The id of `key` if the table has it (nothing is added). */
  idOf(key: string): number | undefined {
    return this.ids.get(key);
  }

  /**
   * Records a key the peer announced.
   * @throws Error when `id` is not the next id or `key` is known already
   */
  learn(id: number, key: string): void {
    if (id !== this.keys.length) throw new Error(`key id ${id} announced, expected ${this.keys.length}`);
    if (this.ids.has(key)) throw new Error(`key "${key.slice(0, 64)}" announced again`);
    this.keys.push(key);
    this.ids.set(key, id);
  }
}

// ---------------------------------------------------------------------------
// Encoder

/**
 * Writes ops on a table, staging the keys it announces: they reach the
 * table only on {@link commit}, and {@link rollback} forgets the bytes and
 * keys of everything after a mark.
 */
class PatchWriter {
  readonly out = new MsgWriter();
  private readonly staged: string[] = [];
  private readonly stagedIds = new Map<string, number>();

  constructor(private readonly table: KeyTable) {}

  mark(): { bytes: number; keys: number } {
    return { bytes: this.out.length, keys: this.staged.length };
  }

  rollback(m: { bytes: number; keys: number }): void {
    this.out.truncate(m.bytes);
    while (this.staged.length > m.keys) this.stagedIds.delete(this.staged.pop()!);
  }

  commit(): void {
    for (const key of this.staged) this.table.intern(key);
    this.staged.length = 0;
    this.stagedIds.clear();
  }

  private key(key: string, bytes?: Uint8Array): void {
    const known = this.table.idOf(key) ?? this.stagedIds.get(key);
    if (known !== undefined) {
      this.out.uint(known);
      return;
    }
    const id = this.table.size + this.staged.length;
    this.staged.push(key);
    this.stagedIds.set(key, id);
    this.out.array(2);
    this.out.uint(id);
    this.out.strBytes(bytes ?? utf8(key));
  }

  private segment(seg: PathSegment): void {
    if (typeof seg === "string") this.key(seg);
    else this.out.int(-1 - seg);
  }

  value(v: JsonValue): void {
    if (v === null) return this.out.nil();
    switch (typeof v) {
      case "boolean":
        return this.out.bool(v);
      case "number":
        if (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 64) return this.out.int(v === 0 ? 0 : v);
        return this.out.float64(v);
      case "string":
        return this.out.str(v);
      default:
        break;
    }
    if (Array.isArray(v)) {
      this.out.array(v.length);
      for (const e of v) this.value(e);
      return;
    }
    const entries = Object.keys(v).map((k) => ({ k, bytes: utf8(k) }));
    entries.sort((a, b) => compareBytes(a.bytes, b.bytes));
    this.out.map(entries.length);
    for (const { k, bytes } of entries) {
      this.key(k, bytes);
      this.value((v as JsonObject)[k]!);
    }
  }

  op(op: Op): void {
    const hasValue = op.op !== "delete";
    this.out.array(hasValue ? 3 : 2);
    this.out.uint(OPCODES[op.op]);
    this.out.array(op.path.length);
    for (const seg of op.path) this.segment(seg);
    if (hasValue) this.value(op.value);
  }
}

/**
 * Encodes a patch on `keys`, adding the keys it announces to the table.
 * The ops must be well formed (see `patchFromJson`).
 *
 * @returns the binary patch form
 */
export function encodePatch(patch: Patch, keys: KeyTable): Uint8Array {
  return encodeLeading(patch, keys, Infinity, Infinity).bytes;
}

/**
 * Encodes as many leading ops of `ops` as fit in `maxOps` ops and
 * `maxBytes` bytes, as one patch on `keys`, and adds only the keys of the
 * ops taken to the table (so what is left can be encoded next, on the same
 * table). `count` 0 means the first op alone is over `maxBytes` (or
 * `maxOps` is 0): nothing is encoded and the table is unchanged.
 */
export function encodeLeading(
  ops: Patch,
  keys: KeyTable,
  maxOps: number,
  maxBytes: number,
): { count: number; bytes: Uint8Array } {
  const w = new PatchWriter(keys);
  let count = 0;
  for (const op of ops) {
    if (count >= maxOps) break;
    const m = w.mark();
    w.op(op);
    if (arrayHeaderSize(count + 1) + w.out.length > maxBytes) {
      w.rollback(m);
      break;
    }
    count++;
  }
  if (count === 0 && ops.length > 0) return { count: 0, bytes: new Uint8Array(0) };
  w.commit();
  const body = w.out.take();
  const head = new MsgWriter();
  head.array(count);
  const out = new Uint8Array(head.length + body.length);
  out.set(head.take());
  out.set(body, head.length);
  return { count, bytes: out };
}

/**
 * What one op weighs against the server's ingress limits (`docs/realms.md`
 * "Ingress limits"): its longest key in UTF-8 bytes (path and value) and
 * the leaves of its value (scalars and empty containers), counted up to
 * `maxLeaves + 1`.
 */
export function measureOp(op: Op, maxLeaves: number): { longestKey: number; leaves: number } {
  let longestKey = 0;
  for (const s of op.path) if (typeof s === "string") longestKey = Math.max(longestKey, utf8(s).length);
  let leaves = 0;
  if (op.op !== "delete") {
    const stack: JsonValue[] = [op.value];
    while (stack.length > 0 && leaves <= maxLeaves) {
      const v = stack.pop()!;
      if (v === null || typeof v !== "object") {
        leaves++;
      } else if (Array.isArray(v)) {
        if (v.length === 0) leaves++;
        else for (const e of v) stack.push(e);
      } else {
        const keys = Object.keys(v);
        if (keys.length === 0) leaves++;
        for (const k of keys) {
          longestKey = Math.max(longestKey, utf8(k).length);
          stack.push(v[k]!);
        }
      }
    }
  }
  return { longestKey, leaves };
}

// ---------------------------------------------------------------------------
// Decoder

/**
 * Bounds a decoder checks as it reads (before it allocates what they
 * bound). The defaults suit a client reading its server: anything the
 * 16 MiB message limit allows, nested at most 512 deep. A server reading
 * clients passes its ingress limits (the realm defaults are 64 KiB, 64
 * ops, keys of 128 bytes, depth 32 and 256 leaves per op).
 */
export interface DecodeLimits {
  /** Encoded bytes of one patch (default 16 MiB). */
  maxBytes?: number;
  /** Ops in one patch (default: no limit beyond the bytes). */
  maxOps?: number;
  /** Bytes of one announced key (default: no limit beyond the bytes). */
  maxKeyLength?: number;
  /** An op's path segments plus the nesting of its value (default 512). */
  maxDepth?: number;
  /** Leaves of one op's value (default: no limit beyond the bytes). */
  maxExpandedLeaves?: number;
}

/**
 * Bytes that are not a valid binary patch. `message` names the op, the
 * part (`path` or `value`) and the byte offset, e.g.
 * `op 0 path (byte 5): unknown key id 7`; `limit` is set when a
 * {@link DecodeLimits} bound was broken (the server's `kResourceExhausted`).
 */
export class PatchDecodeError extends Error {
  /** The broken limit (`maxOps`, `maxDepth`, ...), when it was one. */
  readonly limit: keyof DecodeLimits | undefined;

  constructor(message: string, limit?: keyof DecodeLimits) {
    super(message);
    this.name = "PatchDecodeError";
    this.limit = limit;
  }
}

class Decoder {
  private readonly in: MsgReader;
  private ctx = "patch";
  readonly staged: string[] = [];
  private readonly stagedIds = new Map<string, number>();
  private readonly maxOps: number;
  private readonly maxKey: number;
  private readonly maxDepth: number;
  private readonly maxLeaves: number;

  constructor(
    bytes: Uint8Array,
    private readonly table: KeyTable,
    limits: DecodeLimits,
  ) {
    this.in = new MsgReader(bytes, false);
    this.maxOps = limits.maxOps ?? Infinity;
    this.maxKey = limits.maxKeyLength ?? Infinity;
    this.maxDepth = limits.maxDepth ?? 512;
    this.maxLeaves = limits.maxExpandedLeaves ?? Infinity;
  }

  private bad(what: string): never {
    throw new PatchDecodeError(`${this.ctx} (byte ${this.in.pos}): ${what}`);
  }

  private exhausted(what: string, limit: keyof DecodeLimits): never {
    throw new PatchDecodeError(`${this.ctx}: ${what}`, limit);
  }

  private read(): MsgItem {
    try {
      return this.in.next();
    } catch (e) {
      return this.bad((e as MsgReadError).message);
    }
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof MsgReadError) return this.bad(e.message);
      throw e;
    }
  }

  private expectArray(what: string): number {
    const item = this.read();
    if (item.kind !== "array") this.bad(`expected ${what}, got ${ITEM_NAMES[item.kind]}`);
    return item.count;
  }

  run(): Op[] {
    this.ctx = "patch";
    const n = this.expectArray("a list of ops");
    if (n > this.maxOps) this.exhausted(`${n} ops, over maxOps (${this.maxOps})`, "maxOps");
    this.guard(() => this.in.fits(n, 1));
    const ops: Op[] = [];
    for (let i = 0; i < n; i++) {
      this.ctx = `op ${i}`;
      ops.push(this.readOp());
    }
    if (!this.in.done) {
      this.ctx = "patch";
      this.bad(`${this.in.left} bytes after the last op`);
    }
    return ops;
  }

  private readOp(): Op {
    const fields = this.expectArray("an op [opcode, path, value?]");
    if (fields === 0) this.bad("empty op");
    const code = this.read();
    if (code.kind !== "uint" || code.value > 2) this.bad("expected an opcode (0 set, 1 delete, 2 append)");
    const name = OP_NAMES[code.value]!;
    const want = name === "delete" ? 2 : 3;
    if (fields !== want) this.bad(`${name} takes ${want} fields, got ${fields}`);
    const base = this.ctx;
    this.ctx = `${base} path`;
    const segments = this.expectArray("a path (list)");
    if (segments > this.maxDepth) {
      this.exhausted(`${segments} segments, over maxDepth (${this.maxDepth})`, "maxDepth");
    }
    this.guard(() => this.in.fits(segments, 1));
    const path: PathSegment[] = [];
    for (let s = 0; s < segments; s++) {
      const item = this.read();
      path.push(item.kind === "int" ? -1 - item.value : this.keyFrom(item));
    }
    if (name === "delete") return { op: "delete", path };
    this.ctx = `${base} value`;
    const leaves = { n: 0 };
    const value = this.readValue(segments, leaves);
    return { op: name, path, value };
  }

  /** A key reference: an id, or the announce [id, "text"] of the next id. */
  private keyFrom(item: MsgItem): string {
    if (item.kind === "uint") {
      const known = this.known(item.value, item.big);
      if (known === undefined) this.bad(`unknown key id ${item.value}`);
      return known;
    }
    if (item.kind !== "array" || item.count !== 2) {
      this.bad(`expected a key (id or [id, text]), got ${ITEM_NAMES[item.kind]}`);
    }
    const id = this.read();
    const next = this.table.size + this.staged.length;
    if (id.kind !== "uint" || id.big || id.value !== next) this.bad(`key announce: expected the next id ${next}`);
    const text = this.read();
    if (text.kind !== "str") this.bad("key announce: expected a string");
    if (text.count > this.maxKey) {
      this.exhausted(`key of ${text.count} bytes, over maxKeyLength (${this.maxKey})`, "maxKeyLength");
    }
    const key = this.guard(() => this.in.text(text.count));
    if (this.table.idOf(key) !== undefined || this.stagedIds.has(key)) {
      this.bad(`key "${key.slice(0, 64)}" announced again`);
    }
    this.stagedIds.set(key, next);
    this.staged.push(key);
    return key;
  }

  private known(id: number, big: boolean): string | undefined {
    if (big) return undefined;
    if (id < this.table.size) return this.table.keyOf(id);
    return this.staged[id - this.table.size];
  }

  private leaf(leaves: { n: number }): void {
    if (++leaves.n > this.maxLeaves) {
      this.exhausted(`over maxExpandedLeaves (${this.maxLeaves})`, "maxExpandedLeaves");
    }
  }

  /** `depth`: the nesting above this value (path segments and containers). */
  private readValue(depth: number, leaves: { n: number }): JsonValue {
    const item = this.read();
    const container = item.kind === "array" || item.kind === "map";
    if (!container || item.count === 0) this.leaf(leaves);
    if (container) {
      if (depth + 1 > this.maxDepth) this.exhausted(`nested deeper than maxDepth (${this.maxDepth})`, "maxDepth");
      if (leaves.n + item.count > this.maxLeaves) {
        this.exhausted(`${item.count} elements, over maxExpandedLeaves (${this.maxLeaves})`, "maxExpandedLeaves");
      }
    }
    switch (item.kind) {
      case "nil":
        return null;
      case "bool":
      case "uint":
      case "int":
        return item.value;
      case "float":
        if (!Number.isFinite(item.value)) this.bad("float is not finite");
        return item.value;
      case "str":
        return this.guard(() => this.in.text(item.count));
      case "array": {
        this.guard(() => this.in.fits(item.count, 1));
        const list: JsonValue[] = [];
        for (let k = 0; k < item.count; k++) list.push(this.readValue(depth + 1, leaves));
        return list;
      }
      case "map": {
        this.guard(() => this.in.fits(item.count, 2));
        const obj: JsonObject = {};
        for (let k = 0; k < item.count; k++) {
          const key = this.keyFrom(this.read());
          if (Object.prototype.hasOwnProperty.call(obj, key)) this.bad(`duplicate key "${key.slice(0, 64)}"`);
          putKey(obj, key, this.readValue(depth + 1, leaves));
        }
        return obj;
      }
      default:
        return this.bad(`unexpected ${ITEM_NAMES[item.kind]}`);
    }
  }
}

/**
 * Decodes a binary patch from untrusted bytes, learning the keys it
 * announces into `keys`, but only when the whole patch is valid: on an
 * error the table is exactly as before (the peer's encoder has interned
 * those keys though, so the two tables of that direction now disagree and
 * the connection cannot go on).
 *
 * Refused: truncated bytes, counts the bytes left cannot hold, bin, ext and
 * 0xc1, strings that are not valid UTF-8, non-finite floats, a map with a
 * key twice, an op with the wrong number of fields, an opcode other than
 * 0-2, an unknown key id, an announce that is not the next id or repeats a
 * key, bytes after the last op, and anything over `limits`. Float32 is
 * widened; integers are read by value whatever their width (above 2^53
 * they are rounded to the nearest double).
 *
 * @throws {@link PatchDecodeError} and nothing else
 */
export function decodePatch(bytes: Uint8Array, keys: KeyTable, limits: DecodeLimits = {}): Op[] {
  const maxBytes = limits.maxBytes ?? 16 * 1024 * 1024;
  if (bytes.length > maxBytes) {
    throw new PatchDecodeError(`patch: ${bytes.length} bytes, over maxBytes (${maxBytes})`, "maxBytes");
  }
  const decoder = new Decoder(bytes, keys, limits);
  let ops: Op[];
  try {
    ops = decoder.run();
  } catch (e) {
    if (e instanceof PatchDecodeError) throw e;
    // RangeError (call stack) or anything unforeseen: still a refusal.
    throw new PatchDecodeError(`patch: cannot be decoded: ${(e as Error)?.message ?? String(e)}`);
  }
  for (const key of decoder.staged) keys.learn(keys.size, key);
  return ops;
}
