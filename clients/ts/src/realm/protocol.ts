/**
 * The realm protocol `tessera.realm.v1` (`docs/protocol.md` "Realms"): each
 * message is one MessagePack array in a binary WebSocket message whose first
 * element is the type. Patches travel inside as `bin` holding the binary
 * patch form (see `codec.ts`), undecoded here: decoding them needs the
 * connection's key table. Every element's type is checked; unknown trailing
 * elements are ignored; missing ones are an error.
 *
 * ```
 * client -> server                          server -> client
 * HELLO [1, 1, ticket, epoch, version, flags?]  HYDRATE [16, epoch, version, avatar, limits, state]
 * WRITE [2, seq, patch]                     RESUME  [17, epoch, from, head, avatar, limits]
 * PING  [3, nonce]                          COMMIT  [18, version, patch, seq?]
 * PONG  [4, nonce]                          ACK     [19, seq, version]
 *                                           REJECT  [20, seq, code, message]
 *                                           COMMITS [21, [[version, patch | nil, seq?], ...]]
 *                                           PING [3, nonce], PONG [4, nonce]
 * ```
 *
 * @packageDocumentation
 */
import { ProtocolError } from "../protocol.js";
import { ITEM_NAMES, type MsgItem, MsgReader, MsgReadError, MsgWriter } from "./msgpack.js";

/** The realm protocol version this client speaks (HELLO's `protocol`). */
export const REALM_PROTOCOL_VERSION = 1;

/** The WebSocket subprotocol of realms. */
export const REALM_SUBPROTOCOL = "tessera.realm.v1";

/** Largest seq, epoch and version (2^53, exact in a double). */
export const REALM_MAX_INTEGER = 2 ** 53;

/** Realm message type numbers (the first array element). */
export const RealmMessageType = {
  Hello: 1,
  Write: 2,
  Ping: 3,
  Pong: 4,
  Intent: 5,
  Hydrate: 16,
  Resume: 17,
  Commit: 18,
  Ack: 19,
  Reject: 20,
  Commits: 21,
} as const;

/**
 * HELLO `flags` bit: the client reads COMMITS, so the server sends each
 * group commit's COMMITs and ACKs to it as one COMMITS message.
 */
export const REALM_HELLO_COMMITS = 1;

/**
 * A realm kind's client limits, as HYDRATE and RESUME advertise them
 * (`docs/realms.md` "Ingress limits"). The client splits and paces its
 * writes to stay within them.
 */
export interface RealmLimits {
  /** Ops in one WRITE (default 64). */
  maxPatchesPerFrame: number;
  /** Encoded bytes of one WRITE's patch (default 65536). */
  maxFrameBytes: number;
  /** Bytes of any object key, in a path or a value (default 128). */
  maxRecordKeyLength: number;
  /** Leaves (scalars and empty containers) of one op's value (default 256). */
  maxExpandedLeaves: number;
  /** Refill of the connection's token bucket, WRITEs per second (default 100). */
  writeRatePerSecond: number;
  /** Size of the bucket; it starts full (default 200). */
  writeRateBurst: number;
}

/** The realm defaults, used for a limit the server does not advertise. */
export const DEFAULT_REALM_LIMITS: Readonly<RealmLimits> = Object.freeze({
  maxPatchesPerFrame: 64,
  maxFrameBytes: 65536,
  maxRecordKeyLength: 128,
  maxExpandedLeaves: 256,
  writeRatePerSecond: 100,
  writeRateBurst: 200,
});

const LIMIT_KEYS = Object.keys(DEFAULT_REALM_LIMITS) as (keyof RealmLimits)[];

/** HELLO `[1, protocol, ticket, epoch, version]`: first; says what the client holds (0, 0: nothing). */
export interface RealmHelloMessage {
  type: typeof RealmMessageType.Hello;
  /** 1. */
  protocol: number;
  /** A realm ticket for this `<kind>/<key>`. */
  ticket: string;
  epoch: number;
  version: number;
  /** `REALM_HELLO_*` bits (absent or 0: none; left out of the bytes when 0). */
  flags?: number;
}

