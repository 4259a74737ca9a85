/**
 * Realm patches (`docs/realms.md` "Patches"): the one way a realm's JSON
 * document changes. A patch is an ordered list of ops applied atomically:
 *
 * - `set path value`: creates or replaces the value at `path`; its parent
 *   must exist and be an object, or a list with the index in range (index
 *   == size appends). On the root (`[]`) it replaces the whole document,
 *   which must be an object.
 * - `delete path`: removes an object key or a list element (later elements
 *   move down); an absent key or index is refused. Not on the root.
 * - `append path value`: pushes `value` (one element, even a list) onto the
 *   list at `path`, creating the list when the path is absent and its
 *   parent is an object. Not on the root.
 *
 * A path is a list of segments: a string names an object key, an integer
 * (>= 0) a list index. Ops use the JSON form of the docs
 * (`{op: "set", path: ["players", "p-17"], value: {...}}`).
 *
 * @packageDocumentation
 */

/** A JSON value as a realm document holds it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A JSON object; a realm document's root is one. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** One path segment: a string is an object key, an integer (>= 0) a list index. */
export type PathSegment = string | number;

/** A path from the document's root; `[]` is the root. */
export type Path = readonly PathSegment[];

/** `set`: creates or replaces the value at `path`. */
export interface SetOp {
  op: "set";
  path: Path;
  value: JsonValue;
}

/** `delete`: removes an object key or a list element. */
export interface DeleteOp {
  op: "delete";
  path: Path;
}

/** `append`: pushes `value` onto the list at `path` (creating it under an object). */
export interface AppendOp {
  op: "append";
  path: Path;
  value: JsonValue;
}

/** One op of a patch, in the JSON form of `docs/realms.md`. */
export type Op = SetOp | DeleteOp | AppendOp;

/** One commit's ops, in order. */
export type Patch = readonly Op[];

/**
 * A patch that does not apply, or an op that is not well formed. `message`
 * names the op's index, its op and path, and why, like the server's:
 * `op 2 (delete "a/q"): "a" has no key "q"`.
 */
export class PatchError extends Error {
  /** The index of the failing op in its patch. */
  readonly opIndex: number;

  constructor(message: string, opIndex: number) {
    super(message);
    this.name = "PatchError";
    this.opIndex = opIndex;
  }
}

const hasOwn = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/** Reads an own key (never an inherited one such as `constructor`). */
export function getKey(obj: JsonObject, key: string): JsonValue | undefined {
  return hasOwn(obj, key) ? obj[key] : undefined;
}

/** Sets an own key; `__proto__` becomes an ordinary key, not the prototype. */
export function putKey(obj: JsonObject, key: string, value: JsonValue): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function kindOf(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  switch (typeof v) {
    case "boolean":
      return "a bool";
    case "string":
      return "a string";
    case "number":
      return "a number";
    default:
      return "an object";
  }
}

