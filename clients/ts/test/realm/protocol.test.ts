import { decode, encode } from "@msgpack/msgpack";
import { describe, expect, it } from "vitest";
import { ProtocolError } from "../../src/protocol.js";
import {
  DEFAULT_REALM_LIMITS,
  decodeRealmClientMessage,
  decodeRealmServerMessage,
  encodeRealmClientMessage,
  encodeRealmServerMessage,
  REALM_HELLO_COMMITS,
  type RealmClientMessage,
  RealmMessageType as T,
  type RealmServerMessage,
} from "../../src/realm/protocol.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const limits = { ...DEFAULT_REALM_LIMITS, writeRatePerSecond: 20 };

describe("realm client messages", () => {
  it("encodes HELLO as [1, 1, ticket, epoch, version] and WRITE with the patch as bin", () => {
    const hello = encodeRealmClientMessage({ type: T.Hello, protocol: 1, ticket: "tk", epoch: 3, version: 300 });
    expect(hex(hello)).toBe("950101a2746b03cd012c");
    const write = encodeRealmClientMessage({ type: T.Write, seq: 5, patch: new Uint8Array([0x90]) });
    expect(hex(write)).toBe("930205c40190");
    expect(decode(write)).toEqual([2, 5, new Uint8Array([0x90])]);
  });

  it("round-trips every client message", () => {
    const msgs: RealmClientMessage[] = [
      { type: T.Hello, protocol: 1, ticket: "v1.x.y", epoch: 2 ** 53, version: 0 },
      { type: T.Write, seq: 9, patch: new Uint8Array([0x91, 0x92, 0x01, 0x90]) },
      { type: T.Ping, nonce: 4 },
      { type: T.Pong, nonce: 4 },
    ];
    for (const m of msgs) expect(decodeRealmClientMessage(encodeRealmClientMessage(m))).toEqual(m);
  });

  it("refuses out-of-range integers when encoding", () => {
    expect(() => encodeRealmClientMessage({ type: T.Write, seq: 2 ** 53 + 2, patch: new Uint8Array() })).toThrow(ProtocolError);
    expect(() => encodeRealmClientMessage({ type: T.Ping, nonce: -1 })).toThrow(ProtocolError);
  });
});

describe("COMMITS and HELLO flags", () => {
  it("writes the same bytes as the server", () => {
    const bytes = encodeRealmServerMessage({
      type: T.Commits,
      entries: [{ version: 5, patch: new Uint8Array([0x90]) }, { version: 6, seq: 9 }, { version: 7, patch: new Uint8Array([0x91]), seq: 10 }],
    });
    expect(hex(bytes)).toBe("9215939205c401909306c00993" + "07c401910a");
    const hello = encodeRealmClientMessage({ type: T.Hello, protocol: 1, ticket: "t", epoch: 0, version: 0, flags: REALM_HELLO_COMMITS });
    expect(hex(hello)).toBe("960101a174000001");
    expect(decodeRealmClientMessage(hello)).toMatchObject({ flags: 1 });
    expect(decodeRealmClientMessage(encode([1, 1, "t", 0, 0]))).not.toHaveProperty("flags");
  });

  it("skips an entry's trailing elements and refuses malformed entries", () => {
    expect(decodeRealmServerMessage(encode([21, [[1, new Uint8Array([0x90]), 2, "x"]], "later"]))).toEqual({
      type: T.Commits,
      entries: [{ version: 1, patch: new Uint8Array([0x90]), seq: 2 }],
    });
    const bad: [unknown[], RegExp][] = [
      [[21], /COMMITS needs 1 elements/],
      [[21, null], /entries must be an array/],
      [[21, []], /must not be empty/],
      [[21, [5]], /entry must be an array/],
      [[21, [[1]]], /entry needs 2 elements/],
      [[21, [[1, "p"]]], /patch must be binary or nil/],
      [[21, [[1, null]]], /without a patch needs a seq/],
      [[21, [[2, null, 1], [2, null, 2]]], /versions must increase/],
      [[21, [[-1, null, 1]]], /entry version must be an integer/],
      [[21, [[1, null, "s"]]], /entry seq must be an integer/],
    ];
    for (const [msg, why] of bad) expect(() => decodeRealmServerMessage(encode(msg)), JSON.stringify(msg)).toThrow(why);
  });
});