/** WRITE `[2, seq, patch]`: a write, named by `seq` in its answer. */
export interface RealmWriteMessage {
  type: typeof RealmMessageType.Write;
  seq: number;
  /** The binary patch form, on the connection's outgoing key table. */
  patch: Uint8Array;
}

/** PING `[3, nonce]`, from either side. */
export interface RealmPingMessage {
  type: typeof RealmMessageType.Ping;
  nonce: number;
}

/** PONG `[4, nonce]`: the answer to a PING. */
export interface RealmPongMessage {
  type: typeof RealmMessageType.Pong;
  nonce: number;
}

/** INTENT `[5, seq, name, args]`: asks the realm's module to act; `args` is JSON text. */
export interface RealmIntentMessage {
  type: typeof RealmMessageType.Intent;
  seq: number;
  /** 1 to 64 bytes. */
  name: string;
  /** JSON text. */
  args: string;
}

/** HYDRATE `[16, epoch, version, avatar, limits, state]`: drop what you hold; the document is `state`. */
export interface HydrateMessage {
  type: typeof RealmMessageType.Hydrate;
  epoch: number;
  version: number;
  /** The ticket's subscriber: the identity write rules and presence count. */
  avatar: string;
  limits: RealmLimits;
  /** A patch of one op, `set []` to the document as this avatar may read it (binary form). */
  state: Uint8Array;
}

/** RESUME `[17, epoch, from, head, avatar, limits]`: keep what you hold at `from`; COMMITs up to `head` follow. */
export interface ResumeMessage {
  type: typeof RealmMessageType.Resume;
  epoch: number;
  from: number;
  head: number;
  avatar: string;
  limits: RealmLimits;
}

/**
 * COMMIT `[18, version, patch, seq?]`: commit `version` as this avatar may
 * read it. With `seq`, it is the client's own WRITE `seq`, changed by
 * slicing: it replaces the pending copy.
 */
export interface CommitMessage {
  type: typeof RealmMessageType.Commit;
  version: number;
  /** Binary patch form, on the connection's incoming key table. */
  patch: Uint8Array;
  seq?: number;
}

/**
 * One entry of COMMITS: with `patch`, what a COMMIT `[18, version, patch,
 * seq?]` says; without, what an ACK `[19, seq, version]` says.
 */
export interface CommitsEntry {
  version: number;
  patch?: Uint8Array;
  seq?: number;
}

/**
 * COMMITS `[21, entries]`: the COMMITs and ACKs of one group commit for a
 * client whose HELLO set {@link REALM_HELLO_COMMITS}, in version order;
 * each entry `[version, patch, seq?]` (a COMMIT) or `[version, nil, seq]`
 * (an ACK).
 */
export interface CommitsMessage {
  type: typeof RealmMessageType.Commits;
  /** At least one; versions increasing. */
  entries: CommitsEntry[];
}

/** ACK `[19, seq, version]`: WRITE `seq` is durable as commit `version`, exactly as sent. */
export interface RealmAckMessage {
  type: typeof RealmMessageType.Ack;
  seq: number;
  version: number;
}

/**
 * REJECT `[20, seq, code, message]`: WRITE `seq` was refused; nothing of it
 * applied. `code` is `limits_exceeded`, `permission_denied` or
 * `invalid_patch` (other codes are passed through).
 */
export interface RealmRejectMessage {
  type: typeof RealmMessageType.Reject;
  seq: number;
  code: string;
  message: string;
}

/** A message a realm client sends. */
export type RealmClientMessage =
  | RealmHelloMessage
  | RealmWriteMessage
  | RealmPingMessage
  | RealmPongMessage
  | RealmIntentMessage;
/** A message a realm server sends. */
export type RealmServerMessage =
  | HydrateMessage
  | ResumeMessage
  | CommitMessage
  | CommitsMessage
  | RealmAckMessage
  | RealmRejectMessage
  | RealmPingMessage
  | RealmPongMessage;

