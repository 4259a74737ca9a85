// @vitest-environment jsdom
import { encode } from "@msgpack/msgpack";
import { act, createElement, StrictMode } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useShard, type UseShardOptions, type UseShardResult } from "../src/react.js";
import { fakeWebSocket } from "./helpers/fake-websocket.js";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

type Snap = { players: { id: string; x: number; y: number }[] };
type Input = { move_to: { x: number; y: number } };

let fake: ReturnType<typeof fakeWebSocket>;
let root: Root;
let container: HTMLElement;
let latest: UseShardResult<Snap, Input>;
let renders = 0;

function Probe(props: { shardId: string | null; options: UseShardOptions | null }) {
  latest = useShard<Snap, Input>(props.shardId, props.options);
  renders++;
  return createElement("span", null, latest.state);
}

function render(shardId: string | null, options: UseShardOptions | null, strict = false) {
  const el = createElement(Probe, { shardId, options });
  act(() => root.render(strict ? createElement(StrictMode, null, el) : el));
}

const opts = (extra: Partial<UseShardOptions> = {}): UseShardOptions => ({
  ticket: "T",
  url: "http://127.0.0.1:4321",
  WebSocket: fake.WebSocket,
  pingIntervalMs: 0,
  ...extra,
});

beforeEach(() => {
  fake = fakeWebSocket();
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  renders = 0;
});
afterEach(() => {
  act(() => root.unmount());
  container.remove();
});

