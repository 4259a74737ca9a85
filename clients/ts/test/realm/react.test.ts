// @vitest-environment jsdom
import { act, createElement } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useRealm } from "../../src/react.js";
import { connectRealm, type RealmConnection } from "../../src/realm/connect.js";
import { encodePatch, KeyTable } from "../../src/realm/codec.js";
import type { JsonObject, Op } from "../../src/realm/patch.js";
import { DEFAULT_REALM_LIMITS, encodeRealmServerMessage, RealmMessageType } from "../../src/realm/protocol.js";
import { type FakeSocket, fakeWebSocket } from "../helpers/fake-websocket.js";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let fake: ReturnType<typeof fakeWebSocket>;
let root: Root;
let container: HTMLElement;
let renders = 0;
let latest: unknown;
let conn: RealmConnection;
let ws: FakeSocket;
let keys: KeyTable; // the server's outgoing table

function Probe<T>(props: { conn: RealmConnection | null; select?: (d: JsonObject) => T; isEqual?: (a: T, b: T) => boolean }) {
  latest = useRealm(props.conn, props.select, props.isEqual);
  renders++;
  return createElement("span", null, JSON.stringify(latest ?? null));
}

function render<T>(props: { conn: RealmConnection | null; select?: (d: JsonObject) => T; isEqual?: (a: T, b: T) => boolean }) {
  act(() => root.render(createElement(Probe<T>, props)));
}

function commit(version: number, ops: Op[]) {
  act(() => ws.pushRaw(encodeRealmServerMessage({ type: RealmMessageType.Commit, version, patch: encodePatch(ops, keys) })));
}

beforeEach(() => {
  fake = fakeWebSocket();
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  renders = 0;
  keys = new KeyTable();
  conn = connectRealm("http://127.0.0.1:4321", "match", "m-1", { ticket: "T", WebSocket: fake.WebSocket, pingIntervalMs: 0, idleTimeoutMs: 0 });
  ws = fake.last();
  ws.accept();
  const state = encodePatch([{ op: "set", path: [], value: { players: { ann: { x: 1 } }, other: { n: 1 } } }], keys);
  ws.pushRaw(encodeRealmServerMessage({ type: RealmMessageType.Hydrate, epoch: 1, version: 1, avatar: "ann", limits: DEFAULT_REALM_LIMITS, state }));
});
afterEach(() => {
  act(() => root.unmount());
  container.remove();
  conn.close();
});

describe("useRealm", () => {
  it("returns the whole document by default and follows commits", () => {
    render({ conn });
    expect(latest).toEqual({ players: { ann: { x: 1 } }, other: { n: 1 } });
    commit(2, [{ op: "set", path: ["other", "n"], value: 2 }]);
    expect(latest).toEqual({ players: { ann: { x: 1 } }, other: { n: 2 } });
    expect(container.textContent).toContain('"n":2');
  });

  it("re-renders only when the selected subtree changes", () => {
    render({ conn, select: (d) => d.players });
    expect(latest).toEqual({ ann: { x: 1 } });
    const before = renders;
    commit(2, [{ op: "set", path: ["other", "n"], value: 2 }]);
    expect(renders).toBe(before);
    commit(3, [{ op: "set", path: ["players", "bob"], value: { x: 5 } }]);
    expect(renders).toBe(before + 1);
    expect(latest).toEqual({ ann: { x: 1 }, bob: { x: 5 } });
  });

  it("shows local writes at once", () => {
    render({ conn, select: (d) => (d.players as JsonObject).ann });
    act(() => {
      conn.set(["players", "ann", "x"], 9);
    });
    expect(latest).toEqual({ x: 9 });
    expect(ws.sent).toHaveLength(2); // HELLO, WRITE
  });

  it("uses isEqual to keep a value that only looks new", () => {
    render({ conn, select: (d) => Object.keys(d).sort(), isEqual: (a: string[], b: string[]) => a.join() === b.join() });
    const first = latest;
    const before = renders;
    commit(2, [{ op: "set", path: ["other", "n"], value: 3 }]);
    expect(latest).toBe(first);
    expect(renders).toBe(before);
    commit(3, [{ op: "set", path: ["more"], value: 1 }]);
    expect(latest).toEqual(["more", "other", "players"]);
  });

  it("returns undefined without a connection, and follows a connection given later", () => {
    render({ conn: null });
    expect(latest).toBeUndefined();
    render({ conn, select: (d) => d.other });
    expect(latest).toEqual({ n: 1 });
  });
});