describe("realm server messages", () => {
  const msgs: RealmServerMessage[] = [
    { type: T.Hydrate, epoch: 1, version: 2, avatar: "ann", limits, state: new Uint8Array([0x90]) },
    { type: T.Resume, epoch: 1, from: 2, head: 9, avatar: "ann", limits },
    { type: T.Commit, version: 3, patch: new Uint8Array([0x90]) },
    { type: T.Commit, version: 3, patch: new Uint8Array([0x90]), seq: 4 },
    { type: T.Ack, seq: 4, version: 3 },
    { type: T.Commits, entries: [{ version: 3, patch: new Uint8Array([0x90]) }, { version: 4, seq: 1 }, { version: 2 ** 53, patch: new Uint8Array(), seq: 2 }] },
    { type: T.Reject, seq: 4, code: "permission_denied", message: "players/b is owned by avatar b" },
    { type: T.Ping, nonce: 1 },
    { type: T.Pong, nonce: 1 },
  ];

  it("round-trips every server message", () => {
    for (const m of msgs) expect(decodeRealmServerMessage(encodeRealmServerMessage(m))).toEqual(m);
  });

  it("reads messages written by another MessagePack encoder, any integer width", () => {
    const hydrate = encode([16, 5, 6, "bob", { maxPatchesPerFrame: 8 }, new Uint8Array([0x90])]);
    expect(decodeRealmServerMessage(hydrate)).toEqual({
      type: 16,
      epoch: 5,
      version: 6,
      avatar: "bob",
      limits: { ...DEFAULT_REALM_LIMITS, maxPatchesPerFrame: 8 },
      state: new Uint8Array([0x90]),
    });
    // ACK [19, seq as uint64, version as uint32]
    const ack = new Uint8Array([0x93, 0x13, 0xcf, 0, 0, 0, 0, 0, 0, 0, 7, 0xce, 0, 0, 0, 9]);
    expect(decodeRealmServerMessage(ack)).toEqual({ type: 19, seq: 7, version: 9 });
  });

  it("ignores unknown trailing elements and limits, and treats a nil COMMIT seq as absent", () => {
    expect(decodeRealmServerMessage(encode([19, 1, 2, { future: [1, 2, { x: 1 }] }, "more"]))).toEqual({ type: 19, seq: 1, version: 2 });
    const h = decodeRealmServerMessage(encode([16, 1, 1, "a", { newLimit: 5, writeRateBurst: 9 }, new Uint8Array([0x90])]));
    expect(h).toMatchObject({ limits: { writeRateBurst: 9, maxFrameBytes: 65536 } });
    expect(decodeRealmServerMessage(encode([18, 3, new Uint8Array([0x90]), null]))).toEqual({ type: 18, version: 3, patch: new Uint8Array([0x90]) });
  });

  const bad: [string, Uint8Array | ArrayBuffer, RegExp][] = [
    ["not MessagePack", new Uint8Array([0xc1]), /not valid MessagePack/],
    ["truncated", encode([19, 1, 300]).slice(0, 4), /not valid MessagePack: truncated/],
    ["not an array", encode({ a: 1 }), /must be an array/],
    ["an empty array", encode([]), /empty array/],
    ["an unknown type", encode([99, 1]), /unknown realm server message type 99/],
    ["a client type", encode([2, 1, new Uint8Array()]), /unknown realm server message type 2/],
    ["a missing element", encode([19, 1]), /ACK needs 2 elements, got 1/],
    ["a negative version", encode([19, 1, -2]), /ACK version must be an integer in 0\.\.2\^53/],
    ["a version above 2^53", encode([19, 1, 2 ** 53 + 2]), /ACK version must be an integer/],
    ["a uint64 above 2^53", new Uint8Array([0x93, 0x13, 0x01, 0xcf, 0, 0x20, 0, 0, 0, 0, 0, 1]), /ACK version must be an integer/],
    ["a float seq", encode([19, 1.5, 2]), /ACK seq/],
    ["a patch that is a string", encode([18, 1, "patch"]), /COMMIT patch must be binary/],
    ["a patch that is an array", encode([18, 1, [1]]), /COMMIT patch must be binary/],
    ["an avatar that is not a string", encode([17, 1, 1, 2, 5, {}]), /RESUME avatar must be a string/],
    ["limits that are not a map", encode([17, 1, 1, 2, "a", [1]]), /limits must be a map/],
    ["a limit that is not an integer", encode([17, 1, 1, 2, "a", { maxFrameBytes: "big" }]), /limits\.maxFrameBytes must be an integer >= 1/],
    ["a limit of 0", encode([17, 1, 1, 2, "a", { writeRatePerSecond: 0 }]), /limits\.writeRatePerSecond/],
    ["a RESUME head behind from", encode([17, 1, 5, 4, "a", {}]), /head is behind from/],
    ["bytes after the message", new Uint8Array([...encode([3, 1]), 0x00]), /1 bytes after the message/],
    ["an ext value", new Uint8Array([0x92, 0x03, 0xd4, 0x01, 0x00]), /not valid MessagePack: unsupported MessagePack type 0xd4/],
    ["invalid UTF-8", new Uint8Array([0x94, 0x14, 0x01, 0xa1, 0xff, 0xa0]), /not valid UTF-8/],
    ["an array count larger than the bytes", new Uint8Array([0xdd, 0x7f, 0, 0, 0, 0x03]), /items announced/],
  ];
  it.each(bad)("refuses %s with a ProtocolError", (_, bytes, re) => {
    let err: unknown;
    try {
      decodeRealmServerMessage(bytes);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProtocolError);
    expect((err as Error).message).toMatch(re);
  });

  it("throws nothing but ProtocolError for random bytes", () => {
    let seed = 99;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const valid = msgs.map((m) => encodeRealmServerMessage(m));
    for (let i = 0; i < 3000; i++) {
      const b = valid[i % valid.length]!.slice();
      b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      try {
        decodeRealmServerMessage(b);
      } catch (e) {
        expect(e).toBeInstanceOf(ProtocolError);
      }
    }
  });
});
