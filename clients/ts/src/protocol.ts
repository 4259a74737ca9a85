/**
 * The tessera wire protocol, version 1 (`docs/protocol.md`): every message is
 * one MessagePack array in a binary WebSocket message, whose first element is
 * the message type. This module encodes and decodes each message type and
 * validates element types; it knows nothing about sockets.
 *
 * @packageDocumentation
 */
import { decode, encode } from "@msgpack/msgpack";

/** The protocol version this client speaks (sent in HELLO). */
export const PROTOCOL_VERSION = 1;

/** The WebSocket subprotocol the server accepts and echoes. */
export const SUBPROTOCOL = "tessera.v1";

/** Largest message a client may send (bytes); the server closes with 1009 above it. */
export const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024;

/** Message type numbers (the first array element). */
export const MessageType = {
  Hello: 1,
  Input: 2,
  Ping: 3,
  Pong: 4,
  Welcome: 16,
  Ack: 17,
  Reject: 18,
  Frame: 19,
  Transfer: 20,
  Notify: 21,
} as const;

/**
 * Bits of HELLO's `flags`. Other bits are reserved; a server ignores them.
 */
export const HelloFlags = {
  /**
   * Frame acks: the server sends no ACK for an input a FRAME acknowledges;
   * a FRAME's `last_seq` then acknowledges every input of the connection up
   * to it that was not refused (its REJECTs come before that FRAME).
   */
  FrameAcks: 1,
} as const;

/** How a shard encodes snapshots and inputs, as WELCOME says. */
export type Codec = "msgpack" | "json";

/** HELLO `[1, version, ticket, flags?]`: the client's first message. */
export interface HelloMessage {
  type: typeof MessageType.Hello;
  /** Protocol version; 1. */
  version: number;
  /** The ticket for this shard and subscriber (an opaque string). */
  ticket: string;
  /** {@link HelloFlags} bits; absent or 0: none (then the 4th element is not sent). */
  flags?: number;
}

/** INPUT `[2, seq, payload, view_tick]`: one input for the shard. */
export interface InputMessage {
  type: typeof MessageType.Input;
  /** Strictly increasing per connection, starting at 1. */
  seq: number;
  /** The input encoded in the shard's codec. */
  payload: Uint8Array;
  /**
   * The tick the client was drawing when the input was made, for lag
   * compensation; `null` if unknown. A non-negative finite number at most
   * 2^53 - 1, fractional when the client drew between two ticks (sent as a
   * MessagePack float64 then, else as an unsigned integer).
   */
  viewTick: number | null;
}

/** PING `[3, nonce]`, sent by either side. */
export interface PingMessage {
  type: typeof MessageType.Ping;
  nonce: number;
}

/** PONG `[4, nonce]`: the answer to a PING with the same nonce. */
export interface PongMessage {
  type: typeof MessageType.Pong;
  nonce: number;
}

/** WELCOME `[16, shard_id, subscriber_id, tick_rate, codec, tick, flags?]`: the ticket was accepted. */
export interface WelcomeMessage {
  type: typeof MessageType.Welcome;
  shardId: string;
  subscriberId: string;
  /** Ticks per second. */
  tickRate: number;
  /** How snapshots and inputs are encoded. */
  codec: Codec;
  /** The shard's current tick. */
  tick: number;
  /** The {@link HelloFlags} the server honours for this connection; absent or 0: none. */
  flags?: number;
}

/** ACK `[17, seq]`: input `seq` was applied and accepted. */
export interface AckMessage {
  type: typeof MessageType.Ack;
  seq: number;
}

/** REJECT `[18, seq, error]`: the shard refused input `seq`. */
export interface RejectMessage {
  type: typeof MessageType.Reject;
  seq: number;
  /** The shard's explanation, e.g. `"outside the arena"`. */
  error: string;
}

