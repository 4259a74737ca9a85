/**
 * A small MessagePack writer and a bounds-checked reader, for the realm
 * protocol and the binary patch form (`docs/realms.md` "Binary form"),
 * where the exact bytes matter: the writer always picks the shortest form
 * of an integer, string, array or map header and writes floats as float64;
 * the reader accepts any width, reads integers by value and never reads
 * past the end of its input. Internal to the realm client.
 *
 * @packageDocumentation
 */

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 bytes of a string (lone surrogates must have been refused before). */
export function utf8(s: string): Uint8Array {
  return textEncoder.encode(s);
}

/** Byte-wise comparison of two UTF-8 encodings (the order of the server's object keys). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}

const TWO_32 = 2 ** 32;

/** An append-only byte buffer with MessagePack writers. */
export class MsgWriter {
  private buf = new Uint8Array(64);
  private view = new DataView(this.buf.buffer);
  /** Bytes written so far. */
  length = 0;

  /** The bytes written (a copy). */
  take(): Uint8Array {
    return this.buf.slice(0, this.length);
  }

  /** Forgets everything written after `length` (a mark taken earlier). */
  truncate(length: number): void {
    this.length = length;
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  private be(v: number, width: 1 | 2 | 4): void {
    this.room(width);
    if (width === 1) this.view.setUint8(this.length, v);
    else if (width === 2) this.view.setUint16(this.length, v);
    else this.view.setUint32(this.length, v);
    this.length += width;
  }

  /** A non-negative integer (at most 2^64 - 1) in its shortest form. */
  uint(v: number): void {
    if (v < 0x80) this.byte(v);
    else if (v <= 0xff) {
      this.byte(0xcc);
      this.be(v, 1);
    } else if (v <= 0xffff) {
      this.byte(0xcd);
      this.be(v, 2);
    } else if (v <= 0xffffffff) {
      this.byte(0xce);
      this.be(v, 4);
    } else {
      this.byte(0xcf);
      const hi = Math.floor(v / TWO_32);
      this.be(hi, 4);
      this.be(v - hi * TWO_32, 4);
    }
  }

  /** An integer from -2^63 to 2^64 - 1 in its shortest form. */
  int(v: number): void {
    if (v >= 0) return this.uint(v);
    if (v >= -32) this.byte(v & 0xff);
    else if (v >= -0x80) {
      this.byte(0xd0);
      this.be(v & 0xff, 1);
    } else if (v >= -0x8000) {
      this.byte(0xd1);
      this.be(v & 0xffff, 2);
    } else if (v >= -0x80000000) {
      this.byte(0xd2);
      this.be(v >>> 0, 4);
    } else {
      this.byte(0xd3);
      this.room(8);
      this.view.setBigInt64(this.length, BigInt(v));
      this.length += 8;
    }
  }

  /** A float64 (0xcb). */
  float64(v: number): void {
    this.byte(0xcb);
    this.room(8);
    this.view.setFloat64(this.length, v);
    this.length += 8;
  }

  nil(): void {
    this.byte(0xc0);
  }

  bool(v: boolean): void {
    this.byte(v ? 0xc3 : 0xc2);
  }

  /** A string given as its UTF-8 bytes. */
  strBytes(bytes: Uint8Array): void {
    const n = bytes.length;
    if (n < 32) this.byte(0xa0 | n);
    else if (n <= 0xff) {
      this.byte(0xd9);
      this.be(n, 1);
    } else if (n <= 0xffff) {
      this.byte(0xda);
      this.be(n, 2);
    } else {
      this.byte(0xdb);
      this.be(n, 4);
    }
    this.raw(bytes);
  }

  str(s: string): void {
    this.strBytes(utf8(s));
  }

  /** Binary bytes (bin 8/16/32; used by messages, never inside a patch). */
  bin(bytes: Uint8Array): void {
    const n = bytes.length;
    if (n <= 0xff) {
      this.byte(0xc4);
      this.be(n, 1);
    } else if (n <= 0xffff) {
      this.byte(0xc5);
      this.be(n, 2);
    } else {
      this.byte(0xc6);
      this.be(n, 4);
    }
    this.raw(bytes);
  }

  array(n: number): void {
    this.header(n, 0x90, 0xdc, 0xdd);
  }

  map(n: number): void {
    this.header(n, 0x80, 0xde, 0xdf);
  }

  private header(n: number, fix: number, b16: number, b32: number): void {
    if (n < 16) this.byte(fix | n);
    else if (n <= 0xffff) {
      this.byte(b16);
      this.be(n, 2);
    } else {
      this.byte(b32);
      this.be(n, 4);
    }
  }
}

/** Bytes of the shortest array header for `n` elements. */
export function arrayHeaderSize(n: number): number {
  return n < 16 ? 1 : n <= 0xffff ? 3 : 5;
}

/** What one MessagePack item is. Containers and strings carry their count, not their content. */
export type MsgItem =
  | { kind: "nil" }
  | { kind: "bool"; value: boolean }
  | { kind: "uint"; value: number; big: boolean } // big: above 2^53 (value rounded)
  | { kind: "int"; value: number } // negative
  | { kind: "float"; value: number }
  | { kind: "str"; count: number }
  | { kind: "bin"; count: number }
  | { kind: "array"; count: number }
  | { kind: "map"; count: number };

/** Names of item kinds for messages. */
export const ITEM_NAMES: Record<MsgItem["kind"], string> = {
  nil: "nil",
  bool: "bool",
  uint: "unsigned integer",
  int: "negative integer",
  float: "float",
  str: "string",
  bin: "binary",
  array: "array",
  map: "map",
};

/** A reader failure: `message` says what, `offset` where. */
export class MsgReadError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = "MsgReadError";
  }
}

