import { encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import {
  type ClientMessage,
  decodeClientMessage,
  decodePayload,
  decodeServerMessage,
  encodeClientMessage,
  encodePayload,
  encodeServerMessage,
  HelloFlags,
  type InputMessage,
  MessageType,
  ProtocolError,
  type ServerMessage,
} from "../src/protocol.js";

const bin = (...b: number[]) => new Uint8Array(b);

describe("client messages", () => {
  const cases: [string, ClientMessage, unknown[]][] = [
    ["HELLO", { type: 1, version: 1, ticket: "v1.abc.def" }, [1, 1, "v1.abc.def"]],
    ["HELLO with flags", { type: 1, version: 1, ticket: "t", flags: HelloFlags.FrameAcks }, [1, 1, "t", 1]],
    ["INPUT", { type: 2, seq: 5, payload: bin(1, 2), viewTick: 42 }, [2, 5, bin(1, 2), 42]],
    ["INPUT without view tick", { type: 2, seq: 6, payload: bin(), viewTick: null }, [2, 6, bin(), null]],
    ["INPUT with a fractional view tick", { type: 2, seq: 7, payload: bin(3), viewTick: 12.25 }, [2, 7, bin(3), 12.25]],
    ["INPUT with view tick 0", { type: 2, seq: 8, payload: bin(), viewTick: 0 }, [2, 8, bin(), 0]],
    ["PING", { type: 3, nonce: 9 }, [3, 9]],
    ["PONG", { type: 4, nonce: 2 ** 40 }, [4, 2 ** 40]],
  ];
  for (const [name, msg, wire] of cases) {
    it(`encodes ${name} as the documented array`, () => {
      expect(encodeClientMessage(msg)).toEqual(encode(wire));
      expect(decodeClientMessage(encodeClientMessage(msg))).toEqual(msg);
    });
  }

  it("encodes the payload as bin and the ticket as str", () => {
    const bytes = encodeClientMessage({ type: 2, seq: 1, payload: bin(0xaa), viewTick: null });
    // fixarray(4), 2, 1, bin8 len 1 0xaa, nil
    expect([...bytes]).toEqual([0x94, 0x02, 0x01, 0xc4, 0x01, 0xaa, 0xc0]);
    const hello = encodeClientMessage({ type: 1, version: 1, ticket: "t" });
    expect([...hello]).toEqual([0x93, 0x01, 0x01, 0xa1, 0x74]);
  });

  it("HELLO's flags: bit 0 asks for frame acks; absent or 0 keeps the 3-element HELLO", () => {
    expect(HelloFlags.FrameAcks).toBe(1);
    expect(encodeClientMessage({ type: 1, version: 1, ticket: "t", flags: 0 })).toEqual(encode([1, 1, "t"]));
    expect(encodeClientMessage({ type: 1, version: 1, ticket: "t", flags: undefined })).toEqual(encode([1, 1, "t"]));
    const bytes = encodeClientMessage({ type: 1, version: 1, ticket: "t", flags: 1 });
    expect([...bytes]).toEqual([0x94, 0x01, 0x01, 0xa1, 0x74, 0x01]); // fixarray(4), 1, 1, "t", 1
    expect(decodeClientMessage(encode([1, 1, "t"]))).toStrictEqual({ type: 1, version: 1, ticket: "t" });
    expect(decodeClientMessage(encode([1, 1, "t", null]))).toStrictEqual({ type: 1, version: 1, ticket: "t" });
    expect(decodeClientMessage(encode([1, 1, "t", 0]))).toEqual({ type: 1, version: 1, ticket: "t", flags: 0 });
    const future = decodeClientMessage(encode([1, 1, "t", 3, "future"]));
    expect(future).toEqual({ type: 1, version: 1, ticket: "t", flags: 3 });
    expect(() => decodeClientMessage(encode([1, 1, "t", "1"]))).toThrow(/flags must be an unsigned integer/);
    expect(() => decodeClientMessage(encode([1, 1, "t", -1]))).toThrow(ProtocolError);
    expect(() => encodeClientMessage({ type: 1, version: 1, ticket: "t", flags: 1.5 })).toThrow(/flags/);
  });

  it("writes a fractional view tick as float64 and an integral one as an integer", () => {
    const frac = encodeClientMessage({ type: 2, seq: 1, payload: bin(), viewTick: 1234.5 });
    const f64 = new Uint8Array(8);
    new DataView(f64.buffer).setFloat64(0, 1234.5); // big-endian, as MessagePack
    // fixarray(4), 2, 1, bin8 len 0, float64 1234.5
    expect([...frac]).toEqual([0x94, 0x02, 0x01, 0xc4, 0x00, 0xcb, ...f64]);
    const int = encodeClientMessage({ type: 2, seq: 1, payload: bin(), viewTick: 300 });
    expect([...int]).toEqual([0x94, 0x02, 0x01, 0xc4, 0x00, 0xcd, 0x01, 0x2c]); // uint16 300
    // The largest non-integral double below 2^53 survives unchanged.
    const big = 2 ** 52 - 0.5;
    expect(decodeClientMessage(encodeClientMessage({ type: 2, seq: 1, payload: bin(), viewTick: big }))).toMatchObject({
      viewTick: big,
    });
  });

  it("reads a float32 or uint64 view tick, and -0 as 0", () => {
    const f32 = new Uint8Array(4);
    new DataView(f32.buffer).setFloat32(0, 7.75);
    expect(decodeClientMessage(bin(0x94, 0x02, 0x01, 0xc4, 0x00, 0xca, ...f32))).toMatchObject({ viewTick: 7.75 });
    const u64 = bin(0x94, 0x02, 0x01, 0xc4, 0x00, 0xcf, 0, 0, 0, 0, 0, 0, 0x01, 0x00);
    expect(decodeClientMessage(u64)).toMatchObject({ viewTick: 256 });
    const negZero = bin(0x94, 0x02, 0x01, 0xc4, 0x00, 0xcb, 0x80, 0, 0, 0, 0, 0, 0, 0); // float64 -0
    const zero = decodeClientMessage(negZero) as InputMessage;
    expect(Object.is(zero.viewTick, 0)).toBe(true);
  });

  const badViewTicks: [string, unknown][] = [
    ["negative", -0.5],
    ["a negative integer", -3],
    ["NaN", NaN],
    ["infinite", Infinity],
    ["over 2^53 - 1", 2 ** 60],
    ["a string", "12.5"],
    ["a map", { tick: 1 }],
  ];
  for (const [name, value] of badViewTicks) {
    it(`refuses a view tick that is ${name}, both ways`, () => {
      expect(() => decodeClientMessage(encode([2, 1, bin(), value]))).toThrow(ProtocolError);
      expect(() => decodeClientMessage(encode([2, 1, bin(), value]))).toThrow(/view_tick/);
      const msg: InputMessage = { type: 2, seq: 1, payload: bin(), viewTick: value as number };
      expect(() => encodeClientMessage(msg)).toThrow(/view_tick/);
    });
  }

  it("reads INPUT with the view tick absent", () => {
    expect(decodeClientMessage(encode([2, 3, bin(7)]))).toEqual({ type: 2, seq: 3, payload: bin(7), viewTick: null });
  });

  it("refuses to encode bad values", () => {
    expect(() => encodeClientMessage({ type: 2, seq: -1, payload: bin(), viewTick: null })).toThrow(ProtocolError);
    expect(() => encodeClientMessage({ type: 2, seq: 1.5, payload: bin(), viewTick: null })).toThrow(ProtocolError);
    expect(() => encodeClientMessage({ type: 2, seq: 2 ** 53, payload: bin(), viewTick: null })).toThrow(/seq/);
    expect(() => encodeClientMessage({ type: 1, version: 1, ticket: 5 as unknown as string })).toThrow(/ticket/);
    expect(() => encodeClientMessage({ type: 99 } as unknown as ClientMessage)).toThrow(/unknown/);
  });

  it("rejects malformed client messages", () => {
    expect(() => decodeClientMessage(encode([1, 1]))).toThrow(/HELLO needs 2 elements/);
    expect(() => decodeClientMessage(encode([2, 1, "not bin"]))).toThrow(/payload must be binary/);
    expect(() => decodeClientMessage(encode([16, "s", "u", 20, "json", 0]))).toThrow(/unknown client message type 16/);
  });
});

describe("server messages", () => {
  const cases: [string, ServerMessage, unknown[]][] = [
    [
      "WELCOME",
      { type: 16, shardId: "arena-1", subscriberId: "ann", tickRate: 20, codec: "msgpack", tick: 1234 },
      [16, "arena-1", "ann", 20, "msgpack", 1234],
    ],
    [
      "WELCOME json",
      { type: 16, shardId: "z", subscriberId: "", tickRate: 60, codec: "json", tick: 0 },
      [16, "z", "", 60, "json", 0],
    ],
    ["ACK", { type: 17, seq: 3 }, [17, 3]],
    ["REJECT", { type: 18, seq: 4, error: "outside the arena" }, [18, 4, "outside the arena"]],
    ["FRAME", { type: 19, tick: 7, lastSeq: 2, snapshot: bin(0x80) }, [19, 7, 2, bin(0x80)]],
    ["FRAME nil snapshot + entities", { type: 19, tick: 8, lastSeq: 0, snapshot: null, entities: bin(1, 0, 0) }, [19, 8, 0, null, bin(1, 0, 0)]],
    ["FRAME snapshot + entities", { type: 19, tick: 9, lastSeq: 1, snapshot: bin(0x90), entities: bin() }, [19, 9, 1, bin(0x90), bin()]],
    ["TRANSFER", { type: 20, shardId: "zone-2", ticket: "v1.abc.def" }, [20, "zone-2", "v1.abc.def"]],
    [
      "NOTIFY",
      { type: 21, module: "world-sim", channel: "kind:zone", payload: bin(0x7b, 0x7d), flowId: "f-1" },
      [21, "world-sim", "kind:zone", bin(0x7b, 0x7d), "f-1"],
    ],
    ["NOTIFY empty payload", { type: 21, module: "m", channel: "spatial:z", payload: bin(), flowId: "" }, [21, "m", "spatial:z", bin(), ""]],
    ["PING", { type: 3, nonce: 77 }, [3, 77]],
    ["PONG", { type: 4, nonce: 78 }, [4, 78]],
  ];
  for (const [name, msg, wire] of cases) {
    it(`decodes ${name}`, () => {
      expect(decodeServerMessage(encode(wire))).toEqual(msg);
      expect(encodeServerMessage(msg)).toEqual(encode(wire));
    });
  }

  it("accepts ArrayBuffer and views with offsets", () => {
    const bytes = encode([17, 12]);
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    expect(decodeServerMessage(padded.subarray(3))).toEqual({ type: 17, seq: 12 });
    expect(decodeServerMessage(bytes.slice().buffer)).toEqual({ type: 17, seq: 12 });
    expect(decodeServerMessage(new DataView(padded.buffer, 3))).toEqual({ type: 17, seq: 12 });
  });

  it("ignores unknown trailing elements", () => {
    expect(decodeServerMessage(encode([17, 3, "future", 1]))).toEqual({ type: 17, seq: 3 });
    expect(decodeServerMessage(encode([20, "b", "t", { later: 1 }]))).toEqual({ type: 20, shardId: "b", ticket: "t" });
    expect(decodeServerMessage(encode([16, "s", "u", 20, "json", 5, 1, { x: 1 }]))).toMatchObject({ tick: 5, flags: 1 });
    expect(decodeServerMessage(encode([19, 1, 0, null, bin(), "more"]))).toEqual({
      type: 19,
      tick: 1,
      lastSeq: 0,
      snapshot: null,
      entities: bin(),
    });
  });

  it("decodes 64-bit integers below 2^53", () => {
    const big = 2 ** 53 - 1;
    expect(decodeServerMessage(encode([19, big, big, null]))).toMatchObject({ tick: big, lastSeq: big });
  });

  const malformed: [string, Uint8Array, RegExp][] = [
    ["empty input", bin(), /not valid MessagePack/],
    ["truncated array", encode([17, 300]).slice(0, 2), /not valid MessagePack/],
    ["reserved byte 0xc1", bin(0xc1), /not valid MessagePack/],
    ["a map", encode({ type: 17 }), /must be an array/],
    ["a number", encode(17), /must be an array/],
    ["an empty array", encode([]), /empty array/],
    ["a string type", encode(["17", 1]), /message type must be an unsigned integer/],
    ["a negative type", encode([-1, 1]), /message type/],
    ["an unknown type", encode([22, 1]), /unknown server message type 22/],
    ["NOTIFY without flow id", encode([21, "m", "all", bin()]), /NOTIFY needs 4 elements, got 3/],
    ["NOTIFY with a str payload", encode([21, "m", "all", "p", "f"]), /payload must be binary/],
    ["NOTIFY with a numeric module", encode([21, 1, "all", bin(), "f"]), /module must be a string/],
    ["NOTIFY with a nil channel", encode([21, "m", null, bin(), "f"]), /channel must be a string/],
    ["NOTIFY with a numeric flow id", encode([21, "m", "all", bin(), 7]), /flow_id must be a string/],
    ["a client type", encode([1, 1, "t"]), /unknown server message type 1/],
    ["ACK without seq", encode([17]), /ACK needs 1 elements, got 0/],
    ["ACK with a string seq", encode([17, "3"]), /seq must be an unsigned integer/],
    ["ACK with a float seq", encode([17, 1.5]), /seq must be an unsigned integer/],
    ["ACK with a negative seq", encode([17, -3]), /seq must be an unsigned integer/],
    ["REJECT without error", encode([18, 3]), /REJECT needs 2/],
    ["REJECT with a bin error", encode([18, 3, bin(65)]), /error must be a string/],
    ["WELCOME missing tick", encode([16, "s", "u", 20, "msgpack"]), /WELCOME needs 5/],
    ["WELCOME bad codec", encode([16, "s", "u", 20, "xml", 0]), /unknown codec "xml"/],
    ["WELCOME numeric shard id", encode([16, 5, "u", 20, "json", 0]), /shard_id must be a string/],
    ["WELCOME nil tick rate", encode([16, "s", "u", null, "json", 0]), /tick_rate/],
    ["FRAME missing snapshot", encode([19, 1, 0]), /FRAME needs 3/],
    ["FRAME str snapshot", encode([19, 1, 0, "snap"]), /snapshot must be binary/],
    ["FRAME str entities", encode([19, 1, 0, null, "e"]), /entities must be binary/],
    ["FRAME negative tick", encode([19, -1, 0, null]), /tick must be/],
    ["TRANSFER without ticket", encode([20, "zone-2"]), /TRANSFER needs 2 elements, got 1/],
    ["TRANSFER with nothing", encode([20]), /TRANSFER needs 2 elements, got 0/],
    ["TRANSFER numeric shard id", encode([20, 2, "T"]), /shard_id must be a string/],
    ["TRANSFER bin ticket", encode([20, "zone-2", bin(84)]), /ticket must be a string/],
    ["TRANSFER nil ticket", encode([20, "zone-2", null]), /ticket must be a string/],
    ["TRANSFER empty shard id", encode([20, "", "T"]), /shard_id must not be empty/],
    ["TRANSFER empty ticket", encode([20, "zone-2", ""]), /ticket must not be empty/],
    ["PING without nonce", encode([3]), /PING needs 1/],
    ["PONG with a map nonce", encode([4, {}]), /nonce must be/],
  ];
  for (const [name, bytes, error] of malformed) {
    it(`rejects ${name}`, () => {
      expect(() => decodeServerMessage(bytes)).toThrow(ProtocolError);
      expect(() => decodeServerMessage(bytes)).toThrow(error);
    });
  }

  it("rejects integers above 2^53", () => {
    // uint64 2^60 (0xcf + 8 bytes)
    const bytes = bin(0x92, 0x11, 0xcf, 0x10, 0, 0, 0, 0, 0, 0, 0);
    expect(() => decodeServerMessage(bytes)).toThrow(ProtocolError);
  });

  it("refuses to encode bad server messages", () => {
    expect(() =>
      encodeServerMessage({ type: 16, shardId: "s", subscriberId: "u", tickRate: 20, codec: "xml" as "json", tick: 0 }),
    ).toThrow(/codec/);
    expect(() => encodeServerMessage({ type: 99 } as unknown as ServerMessage)).toThrow(/unknown/);
    expect(() => encodeServerMessage({ type: 20, shardId: "", ticket: "t" })).toThrow(/shard_id must not be empty/);
    expect(() => encodeServerMessage({ type: 20, shardId: "b", ticket: 7 as unknown as string })).toThrow(/ticket/);
  });
});

describe("payload codecs", () => {
  const value = { move_to: { x: 120.5, y: 80 } };
  it("round-trips msgpack and json", () => {
    expect(decodePayload("msgpack", encodePayload("msgpack", value))).toEqual(value);
    expect(new TextDecoder().decode(encodePayload("json", value))).toBe('{"move_to":{"x":120.5,"y":80}}');
    expect(decodePayload("json", encodePayload("json", value))).toEqual(value);
  });
  it("rejects bad payloads", () => {
    expect(() => decodePayload("json", new TextEncoder().encode("{nope"))).toThrow(/not valid json/);
    expect(() => decodePayload("json", bin(0xff, 0xfe))).toThrow(ProtocolError);
    expect(() => decodePayload("msgpack", bin(0xc1))).toThrow(/not valid msgpack/);
    expect(() => decodePayload("msgpack", bin())).toThrow(ProtocolError);
  });
});