/** FRAME `[19, tick, last_seq, snapshot, entities?]`: the shard's state after `tick`. */
export interface FrameMessage {
  type: typeof MessageType.Frame;
  tick: number;
  /** Highest input seq of this connection applied so far (0 before any). */
  lastSeq: number;
  /**
   * The snapshot in the shard's codec; `null` for replicated shards when it
   * has not changed since the last one this connection received.
   */
  snapshot: Uint8Array | null;
  /** Entity changes (replicated shards only; decoded by `src/game/`). */
  entities?: Uint8Array;
}

/**
 * TRANSFER `[20, shard_id, ticket]`: the player moved to shard `shard_id`;
 * `ticket` (for that shard and the same subscriber) goes in the HELLO there.
 * The server's last message on the connection: it closes right after with
 * 4011 `transferred`. Both strings are non-empty.
 */
export interface TransferMessage {
  type: typeof MessageType.Transfer;
  /** The shard the player is on now. */
  shardId: string;
  /** A ticket for that shard (an opaque string). */
  ticket: string;
}

/**
 * NOTIFY `[21, module, channel, payload, flow_id]`: a compute module's
 * notification to this player (docs/protocol.md "Notifications from compute
 * modules"). `channel` is the channel the module emitted on (`all`,
 * `shard:<id>`, `kind:<kind>`, `group:<name>`, `player:<id>`) or
 * `spatial:<shard>`; `payload` is at most 1,024 bytes.
 */
export interface NotifyMessage {
  type: typeof MessageType.Notify;
  /** The emitting module's name. */
  module: string;
  channel: string;
  /** The module's bytes (often UTF-8 JSON). */
  payload: Uint8Array;
  /** The flow of the run that emitted it (as in the module's runs and logs). */
  flowId: string;
}

/** A message a client sends. */
export type ClientMessage = HelloMessage | InputMessage | PingMessage | PongMessage;
/** A message a server sends. */
export type ServerMessage =
  | WelcomeMessage
  | AckMessage
  | RejectMessage
  | FrameMessage
  | TransferMessage
  | NotifyMessage
  | PingMessage
  | PongMessage;

/** A message that does not follow the protocol (bad MessagePack, wrong element types, ...). */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtocolError";
  }
}

const MAX_UINT = Number.MAX_SAFE_INTEGER; // 2^53 - 1

function fail(what: string): never {
  throw new ProtocolError(what);
}

function checkUint(value: unknown, name: string): number {
  if (typeof value === "bigint") {
    if (value < 0n || value > BigInt(MAX_UINT)) fail(`${name} out of range`);
    return Number(value);
  }
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_UINT) {
    fail(`${name} must be an unsigned integer`);
  }
  return value;
}

/**
 * Checks an INPUT's view tick: a non-negative finite number no larger than
 * 2^53 - 1, integral or not. (`@msgpack/msgpack` writes a non-integral
 * number as float64 and an integral one as an integer, the wire form the
 * protocol asks for; a decoded uint64 may come as a bigint.)
 *
 * @returns the view tick as a number
 * @throws {@link ProtocolError} for anything else
 */
export function checkViewTick(value: unknown): number {
  if (typeof value === "bigint") return checkUint(value, "view_tick");
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_UINT) {
    fail("view_tick must be a non-negative finite number at most 2^53 - 1");
  }
  return value === 0 ? 0 : value; // -0 is 0
}

function checkStr(value: unknown, name: string): string {
  if (typeof value !== "string") fail(`${name} must be a string`);
  return value;
}

function checkNonEmptyStr(value: unknown, name: string): string {
  const s = checkStr(value, name);
  if (s === "") fail(`${name} must not be empty`);
  return s;
}

function checkBin(value: unknown, name: string): Uint8Array {
  if (!(value instanceof Uint8Array)) fail(`${name} must be binary`);
  return value;
}

function toBytes(data: Uint8Array | ArrayBuffer | ArrayBufferView): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  fail("message must be binary");
}

function decodeArray(data: Uint8Array | ArrayBuffer | ArrayBufferView): unknown[] {
  let value: unknown;
  try {
    value = decode(toBytes(data));
  } catch (e) {
    fail(`not valid MessagePack: ${(e as Error).message}`);
  }
  if (!Array.isArray(value)) fail("message must be an array");
  if (value.length === 0) fail("message is an empty array");
  return value;
}