/**
 * Reads MessagePack items one at a time from untrusted bytes. Every read is
 * bounds-checked; a fault throws {@link MsgReadError}. `allowBin` says
 * whether bin (0xc4-0xc6) is accepted (not inside patches). Ext and 0xc1
 * are always refused.
 */
export class MsgReader {
  private readonly view: DataView;
  pos = 0;

  constructor(
    readonly bytes: Uint8Array,
    private readonly allowBin: boolean,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get left(): number {
    return this.bytes.length - this.pos;
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  fail(why: string): never {
    throw new MsgReadError(why, this.pos);
  }

  private need(n: number): void {
    if (this.left < n) this.fail(`truncated: ${n} bytes needed, ${this.left} left`);
  }

  private be(width: 1 | 2 | 4): number {
    this.need(width);
    const at = this.pos;
    this.pos += width;
    return width === 1 ? this.view.getUint8(at) : width === 2 ? this.view.getUint16(at) : this.view.getUint32(at);
  }

  /** The next item's header. */
  next(): MsgItem {
    if (this.done) this.fail("truncated: the bytes end where an item was expected");
    const b = this.bytes[this.pos++]!;
    if (b <= 0x7f) return { kind: "uint", value: b, big: false };
    if (b >= 0xe0) return { kind: "int", value: b - 0x100 };
    if ((b & 0xf0) === 0x80) return { kind: "map", count: b & 0x0f };
    if ((b & 0xf0) === 0x90) return { kind: "array", count: b & 0x0f };
    if ((b & 0xe0) === 0xa0) return { kind: "str", count: b & 0x1f };
    switch (b) {
      case 0xc0:
        return { kind: "nil" };
      case 0xc2:
      case 0xc3:
        return { kind: "bool", value: b === 0xc3 };
      case 0xc4:
      case 0xc5:
      case 0xc6:
        if (!this.allowBin) break;
        return { kind: "bin", count: this.be(b === 0xc4 ? 1 : b === 0xc5 ? 2 : 4) };
      case 0xca: {
        this.need(4);
        const f = this.view.getFloat32(this.pos);
        this.pos += 4;
        return { kind: "float", value: f };
      }
      case 0xcb: {
        this.need(8);
        const f = this.view.getFloat64(this.pos);
        this.pos += 8;
        return { kind: "float", value: f };
      }
      case 0xcc:
        return { kind: "uint", value: this.be(1), big: false };
      case 0xcd:
        return { kind: "uint", value: this.be(2), big: false };
      case 0xce:
        return { kind: "uint", value: this.be(4), big: false };
      case 0xcf: {
        this.need(8);
        const v = this.view.getBigUint64(this.pos);
        this.pos += 8;
        return { kind: "uint", value: Number(v), big: v > 2n ** 53n };
      }
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3: {
        const width = b === 0xd0 ? 1 : b === 0xd1 ? 2 : b === 0xd2 ? 4 : 8;
        this.need(width);
        const at = this.pos;
        this.pos += width;
        if (width === 8) {
          const v = this.view.getBigInt64(at);
          return v >= 0n ? { kind: "uint", value: Number(v), big: v > 2n ** 53n } : { kind: "int", value: Number(v) };
        }
        const v =
          width === 1 ? this.view.getInt8(at) : width === 2 ? this.view.getInt16(at) : this.view.getInt32(at);
        return v >= 0 ? { kind: "uint", value: v, big: false } : { kind: "int", value: v };
      }
      case 0xd9:
        return { kind: "str", count: this.be(1) };
      case 0xda:
        return { kind: "str", count: this.be(2) };
      case 0xdb:
        return { kind: "str", count: this.be(4) };
      case 0xdc:
        return { kind: "array", count: this.be(2) };
      case 0xdd:
        return { kind: "array", count: this.be(4) };
      case 0xde:
        return { kind: "map", count: this.be(2) };
      case 0xdf:
        return { kind: "map", count: this.be(4) };
      default:
        break;
    }
    this.pos--;
    const hex = b.toString(16).padStart(2, "0");
    return this.fail(
      this.allowBin
        ? `unsupported MessagePack type 0x${hex} (ext and 0xc1 are not used)`
        : `unsupported MessagePack type 0x${hex} (bin, ext and 0xc1 are not used)`,
    );
  }

  /** The `n` payload bytes of a str or bin item (a view into the input). */
  payload(n: number): Uint8Array {
    if (this.left < n) this.fail(`truncated: ${n} bytes of payload, ${this.left} left`);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** The text of a str item of `n` bytes; refuses invalid UTF-8. */
  text(n: number): string {
    const bytes = this.payload(n);
    try {
      return textDecoder.decode(bytes);
    } catch {
      this.pos -= n;
      return this.fail("string is not valid UTF-8");
    }
  }

  /** `n` items of at least `minBytes` each must fit in what is left. */
  fits(n: number, minBytes: number): void {
    if (n > this.left / minBytes) this.fail(`${n} items announced, ${this.left} bytes left`);
  }

  /** Skips the content of an item whose header was read, then `more` whole values. */
  skipContent(item: MsgItem, more = 0): void {
    if (item.kind === "str" || item.kind === "bin") this.payload(item.count);
    let pending = more;
    if (item.kind === "array") {
      this.fits(item.count, 1);
      pending += item.count;
    } else if (item.kind === "map") {
      this.fits(item.count, 2);
      pending += 2 * item.count;
    }
    this.skip(pending);
  }

  /** Skips `n` whole values (any nesting, without recursion). */
  skip(n: number): void {
    let pending = n;
    while (pending > 0) {
      pending--;
      const item = this.next();
      switch (item.kind) {
        case "str":
        case "bin":
          this.payload(item.count);
          break;
        case "array":
          this.fits(item.count, 1);
          pending += item.count;
          break;
        case "map":
          this.fits(item.count, 2);
          pending += 2 * item.count;
          break;
        default:
          break;
      }
    }
  }
}
