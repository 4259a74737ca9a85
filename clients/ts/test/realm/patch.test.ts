import { describe, expect, it } from "vitest";
import { applyPatch, getPath, type JsonObject, type Op, PatchError, patchFromJson, pathText } from "../../src/realm/patch.js";

const apply = (doc: JsonObject, ...ops: Op[]) => applyPatch(doc, ops);
const why = (doc: JsonObject, ...ops: Op[]): string => {
  try {
    applyPatch(doc, ops);
  } catch (e) {
    expect(e).toBeInstanceOf(PatchError);
    return (e as Error).message;
  }
  throw new Error("the patch applied");
};

describe("applyPatch: set", () => {
  it("creates and replaces object keys", () => {
    expect(apply({}, { op: "set", path: ["a"], value: 1 })).toEqual({ a: 1 });
    expect(apply({ a: { b: 1 } }, { op: "set", path: ["a", "b"], value: [2] })).toEqual({ a: { b: [2] } });
  });

  it("needs the parent to exist and be an object or a list", () => {
    expect(why({}, { op: "set", path: ["a", "b"], value: 1 })).toBe('op 0 (set "a/b"): the root has no key "a"');
    expect(why({ a: 5 }, { op: "set", path: ["a", "b"], value: 1 })).toBe('op 0 (set "a/b"): "a" is a number, not an object');
    expect(why({ a: {} }, { op: "set", path: ["a", 0], value: 1 })).toBe('op 0 (set "a/0"): "a" is an object, not a list');
    expect(why({ a: [] }, { op: "set", path: ["a", "k"], value: 1 })).toBe('op 0 (set "a/k"): "a" is a list, not an object');
  });

  it("replaces a list element, appends at index == size, refuses beyond", () => {
    expect(apply({ l: [1, 2] }, { op: "set", path: ["l", 1], value: 9 })).toEqual({ l: [1, 9] });
    expect(apply({ l: [1, 2] }, { op: "set", path: ["l", 2], value: 3 })).toEqual({ l: [1, 2, 3] });
    expect(why({ l: [1, 2] }, { op: "set", path: ["l", 3], value: 3 })).toBe('op 0 (set "l/3"): "l" has no index 3 (size 2)');
  });

  it("replaces the whole document on the root, only with an object", () => {
    expect(apply({ a: 1 }, { op: "set", path: [], value: { b: 2 } })).toEqual({ b: 2 });
    expect(why({ a: 1 }, { op: "set", path: [], value: [1] })).toBe("op 0 (set the root): the root must be an object, not a list");
    expect(why({}, { op: "set", path: [], value: null })).toBe("op 0 (set the root): the root must be an object, not null");
  });
});

describe("applyPatch: delete", () => {
  it("removes object keys and list elements (later ones move down)", () => {
    expect(apply({ a: 1, b: 2 }, { op: "delete", path: ["a"] })).toEqual({ b: 2 });
    expect(apply({ l: [1, 2, 3] }, { op: "delete", path: ["l", 0] })).toEqual({ l: [2, 3] });
  });

  it("refuses an absent key or index, and the root", () => {
    expect(why({ a: {} }, { op: "delete", path: ["a", "q"] })).toBe('op 0 (delete "a/q"): "a" has no key "q"');
    expect(why({ l: [] }, { op: "delete", path: ["l", 0] })).toBe('op 0 (delete "l/0"): "l" has no index 0 (size 0)');
    expect(why({}, { op: "delete", path: [] })).toBe("op 0 (delete the root): the root cannot be deleted");
  });

  it("does not see inherited properties as keys", () => {
    expect(why({}, { op: "delete", path: ["toString"] })).toBe('op 0 (delete "toString"): the root has no key "toString"');
    expect(why({}, { op: "set", path: ["constructor", "x"], value: 1 })).toMatch(/has no key "constructor"/);
  });
});

describe("applyPatch: append", () => {
  it("pushes one element onto a list, even a list", () => {
    expect(apply({ l: [1] }, { op: "append", path: ["l"], value: [2, 3] })).toEqual({ l: [1, [2, 3]] });
    expect(apply({ l: [[1]] }, { op: "append", path: ["l", 0], value: 2 })).toEqual({ l: [[1, 2]] });
  });

  it("creates the list under an object when the path is absent", () => {
    expect(apply({ o: {} }, { op: "append", path: ["o", "log"], value: "x" })).toEqual({ o: { log: ["x"] } });
  });

  it("refuses a value that is not a list, an absent index, and the root", () => {
    expect(why({ a: 1 }, { op: "append", path: ["a"], value: 2 })).toBe('op 0 (append "a"): "a" is a number, not a list');
    expect(why({ l: [{}] }, { op: "append", path: ["l", 0], value: 2 })).toBe('op 0 (append "l/0"): "l/0" is an object, not a list');
    expect(why({ l: [] }, { op: "append", path: ["l", 0], value: 2 })).toBe('op 0 (append "l/0"): "l" has no index 0 (size 0)');
    expect(why({}, { op: "append", path: [], value: 1 })).toBe("op 0 (append the root): the root is an object, not a list");
  });
});

