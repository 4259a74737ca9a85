import { describe, expect, it } from "vitest";
import { decodePatch, encodeLeading, encodePatch, KeyTable, measureOp, PatchDecodeError } from "../../src/realm/codec.js";
import type { Op } from "../../src/realm/patch.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex").replace(/(..)/g, "$1 ").trim();
const bytes = (h: string) => new Uint8Array(Buffer.from(h.replace(/\s+/g, ""), "hex"));

// docs/realms.md "Binary form": set ["a", 1] {"a": true}, delete ["b"], append [] -3.
const EXAMPLE: Op[] = [
  { op: "set", path: ["a", 1], value: { a: true } },
  { op: "delete", path: ["b"] },
  { op: "append", path: [], value: -3 },
];
const EXAMPLE_FRESH = "93  93 00 92 92 00 a1 61 fe 81 00 c3  92 01 91 92 01 a1 62  93 02 90 fd";
const EXAMPLE_AGAIN = "93 93 00 92 00 fe 81 00 c3 92 01 91 01 93 02 90 fd";

describe("encodePatch", () => {
  it("reproduces the example of docs/realms.md byte for byte, on a fresh table and again on the same table", () => {
    const keys = new KeyTable();
    expect(hex(encodePatch(EXAMPLE, keys))).toBe(hex(bytes(EXAMPLE_FRESH)));
    expect(keys.size).toBe(2);
    expect(keys.keyOf(0)).toBe("a");
    expect(keys.keyOf(1)).toBe("b");
    expect(hex(encodePatch(EXAMPLE, keys))).toBe(hex(bytes(EXAMPLE_AGAIN)));
    expect(keys.size).toBe(2);
  });
});