function escapeKey(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * A path as text for messages, JSON-Pointer style without the leading
 * slash: segments joined by `/`, `~` in keys as `~0` and `/` as `~1`
 * (`["a/b", 0]` is `a~1b/0`).
 */
export function pathText(path: Path): string {
  return path.map((s) => (typeof s === "string" ? escapeKey(s) : String(s))).join("/");
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

function where(path: Path, n: number): string {
  return n === 0 ? "the root" : `"${clip(pathText(path.slice(0, n)))}"`;
}

function isIndex(s: unknown): s is number {
  return typeof s === "number" && Number.isInteger(s) && s >= 0;
}

function checkPath(path: unknown): string | undefined {
  if (!Array.isArray(path)) return "path must be a list";
  for (const s of path) {
    if (typeof s !== "string" && !isIndex(s)) return "a path segment must be a string or an integer >= 0";
  }
  return undefined;
}

/**
 * Walks the first `n` segments of `path`; returns the value there, or the
 * reason it is not there.
 */
function walk(doc: JsonValue, path: Path, n: number): { at: JsonValue } | { why: string } {
  let at: JsonValue = doc;
  for (let i = 0; i < n; i++) {
    const seg = path[i]!;
    if (typeof seg === "string") {
      if (!isObject(at)) return { why: `${where(path, i)} is ${kindOf(at)}, not an object` };
      const next = getKey(at, seg);
      if (next === undefined) return { why: `${where(path, i)} has no key "${clip(seg)}"` };
      at = next;
    } else {
      if (!Array.isArray(at)) return { why: `${where(path, i)} is ${kindOf(at)}, not a list` };
      if (seg >= at.length) return { why: `${where(path, i)} has no index ${seg} (size ${at.length})` };
      at = at[seg]!;
    }
  }
  return { at };
}

/** The value at `path` in `doc`, or `undefined` when there is none. */
export function getPath(doc: JsonValue, path: Path): JsonValue | undefined {
  const r = walk(doc, path, path.length);
  return "at" in r ? r.at : undefined;
}

type Container = JsonObject | JsonValue[];

/**
 * Copy-on-write within one patch: a container is copied the first time an
 * op changes it, and the copy (marked owned) is changed in place by later
 * ops of the same patch. Nothing outside `owned` is ever mutated, so the
 * input document is left exactly as it was, whatever happens.
 */
function own<T extends Container>(c: T, owned: WeakSet<object>): T {
  if (owned.has(c)) return c;
  const copy = (Array.isArray(c) ? c.slice() : { ...c }) as T;
  owned.add(copy);
  return copy;
}

/**
 * Copies the containers from the root down to the value at the first `n`
 * segments (which the caller has checked exist); returns the new root and
 * the (owned) container there.
 */
function ownAlong(root: JsonObject, path: Path, n: number, owned: WeakSet<object>): { root: JsonObject; at: Container } {
  const newRoot = own(root, owned);
  let at: Container = newRoot;
  for (let i = 0; i < n; i++) {
    const seg = path[i]!;
    const child = (Array.isArray(at) ? at[seg as number] : getKey(at, seg as string)) as Container;
    const mine = own(child, owned);
    if (mine !== child) {
      if (Array.isArray(at)) at[seg as number] = mine;
      else putKey(at, seg as string, mine);
    }
    at = mine;
  }
  return { root: newRoot, at };
}

/** Applies one op; returns the new root or why it does not apply. */
function applyOne(root: JsonObject, op: Op, owned: WeakSet<object>): JsonObject | string {
  const path = op.path;
  if (path.length === 0) {
    if (op.op === "delete") return "the root cannot be deleted";
    if (op.op === "append") return "the root is an object, not a list";
    if (!isObject(op.value)) return `the root must be an object, not ${kindOf(op.value)}`;
    return op.value;
  }
  const n = path.length - 1;
  const found = walk(root, path, n);
  if ("why" in found) return found.why;
  const parent = found.at;
  const last = path[n]!;
  if (typeof last === "string") {
    if (!isObject(parent)) return `${where(path, n)} is ${kindOf(parent)}, not an object`;
    const current = getKey(parent, last);
    if (op.op === "delete" && current === undefined) return `${where(path, n)} has no key "${clip(last)}"`;
    if (op.op === "append" && current !== undefined && !Array.isArray(current)) {
      return `${where(path, n + 1)} is ${kindOf(current)}, not a list`;
    }
    const { root: next, at } = ownAlong(root, path, n, owned);
    const obj = at as JsonObject;
    if (op.op === "set") putKey(obj, last, op.value);
    else if (op.op === "delete") delete obj[last];
    else if (current === undefined) putKey(obj, last, [op.value]);
    else {
      const list = own(current as JsonValue[], owned);
      list.push(op.value);
      putKey(obj, last, list);
    }
    return next;
  }
  if (!Array.isArray(parent)) return `${where(path, n)} is ${kindOf(parent)}, not a list`;
  const size = parent.length;
  const appends = op.op === "set" && last === size;
  if (!appends && last >= size) return `${where(path, n)} has no index ${last} (size ${size})`;
  if (op.op === "append" && !Array.isArray(parent[last])) {
    return `${where(path, n + 1)} is ${kindOf(parent[last]!)}, not a list`;
  }
  const { root: next, at } = ownAlong(root, path, n, owned);
  const list = at as JsonValue[];
  if (op.op === "set") list[last] = op.value;
  else if (op.op === "delete") list.splice(last, 1);
  else {
    const target = own(list[last] as JsonValue[], owned);
    target.push(op.value);
    list[last] = target;
  }
  return next;
}

function opName(op: unknown): string {
  const name = (op as { op?: unknown } | null)?.op;
  return typeof name === "string" ? name : "?";
}

/**
 * Applies a patch to a document, atomically: returns the new document, or
 * throws and leaves nothing changed. The input is never mutated: the result
 * shares every subtree the patch did not touch with `doc` (so `===` tells
 * what changed), and the containers on the changed paths are copies.
 * Values from the ops are placed into the result as they are (not copied).
 *
 * @param doc the document (an object)
 * @param patch the ops, in order
 * @returns the document after all ops
 * @throws {@link PatchError} naming the failing op's index, op and path
 *   and why, e.g. `op 1 (delete "a/q"): "a" has no key "q"`; also for an op
 *   that is not well formed (an unknown `op`, a bad path)
 */
export function applyPatch(doc: JsonObject, patch: Patch): JsonObject {
  const owned = new WeakSet<object>();
  let root = doc;
  for (let i = 0; i < patch.length; i++) {
    const op = patch[i]!;
    const bad =
      op === null || typeof op !== "object"
        ? "not an op"
        : op.op !== "set" && op.op !== "delete" && op.op !== "append"
          ? `unknown op "${String((op as { op: unknown }).op)}"`
          : checkPath(op.path);
    if (bad !== undefined) throw new PatchError(`op ${i} (${opName(op)}): ${bad}`, i);
    const result = applyOne(root, op, owned);
    if (typeof result === "string") {
      throw new PatchError(`op ${i} (${op.op} ${where(op.path, op.path.length)}): ${result}`, i);
    }
    root = result;
  }
  return root;
}

/** Whether a string has no lone surrogate (so it has a UTF-8 form). */
export function isWellFormed(s: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

/** Deepest value nesting {@link patchFromJson} copies (the server allows 32 minus the path's length). */
const MAX_VALUE_DEPTH = 256;

class ValueError extends Error {}

function copyValue(v: unknown, depth: number, seen: Set<object>, at: string): JsonValue {
  const bad = (why: string): never => {
    throw new ValueError(at === "" ? why : `${at}: ${why}`);
  };
  if (v === null || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? (v === 0 ? 0 : v) : bad(`${v} is not a finite number`);
  if (typeof v === "string") return isWellFormed(v) ? v : bad("a string with a lone surrogate (not valid UTF-16)");
  if (typeof v !== "object") return bad(`${typeof v} is not a JSON value`);
  if (depth >= MAX_VALUE_DEPTH) return bad(`nested deeper than ${MAX_VALUE_DEPTH}`);
  if (seen.has(v)) return bad("a cycle");
  seen.add(v);
  try {
    if (Array.isArray(v)) return v.map((e: unknown, i) => copyValue(e, depth + 1, seen, `${at}[${i}]`));
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) bad("an object that is not a plain object (a class instance)");
    const out: JsonObject = {};
    for (const key of Object.keys(v)) {
      if (!isWellFormed(key)) bad("a key with a lone surrogate");
      const child = copyValue((v as Record<string, unknown>)[key], depth + 1, seen, `${at}.${clip(key)}`);
      putKey(out, key, child);
    }
    return out;
  } finally {
    seen.delete(v);
  }
}

/**
 * Checks a JSON value (as {@link patchFromJson} checks op values) and returns
 * a deep copy of it.
 * @throws TypeError naming what is not JSON and where
 */
export function copyJson(value: unknown): JsonValue {
  try {
    return copyValue(value, 0, new Set(), "");
  } catch (e) {
    if (e instanceof ValueError) throw new TypeError(`tessera: not a JSON value: ${e.message}`);
    throw e;
  }
}

/**
 * Checks a patch in the JSON form (`[{op, path, value?}, ...]`) and returns
 * a deep copy of it (so later changes to the caller's objects cannot reach a
 * document). Like the server's `PatchFromJson` it checks the shape only:
 * `op` is `set`, `delete` or `append`; `path` a list of strings and integers
 * >= 0 with well-formed keys; `value` required for `set` and `append` (it may
 * be `null`) and not allowed for `delete`; no other field. Values must be
 * JSON: `null`, booleans, finite numbers, strings without lone surrogates,
 * arrays and plain objects, without cycles.
 *
 * @throws {@link PatchError} naming the op index and the field, e.g.
 *   `op 0: field "value": not allowed for delete`
 */
export function patchFromJson(ops: unknown): Op[] {
  if (!Array.isArray(ops)) throw new PatchError("a patch must be a list of ops", 0);
  return ops.map((raw: unknown, i): Op => {
    const fail = (what: string): never => {
      throw new PatchError(`op ${i}: ${what}`, i);
    };
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) fail("must be an object {op, path, value?}");
    const o = raw as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      if (key !== "op" && key !== "path" && key !== "value") fail(`field "${clip(key)}": not allowed`);
    }
    const name = o.op;
    if (name !== "set" && name !== "delete" && name !== "append") {
      fail(`field "op": must be "set", "delete" or "append"`);
    }
    const badPath = checkPath(o.path);
    if (badPath !== undefined) fail(`field "path": ${badPath}`);
    const path = (o.path as PathSegment[]).map((s) => {
      if (typeof s === "string" && !isWellFormed(s)) fail(`field "path": a key with a lone surrogate`);
      return s;
    });
    const hasValue = hasOwn(o, "value") && o.value !== undefined;
    if (name === "delete") {
      if (hasValue) fail(`field "value": not allowed for delete`);
      return { op: "delete", path };
    }
    if (!hasValue) fail(`field "value": required for ${name as string}`);
    let value: JsonValue;
    try {
      value = copyValue(o.value, path.length, new Set(), "");
    } catch (e) {
      if (e instanceof ValueError) fail(`field "value": ${e.message}`);
      throw e;
    }
    return { op: name as "set" | "append", path, value };
  });
}