function need(arr: unknown[], n: number, name: string): void {
  if (arr.length < n) fail(`${name} needs ${n - 1} elements, got ${arr.length - 1}`);
}

function encodeArray(arr: unknown[]): Uint8Array {
  return encode(arr);
}

/** Encodes a client message as MessagePack. */
export function encodeClientMessage(msg: ClientMessage): Uint8Array {
  switch (msg.type) {
    case MessageType.Hello: {
      const arr: unknown[] = [msg.type, checkUint(msg.version, "version"), checkStr(msg.ticket, "ticket")];
      const flags = msg.flags == null ? 0 : checkUint(msg.flags, "flags");
      if (flags !== 0) arr.push(flags);
      return encodeArray(arr);
    }
    case MessageType.Input:
      return encodeArray([
        msg.type,
        checkUint(msg.seq, "seq"),
        checkBin(msg.payload, "payload"),
        msg.viewTick == null ? null : checkViewTick(msg.viewTick),
      ]);
    case MessageType.Ping:
    case MessageType.Pong:
      return encodeArray([msg.type, checkUint(msg.nonce, "nonce")]);
    default:
      return fail(`unknown client message type ${(msg as { type: unknown }).type}`);
  }
}

/** Encodes a server message as MessagePack (for test servers and tools). */
export function encodeServerMessage(msg: ServerMessage): Uint8Array {
  switch (msg.type) {
    case MessageType.Welcome:
      if (msg.codec !== "msgpack" && msg.codec !== "json") fail(`unknown codec ${String(msg.codec)}`);
      return encodeArray([
        msg.type,
        checkStr(msg.shardId, "shard_id"),
        checkStr(msg.subscriberId, "subscriber_id"),
        checkUint(msg.tickRate, "tick_rate"),
        msg.codec,
        checkUint(msg.tick, "tick"),
        ...(msg.flags ? [checkUint(msg.flags, "flags")] : []),
      ]);
    case MessageType.Ack:
      return encodeArray([msg.type, checkUint(msg.seq, "seq")]);
    case MessageType.Reject:
      return encodeArray([msg.type, checkUint(msg.seq, "seq"), checkStr(msg.error, "error")]);
    case MessageType.Frame: {
      const arr: unknown[] = [
        msg.type,
        checkUint(msg.tick, "tick"),
        checkUint(msg.lastSeq, "last_seq"),
        msg.snapshot === null ? null : checkBin(msg.snapshot, "snapshot"),
      ];
      if (msg.entities !== undefined) arr.push(checkBin(msg.entities, "entities"));
      return encodeArray(arr);
    }
    case MessageType.Transfer:
      return encodeArray([msg.type, checkNonEmptyStr(msg.shardId, "shard_id"), checkNonEmptyStr(msg.ticket, "ticket")]);
    case MessageType.Notify:
      return encodeArray([
        msg.type,
        checkStr(msg.module, "module"),
        checkStr(msg.channel, "channel"),
        checkBin(msg.payload, "payload"),
        checkStr(msg.flowId, "flow_id"),
      ]);
    case MessageType.Ping:
    case MessageType.Pong:
      return encodeArray([msg.type, checkUint(msg.nonce, "nonce")]);
    default:
      return fail(`unknown server message type ${(msg as { type: unknown }).type}`);
  }
}

/**
 * Decodes one message from the server. Unknown trailing elements are ignored.
 * @throws {@link ProtocolError} when the bytes are not a valid server message.
 */