describe("useShard", () => {
  it("connects, renders snapshots and rejections, and sends inputs", () => {
    render("arena-1", opts());
    expect(latest.state).toBe("connecting");
    expect(fake.sockets).toHaveLength(1);
    const ws = fake.last();
    act(() => ws.acceptAndWelcome());
    expect(latest.state).toBe("open");
    expect(container.textContent).toBe("open");

    const snap: Snap = { players: [{ id: "ann", x: 10, y: 20 }] };
    act(() => ws.push({ type: 19, tick: 5, lastSeq: 0, snapshot: encode(snap) }));
    expect(latest.snapshot).toEqual(snap);

    let seq = 0;
    act(() => {
      seq = latest.send({ move_to: { x: -1, y: 0 } });
    });
    expect(seq).toBe(1);
    expect(ws.messages().at(-1)).toMatchObject({ type: 2, seq: 1, viewTick: null });
    act(() => {
      seq = latest.send({ move_to: { x: -1, y: 0 } }, { viewTick: 4.375 });
    });
    expect(ws.messages().at(-1)).toMatchObject({ type: 2, seq: 2, viewTick: 4.375 });
    act(() => ws.push({ type: 18, seq: 1, error: "outside the arena" }));
    expect(latest.lastRejection).toEqual({ seq: 1, error: "outside the arena" });
  });

  it("does not reconnect when re-rendered with an equal inline options object", () => {
    render("arena-1", opts());
    const send = latest.send;
    render("arena-1", opts());
    render("arena-1", opts({ ticket: "T" }));
    expect(fake.sockets).toHaveLength(1);
    expect(latest.send).toBe(send);
  });

  it("closes on unmount", () => {
    render("arena-1", opts());
    const ws = fake.last();
    act(() => ws.acceptAndWelcome());
    act(() => root.unmount());
    expect(ws.closedByClient).toEqual({ code: 1000, reason: "client closed" });
    root = createRoot(container); // for afterEach
  });

  it("reconnects to the new shard when shardId changes, and when a string ticket changes", () => {
    render("arena-1", opts());
    const first = fake.last();
    act(() => first.acceptAndWelcome());
    act(() => first.push({ type: 19, tick: 1, lastSeq: 0, snapshot: encode({ players: [] }) }));
    render("arena-2", opts());
    expect(first.closedByClient).toBeDefined();
    expect(fake.sockets).toHaveLength(2);
    expect(fake.last().url).toBe("ws://127.0.0.1:4321/shard/arena-2");
    expect(latest.snapshot).toBeUndefined(); // nothing from the old shard
    expect(latest.state).toBe("connecting");
    render("arena-2", opts({ ticket: "T2" }));
    expect(fake.sockets).toHaveLength(3);
    expect(fake.sockets[1].closedByClient).toBeDefined();
  });

  it("calls the latest ticket function on reconnect without reconnecting on a new closure", async () => {
    const calls: string[] = [];
    render("arena-1", opts({ ticket: async () => (calls.push("a"), "A") }));
    await act(async () => {});
    render("arena-1", opts({ ticket: async () => (calls.push("b"), "B") }));
    await act(async () => {});
    expect(fake.sockets).toHaveLength(1);
    expect(calls).toEqual(["a"]);
    // The server restarts: the reconnect uses the latest function.
    act(() => fake.last().serverClose(1001, "restart"));
    // Waits for the reconnect itself (after its backoff), not a guessed time.
    await act(async () => {
      await vi.waitFor(() => expect(fake.sockets).toHaveLength(2), { timeout: 10_000, interval: 10 });
    });
    expect(calls).toEqual(["a", "b"]);
    expect(fake.sockets).toHaveLength(2);
  });

  it("stays idle without a shardId, and send() says why", () => {
    render(null, opts());
    expect(fake.sockets).toHaveLength(0);
    expect(latest.state).toBe("closed");
    expect(() => latest.send({ move_to: { x: 1, y: 1 } })).toThrow(/no connection/);
    render("arena-1", opts());
    expect(fake.sockets).toHaveLength(1);
  });

  it("works under StrictMode (one live connection)", () => {
    render("arena-1", opts(), true);
    const live = fake.sockets.filter((s) => !s.closedByClient);
    expect(live).toHaveLength(1);
    act(() => live[0].acceptAndWelcome());
    expect(latest.state).toBe("open");
    expect(renders).toBeGreaterThan(0);
  });

  it("follows a TRANSFER: re-renders with the new shard, calls the latest onTransfer, keeps the connection", () => {
    const seen: string[] = [];
    render("zone-0", opts({ onTransfer: (t) => seen.push(`first ${t.from}->${t.to}`) }));
    render("zone-0", opts({ onTransfer: (t) => seen.push(`latest ${t.from}->${t.to}`) }));
    const source = fake.last();
    act(() => source.acceptAndWelcome());
    act(() => source.push({ type: 19, tick: 5, lastSeq: 0, snapshot: encode({ players: [{ id: "ann", x: 99, y: 0 }] }) }));
    expect(latest).toMatchObject({ shardId: "zone-0", transfers: 0, state: "open" });
    const conn = latest.connection;

    const before = renders;
    act(() => source.transfer("zone-1", "T1"));
    expect(renders).toBeGreaterThan(before);
    expect(latest).toMatchObject({ shardId: "zone-1", transfers: 1, state: "connecting" });
    expect(seen).toEqual(["latest zone-0->zone-1"]);
    expect(latest.snapshot).toEqual({ players: [{ id: "ann", x: 99, y: 0 }] }); // the last picture stays
    expect(fake.sockets).toHaveLength(2);
    const target = fake.last();
    expect(target.url).toBe("ws://127.0.0.1:4321/shard/zone-1");
    act(() => {
      target.accept();
      target.welcome();
    });
    expect(target.messages()[0]).toMatchObject({ ticket: "T1" });
    act(() => target.push({ type: 19, tick: 1, lastSeq: 0, snapshot: encode({ players: [{ id: "ann", x: 100, y: 0 }] }) }));
    expect(latest.snapshot).toEqual({ players: [{ id: "ann", x: 100, y: 0 }] });
    act(() => {
      latest.send({ move_to: { x: 101, y: 0 } });
    });
    expect(target.messages().at(-1)).toMatchObject({ type: 2, seq: 1 });

    // The page follows by passing the new shard id: the same connection goes on.
    render("zone-1", opts());
    expect(fake.sockets).toHaveLength(2);
    expect(target.closedByClient).toBeUndefined();
    expect(latest.connection).toBe(conn);
    expect(latest).toMatchObject({ shardId: "zone-1", state: "open" });
    // Any other shard is a new connection.
    render("zone-7", opts());
    expect(fake.sockets).toHaveLength(3);
    expect(target.closedByClient).toBeDefined();
    expect(fake.last().url).toBe("ws://127.0.0.1:4321/shard/zone-7");
    expect(latest).toMatchObject({ shardId: "zone-7", transfers: 0 });
  });

  it("reports a refused ticket", () => {
    render("arena-1", opts({ ticket: "bad" }));
    act(() => {
      fake.last().accept();
      fake.last().serverClose(4001, "bad signature");
    });
    expect(latest.state).toBe("closed");
    expect(latest.error?.message).toMatch(/refused the ticket.*4001 ticket_invalid: bad signature/);
  });
});