describe("applyPatch: atomicity and sharing", () => {
  it("leaves the document exactly as it was when a later op fails, and names that op", () => {
    const doc: JsonObject = { a: { b: [1, 2] }, c: "x" };
    const copy = structuredClone(doc);
    const msg = why(
      doc,
      { op: "set", path: ["a", "b", 0], value: 9 },
      { op: "append", path: ["a", "b"], value: 3 },
      { op: "delete", path: ["c"] },
      { op: "delete", path: ["a", "q"] },
    );
    expect(msg).toBe('op 3 (delete "a/q"): "a" has no key "q"');
    expect(doc).toEqual(copy);
    expect((doc.a as JsonObject).b).toEqual([1, 2]);
  });

  it("applies ops in order, each seeing the previous ones", () => {
    const out = apply(
      {},
      { op: "set", path: ["p"], value: {} },
      { op: "append", path: ["p", "log"], value: 1 },
      { op: "append", path: ["p", "log"], value: 2 },
      { op: "set", path: ["p", "log", 0], value: 0 },
      { op: "delete", path: ["p", "log", 1] },
    );
    expect(out).toEqual({ p: { log: [0] } });
  });

  it("never mutates its input and shares the subtrees it did not touch", () => {
    const doc: JsonObject = { a: { x: 1 }, b: { y: [1] } };
    const frozen = structuredClone(doc);
    const out = apply(doc, { op: "set", path: ["a", "x"], value: 2 }, { op: "set", path: ["a", "z"], value: 3 });
    expect(doc).toEqual(frozen);
    expect(out).toEqual({ a: { x: 2, z: 3 }, b: { y: [1] } });
    expect(out.b).toBe(doc.b);
    expect(out.a).not.toBe(doc.a);
  });

  it("does not change the ops' values when later ops of the patch edit inside them", () => {
    const value = { list: [1] };
    const ops: Op[] = [
      { op: "set", path: ["v"], value },
      { op: "append", path: ["v", "list"], value: 2 },
    ];
    expect(applyPatch({}, ops)).toEqual({ v: { list: [1, 2] } });
    expect(value).toEqual({ list: [1] });
  });

  it("keeps __proto__ an ordinary key", () => {
    const out = apply({}, { op: "set", path: ["__proto__"], value: { polluted: true } });
    expect(Object.keys(out)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(getPath(out, ["__proto__", "polluted"])).toBe(true);
  });

  it("refuses malformed ops as PatchErrors", () => {
    expect(() => applyPatch({}, [{ op: "move", path: [] } as unknown as Op])).toThrow(/op 0 \(move\): unknown op "move"/);
    expect(() => applyPatch({}, [{ op: "delete", path: [-1] } as unknown as Op])).toThrow(PatchError);
    expect(() => applyPatch({}, [{ op: "delete", path: "a" } as unknown as Op])).toThrow(/path must be a list/);
  });
});

describe("pathText", () => {
  it("joins segments with / and escapes ~ and / in keys", () => {
    expect(pathText(["a/b", "c~d", 0])).toBe("a~1b/c~0d/0");
    expect(pathText([])).toBe("");
  });
});

describe("patchFromJson", () => {
  it("accepts the JSON form and copies values deeply", () => {
    const value = { x: [1, { y: 2 }] };
    const ops = patchFromJson([
      { op: "set", path: ["a", 0], value },
      { op: "append", path: ["log"], value: null },
      { op: "delete", path: ["b"] },
    ]);
    expect(ops).toEqual([
      { op: "set", path: ["a", 0], value },
      { op: "append", path: ["log"], value: null },
      { op: "delete", path: ["b"] },
    ]);
    (value.x[1] as { y: number }).y = 3;
    expect(((ops[0] as unknown as { value: { x: [number, { y: number }] } }).value.x[1]).y).toBe(2);
  });

  const bad: [string, unknown, RegExp][] = [
    ["not a list", { op: "set" }, /a patch must be a list of ops/],
    ["an unknown op", [{ op: "move", path: [] }], /op 0: field "op"/],
    ["a path that is not a list", [{ op: "delete", path: "a" }], /op 0: field "path": path must be a list/],
    ["a negative index", [{ op: "delete", path: [-1] }], /op 0: field "path"/],
    ["a fractional index", [{ op: "delete", path: [1.5] }], /op 0: field "path"/],
    ["a value on delete", [{ op: "delete", path: ["a"], value: 1 }], /op 0: field "value": not allowed for delete/],
    ["no value on set", [{ op: "set", path: ["a"] }], /op 0: field "value": required for set/],
    ["another field", [{ op: "set", path: ["a"], value: 1, when: 2 }], /op 0: field "when": not allowed/],
    ["NaN", [{ op: "set", path: ["a"], value: { n: NaN } }], /op 0: field "value": \.n: NaN is not a finite number/],
    ["undefined inside", [{ op: "set", path: ["a"], value: [1, undefined] }], /\[1\]: undefined is not a JSON value/],
    ["a Date", [{ op: "set", path: ["a"], value: new Date() }], /not a plain object/],
    ["a lone surrogate", [{ op: "set", path: ["a"], value: "\uD800" }], /lone surrogate/],
    ["a lone surrogate in a path key", [{ op: "set", path: ["\uDC00"], value: 1 }], /lone surrogate/],
    ["a bigint", [{ op: "set", path: ["a"], value: 1n }], /bigint is not a JSON value/],
  ];
  it.each(bad)("refuses %s", (_, input, re) => {
    expect(() => patchFromJson(input)).toThrow(re);
  });

  it("refuses cycles", () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => patchFromJson([{ op: "set", path: ["a"], value: a }])).toThrow(/a cycle/);
  });

  it("names the failing op's index", () => {
    try {
      patchFromJson([{ op: "delete", path: ["a"] }, { op: "set", path: ["b"] }]);
    } catch (e) {
      expect((e as PatchError).opIndex).toBe(1);
      return;
    }
    throw new Error("no error");
  });
});