export function decodeServerMessage(data: Uint8Array | ArrayBuffer | ArrayBufferView): ServerMessage {
  const a = decodeArray(data);
  const type = checkUint(a[0], "message type");
  switch (type) {
    case MessageType.Welcome: {
      need(a, 6, "WELCOME");
      const codec = checkStr(a[4], "codec");
      if (codec !== "msgpack" && codec !== "json") fail(`unknown codec "${codec}"`);
      return {
        type,
        shardId: checkStr(a[1], "shard_id"),
        subscriberId: checkStr(a[2], "subscriber_id"),
        tickRate: checkUint(a[3], "tick_rate"),
        codec,
        tick: checkUint(a[5], "tick"),
        ...(a.length > 6 && a[6] !== null ? { flags: checkUint(a[6], "flags") } : {}),
      };
    }
    case MessageType.Ack:
      need(a, 2, "ACK");
      return { type, seq: checkUint(a[1], "seq") };
    case MessageType.Reject:
      need(a, 3, "REJECT");
      return { type, seq: checkUint(a[1], "seq"), error: checkStr(a[2], "error") };
    case MessageType.Frame: {
      need(a, 4, "FRAME");
      const frame: FrameMessage = {
        type,
        tick: checkUint(a[1], "tick"),
        lastSeq: checkUint(a[2], "last_seq"),
        snapshot: a[3] === null ? null : checkBin(a[3], "snapshot"),
      };
      if (a.length > 4 && a[4] !== null && a[4] !== undefined) frame.entities = checkBin(a[4], "entities");
      return frame;
    }
    case MessageType.Transfer:
      need(a, 3, "TRANSFER");
      return { type, shardId: checkNonEmptyStr(a[1], "shard_id"), ticket: checkNonEmptyStr(a[2], "ticket") };
    case MessageType.Notify:
      need(a, 5, "NOTIFY");
      return {
        type,
        module: checkStr(a[1], "module"),
        channel: checkStr(a[2], "channel"),
        payload: checkBin(a[3], "payload"),
        flowId: checkStr(a[4], "flow_id"),
      };
    case MessageType.Ping:
    case MessageType.Pong:
      need(a, 2, type === MessageType.Ping ? "PING" : "PONG");
      return { type, nonce: checkUint(a[1], "nonce") };
    default:
      return fail(`unknown server message type ${type}`);
  }
}

/**
 * Decodes one message from a client (for test servers and tools).
 * @throws {@link ProtocolError} when the bytes are not a valid client message.
 */
export function decodeClientMessage(data: Uint8Array | ArrayBuffer | ArrayBufferView): ClientMessage {
  const a = decodeArray(data);
  const type = checkUint(a[0], "message type");
  switch (type) {
    case MessageType.Hello: {
      need(a, 3, "HELLO");
      const hello: HelloMessage = { type, version: checkUint(a[1], "version"), ticket: checkStr(a[2], "ticket") };
      if (a.length > 3 && a[3] !== null) hello.flags = checkUint(a[3], "flags");
      return hello;
    }
    case MessageType.Input:
      need(a, 3, "INPUT");
      return {
        type,
        seq: checkUint(a[1], "seq"),
        payload: checkBin(a[2], "payload"),
        viewTick: a.length > 3 && a[3] !== null ? checkViewTick(a[3]) : null,
      };
    case MessageType.Ping:
    case MessageType.Pong:
      need(a, 2, type === MessageType.Ping ? "PING" : "PONG");
      return { type, nonce: checkUint(a[1], "nonce") };
    default:
      return fail(`unknown client message type ${type}`);
  }
}

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder("utf-8", { fatal: true });

/** Encodes an input or snapshot value in a shard codec. */
export function encodePayload(codec: Codec, value: unknown): Uint8Array {
  if (codec === "json") return textEncoder.encode(JSON.stringify(value));
  return encode(value);
}

/**
 * Decodes a snapshot or input payload in a shard codec.
 * @throws {@link ProtocolError} when the bytes are not valid in that codec.
 */
export function decodePayload<T = unknown>(codec: Codec, bytes: Uint8Array): T {
  try {
    if (codec === "json") return JSON.parse(textDecoder.decode(bytes)) as T;
    return decode(bytes) as T;
  } catch (e) {
    return fail(`snapshot is not valid ${codec}: ${(e as Error).message}`);
  }
}