function fail(what: string): never {
  throw new ProtocolError(what);
}

function checkInteger(v: unknown, name: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > REALM_MAX_INTEGER) {
    fail(`${name} must be an integer in 0..2^53`);
  }
  return v;
}

function checkString(v: unknown, name: string): string {
  if (typeof v !== "string") fail(`${name} must be a string`);
  return v;
}

function checkBytes(v: unknown, name: string): Uint8Array {
  if (!(v instanceof Uint8Array)) fail(`${name} must be binary`);
  return v;
}

/** Checks a limits object: every advertised limit an integer >= 1. Missing ones get the defaults. */
function checkLimits(v: unknown): RealmLimits {
  const out: RealmLimits = { ...DEFAULT_REALM_LIMITS };
  if (v === null || typeof v !== "object" || v instanceof Nested || v instanceof Uint8Array) {
    fail("limits must be a map of string keys");
  }
  for (const key of LIMIT_KEYS) {
    const n = (v as Record<string, unknown>)[key];
    if (n === undefined) continue;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1) fail(`limits.${key} must be an integer >= 1`);
    out[key] = n;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Encoding

function encode(build: (w: MsgWriter) => void): Uint8Array {
  const w = new MsgWriter();
  build(w);
  return w.take();
}

/** Encodes a realm client message. @throws {@link ProtocolError} for an element out of range */
export function encodeRealmClientMessage(msg: RealmClientMessage): Uint8Array {
  switch (msg.type) {
    case RealmMessageType.Hello: {
      const protocol = checkInteger(msg.protocol, "protocol");
      const ticket = checkString(msg.ticket, "ticket");
      const epoch = checkInteger(msg.epoch, "epoch");
      const version = checkInteger(msg.version, "version");
      const flags = checkInteger(msg.flags ?? 0, "flags");
      return encode((w) => {
        w.array(flags === 0 ? 5 : 6);
        w.uint(msg.type);
        w.uint(protocol);
        w.str(ticket);
        w.uint(epoch);
        w.uint(version);
        if (flags !== 0) w.uint(flags);
      });
    }
    case RealmMessageType.Write: {
      const seq = checkInteger(msg.seq, "seq");
      const patch = checkBytes(msg.patch, "patch");
      return encode((w) => {
        w.array(3);
        w.uint(msg.type);
        w.uint(seq);
        w.bin(patch);
      });
    }
    case RealmMessageType.Ping:
    case RealmMessageType.Pong:
      return encodeNonce(msg.type, msg.nonce);
    case RealmMessageType.Intent: {
      const seq = checkInteger(msg.seq, "seq");
      const name = checkString(msg.name, "name");
      if (name.length === 0 || new TextEncoder().encode(name).length > 64) fail("INTENT name must be 1 to 64 bytes");
      const args = checkString(msg.args, "args");
      return encode((w) => {
        w.array(4);
        w.uint(msg.type);
        w.uint(seq);
        w.str(name);
        w.str(args);
      });
    }
    default:
      return fail(`unknown realm client message type ${(msg as { type: unknown }).type}`);
  }
}

function encodeNonce(type: number, nonce: number): Uint8Array {
  const n = checkInteger(nonce, "nonce");
  return encode((w) => {
    w.array(2);
    w.uint(type);
    w.uint(n);
  });
}

function writeLimits(w: MsgWriter, limits: RealmLimits): void {
  const l = checkLimits(limits);
  w.map(LIMIT_KEYS.length);
  for (const key of LIMIT_KEYS) {
    w.str(key);
    w.uint(l[key]);
  }
}

/** Encodes a realm server message (for test servers and tools). @throws {@link ProtocolError} */
export function encodeRealmServerMessage(msg: RealmServerMessage): Uint8Array {
  switch (msg.type) {
    case RealmMessageType.Hydrate: {
      const [epoch, version] = [checkInteger(msg.epoch, "epoch"), checkInteger(msg.version, "version")];
      const avatar = checkString(msg.avatar, "avatar");
      const state = checkBytes(msg.state, "state");
      return encode((w) => {
        w.array(6);
        w.uint(msg.type);
        w.uint(epoch);
        w.uint(version);
        w.str(avatar);
        writeLimits(w, msg.limits);
        w.bin(state);
      });
    }
    case RealmMessageType.Resume: {
      const nums = [checkInteger(msg.epoch, "epoch"), checkInteger(msg.from, "from"), checkInteger(msg.head, "head")];
      const avatar = checkString(msg.avatar, "avatar");
      return encode((w) => {
        w.array(6);
        w.uint(msg.type);
        for (const n of nums) w.uint(n);
        w.str(avatar);
        writeLimits(w, msg.limits);
      });
    }
    case RealmMessageType.Commit: {
      const version = checkInteger(msg.version, "version");
      const patch = checkBytes(msg.patch, "patch");
      const seq = msg.seq === undefined ? undefined : checkInteger(msg.seq, "seq");
      return encode((w) => {
        w.array(seq === undefined ? 3 : 4);
        w.uint(msg.type);
        w.uint(version);
        w.bin(patch);
        if (seq !== undefined) w.uint(seq);
      });
    }
    case RealmMessageType.Commits: {
      const entries = checkEntries(
        msg.entries.map((e) => ({
          version: checkInteger(e.version, "version"),
          ...(e.patch === undefined ? {} : { patch: checkBytes(e.patch, "patch") }),
          ...(e.seq === undefined ? {} : { seq: checkInteger(e.seq, "seq") }),
        })),
      );
      return encode((w) => {
        w.array(2);
        w.uint(msg.type);
        w.array(entries.length);
        for (const e of entries) {
          w.array(e.seq === undefined ? 2 : 3);
          w.uint(e.version);
          if (e.patch === undefined) w.nil();
          else w.bin(e.patch);
          if (e.seq !== undefined) w.uint(e.seq);
        }
      });
    }
    case RealmMessageType.Ack: {
      const [seq, version] = [checkInteger(msg.seq, "seq"), checkInteger(msg.version, "version")];
      return encode((w) => {
        w.array(3);
        w.uint(msg.type);
        w.uint(seq);
        w.uint(version);
      });
    }
    case RealmMessageType.Reject: {
      const seq = checkInteger(msg.seq, "seq");
      const [code, message] = [checkString(msg.code, "code"), checkString(msg.message, "message")];
      return encode((w) => {
        w.array(4);
        w.uint(msg.type);
        w.uint(seq);
        w.str(code);
        w.str(message);
      });
    }
    case RealmMessageType.Ping:
    case RealmMessageType.Pong:
      return encodeNonce(msg.type, msg.nonce);
    default:
      return fail(`unknown realm server message type ${(msg as { type: unknown }).type}`);
  }
}

// ---------------------------------------------------------------------------
// Decoding

/** An element that is a container the decoder does not look into. */
class Nested {
  constructor(readonly kind: string) {}
}

/** A scalar, bin, a map of string keys (for `limits`), COMMITS' entries, or a {@link Nested} marker. */
type Element = null | boolean | number | string | Uint8Array | Record<string, unknown> | Nested | CommitsEntry[];

/** COMMITS' entries are at least one, versions increasing, an ACK entry (no patch) with a seq. */
function checkEntries(entries: CommitsEntry[]): CommitsEntry[] {
  if (entries.length === 0) fail("COMMITS entries must not be empty");
  let last = -1;
  for (const e of entries) {
    if (e.version <= last) fail("COMMITS entry versions must increase");
    if (e.patch === undefined && e.seq === undefined) fail("COMMITS entry without a patch needs a seq");
    last = e.version;
  }
  return entries;
}

/**
 * Reads COMMITS' entries: an array of `[version, patch | nil, seq?]`
 * (trailing elements of an entry skipped), checked whole.
 */
function readEntries(r: MsgReader): CommitsEntry[] {
  const head = r.next();
  if (head.kind !== "array") fail(`COMMITS entries must be an array, got ${ITEM_NAMES[head.kind]}`);
  r.fits(head.count, 1);
  const out: CommitsEntry[] = [];
  for (let i = 0; i < head.count; i++) {
    const entry = r.next();
    if (entry.kind !== "array") fail(`COMMITS entry must be an array, got ${ITEM_NAMES[entry.kind]}`);
    if (entry.count < 2) fail(`COMMITS entry needs 2 elements, got ${entry.count}`);
    const version = checkInteger(readElement(r, false), "COMMITS entry version");
    const patch = readElement(r, false);
    if (patch !== null && !(patch instanceof Uint8Array)) fail("COMMITS entry patch must be binary or nil");
    const e: CommitsEntry = patch === null ? { version } : { version, patch };
    if (entry.count > 2) e.seq = checkInteger(readElement(r, false), "COMMITS entry seq");
    if (entry.count > 3) r.skip(entry.count - 3);
    out.push(e);
  }
  return checkEntries(out);
}

/**
 * Reads one element: scalars and bin as values; at the top level a map of
 * string keys as an object (its values one level deep); any other
 * container is skipped whole and stands as a {@link Nested} marker.
 */
function readElement(r: MsgReader, top: boolean): Element {
  const item: MsgItem = r.next();
  switch (item.kind) {
    case "nil":
      return null;
    case "bool":
    case "int":
    case "float":
      return item.value;
    case "uint":
      return item.big ? Infinity : item.value; // beyond 2^53: out of every range
    case "str":
      return r.text(item.count);
    case "bin":
      return r.payload(item.count).slice();
    case "array":
      r.skipContent(item);
      return new Nested("array");
    case "map": {
      if (!top) {
        r.skipContent(item);
        return new Nested("map");
      }
      r.fits(item.count, 2);
      const out: Record<string, unknown> = {};
      for (let i = 0; i < item.count; i++) {
        const k = r.next();
        if (k.kind !== "str") {
          r.skipContent(k, 1 + 2 * (item.count - i - 1));
          return new Nested("map with a key that is not a string");
        }
        const key = r.text(k.count);
        const v = readElement(r, false);
        Object.defineProperty(out, key, { value: v, enumerable: true, configurable: true, writable: true });
      }
      return out;
    }
  }
}

function toBytes(data: Uint8Array | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return fail("message must be binary");
}

/**
 * Reads the message array: its type and the first `max` elements (the
 * rest is skipped), then checks nothing follows the array.
 */
function readMessage(data: Uint8Array | ArrayBuffer | ArrayBufferView, max: number): { type: number; a: Element[] } {
  const r = new MsgReader(toBytes(data), true);
  try {
    const head = r.next();
    if (head.kind !== "array") fail(`message must be an array, got ${ITEM_NAMES[head.kind]}`);
    if (head.count === 0) fail("message is an empty array");
    r.fits(head.count, 1);
    const a: Element[] = [];
    for (let i = 0; i < head.count && i <= max; i++) {
      a.push(i === 1 && a[0] === RealmMessageType.Commits ? readEntries(r) : readElement(r, true));
    }
    if (head.count > max + 1) r.skip(head.count - max - 1);
    if (!r.done) fail(`${r.left} bytes after the message`);
    const type = a[0];
    if (typeof type !== "number" || !Number.isInteger(type) || type < 0) fail("message type must be an unsigned integer");
    return { type, a };
  } catch (e) {
    if (e instanceof MsgReadError) fail(`not valid MessagePack: ${e.message} (byte ${e.offset})`);
    throw e;
  }
}

function need(a: Element[], n: number, name: string): void {
  if (a.length < n) fail(`${name} needs ${n - 1} elements, got ${a.length - 1}`);
}

/**
 * Decodes one realm message from the server. Unknown trailing elements are
 * ignored; a missing `seq` in COMMIT (or `nil`) means another writer's commit.
 * @throws {@link ProtocolError} when the bytes are not a valid server message
 */
export function decodeRealmServerMessage(data: Uint8Array | ArrayBuffer | ArrayBufferView): RealmServerMessage {
  const { type, a } = readMessage(data, 6);
  switch (type) {
    case RealmMessageType.Hydrate:
      need(a, 6, "HYDRATE");
      return {
        type,
        epoch: checkInteger(a[1], "HYDRATE epoch"),
        version: checkInteger(a[2], "HYDRATE version"),
        avatar: checkString(a[3], "HYDRATE avatar"),
        limits: checkLimits(a[4]),
        state: checkBytes(a[5], "HYDRATE state"),
      };
    case RealmMessageType.Resume: {
      need(a, 6, "RESUME");
      const msg: ResumeMessage = {
        type,
        epoch: checkInteger(a[1], "RESUME epoch"),
        from: checkInteger(a[2], "RESUME from"),
        head: checkInteger(a[3], "RESUME head"),
        avatar: checkString(a[4], "RESUME avatar"),
        limits: checkLimits(a[5]),
      };
      if (msg.head < msg.from) fail("RESUME head is behind from");
      return msg;
    }
    case RealmMessageType.Commit: {
      need(a, 3, "COMMIT");
      const msg: CommitMessage = {
        type,
        version: checkInteger(a[1], "COMMIT version"),
        patch: checkBytes(a[2], "COMMIT patch"),
      };
      if (a.length > 3 && a[3] !== null) msg.seq = checkInteger(a[3], "COMMIT seq");
      return msg;
    }
    case RealmMessageType.Commits:
      need(a, 2, "COMMITS");
      return { type, entries: a[1] as CommitsEntry[] };
    case RealmMessageType.Ack:
      need(a, 3, "ACK");
      return { type, seq: checkInteger(a[1], "ACK seq"), version: checkInteger(a[2], "ACK version") };
    case RealmMessageType.Reject:
      need(a, 4, "REJECT");
      return {
        type,
        seq: checkInteger(a[1], "REJECT seq"),
        code: checkString(a[2], "REJECT code"),
        message: checkString(a[3], "REJECT message"),
      };
    case RealmMessageType.Ping:
    case RealmMessageType.Pong:
      need(a, 2, type === RealmMessageType.Ping ? "PING" : "PONG");
      return { type, nonce: checkInteger(a[1], "nonce") };
    default:
      return fail(`unknown realm server message type ${type}`);
  }
}

/**
 * Decodes one realm message from a client (for test servers and tools).
 * @throws {@link ProtocolError} when the bytes are not a valid client message
 */
export function decodeRealmClientMessage(data: Uint8Array | ArrayBuffer | ArrayBufferView): RealmClientMessage {
  const { type, a } = readMessage(data, 5);
  switch (type) {
    case RealmMessageType.Intent:
      need(a, 4, "INTENT");
      return {
        type,
        seq: checkInteger(a[1], "INTENT seq"),
        name: checkString(a[2], "INTENT name"),
        args: checkString(a[3], "INTENT args"),
      };
    case RealmMessageType.Hello: {
      need(a, 5, "HELLO");
      const msg: RealmHelloMessage = {
        type,
        protocol: checkInteger(a[1], "HELLO protocol"),
        ticket: checkString(a[2], "HELLO ticket"),
        epoch: checkInteger(a[3], "HELLO epoch"),
        version: checkInteger(a[4], "HELLO version"),
      };
      if (a.length > 5) msg.flags = checkInteger(a[5], "HELLO flags");
      return msg;
    }
    case RealmMessageType.Write:
      need(a, 3, "WRITE");
      return { type, seq: checkInteger(a[1], "WRITE seq"), patch: checkBytes(a[2], "WRITE patch") };
    case RealmMessageType.Ping:
    case RealmMessageType.Pong:
      need(a, 2, type === RealmMessageType.Ping ? "PING" : "PONG");
      return { type, nonce: checkInteger(a[1], "nonce") };
    default:
      return fail(`unknown realm client message type ${type}`);
  }
}
