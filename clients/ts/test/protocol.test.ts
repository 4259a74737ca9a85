import { describe, expect, it } from "vitest";
import { decodeServerMessage, encodeServerMessage, MessageType } from "../src/protocol.js";

describe("protocol (scaffold smoke)", () => {
  it("round-trips an ACK", () => {
    const bytes = encodeServerMessage({ type: MessageType.Ack, seq: 7 });
    expect(decodeServerMessage(bytes)).toEqual({ type: MessageType.Ack, seq: 7 });
  });
});
