import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectShard, type ConnectShardOptions } from "../src/client.js";
import { ComputeInvokeError, type FetchLike, invokeCompute, invokeUrl, type Notification } from "../src/compute.js";
import { fakeWebSocket } from "./helpers/fake-websocket.js";

let fake: ReturnType<typeof fakeWebSocket>;
const utf8 = new TextEncoder();

beforeEach(() => {
  fake = fakeWebSocket();
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function connect(options: Partial<ConnectShardOptions> = {}) {
  return connectShard("arena-1", {
    ticket: "T1",
    url: "http://127.0.0.1:4321",
    WebSocket: fake.WebSocket,
    random: () => 0.5,
    pingIntervalMs: 0,
    ...options,
  });
}

/** A fetch double answering `status` with `body`; records the calls. */
function fakeFetch(status: number, body: unknown) {
  const calls: { url: string; init: Parameters<FetchLike>[1] }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, init });
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return { status, ok: status >= 200 && status < 300, text: async () => text };
  };
  return { fetch, calls };
}

describe("onNotify", () => {
  it("hands every NOTIFY to the handlers, with the JSON parsed when it is JSON", () => {
    const conn = connect();
    const ws = fake.last();
    ws.acceptAndWelcome();
    const got: Notification[] = [];
    const off = conn.onNotify((n) => got.push(n));
    ws.push({ type: 21, module: "weather", channel: "kind:zone", payload: utf8.encode('{"rain":true}'), flowId: "f-1" });
    ws.push({ type: 21, module: "weather", channel: "spatial:z1", payload: new Uint8Array([0xff, 0x00]), flowId: "f-2" });
    ws.push({ type: 21, module: "m", channel: "all", payload: utf8.encode("not json"), flowId: "f-3" });
    expect(got).toHaveLength(3);
    expect(got[0]).toEqual({
      module: "weather",
      channel: "kind:zone",
      payload: utf8.encode('{"rain":true}'),
      json: { rain: true },
      flowId: "f-1",
    });
    expect(got[1]).toEqual({ module: "weather", channel: "spatial:z1", payload: new Uint8Array([0xff, 0x00]), flowId: "f-2" });
    expect("json" in got[1]!).toBe(false);
    expect("json" in got[2]!).toBe(false);
    off();
    ws.push({ type: 21, module: "m", channel: "all", payload: utf8.encode("1"), flowId: "f-4" });
    expect(got).toHaveLength(3);
    // The "notify" event is the same stream.
    const viaOn: string[] = [];
    conn.on("notify", (n) => viaOn.push(n.flowId));
    ws.push({ type: 21, module: "m", channel: "all", payload: utf8.encode("1"), flowId: "f-5" });
    expect(viaOn).toEqual(["f-5"]);
    expect(conn.state).toBe("open");
  });

  it("ignores a NOTIFY before WELCOME", () => {
    const conn = connect();
    const ws = fake.last();
    ws.accept();
    const got: Notification[] = [];
    conn.onNotify((n) => got.push(n));
    ws.push({ type: 21, module: "m", channel: "all", payload: utf8.encode("1"), flowId: "f" });
    expect(got).toEqual([]);
  });
});

describe("invoke", () => {
  it("POSTs the params with the current ticket and returns the parsed result", async () => {
    vi.useRealTimers();
    const { fetch, calls } = fakeFetch(200, { resultJson: { gold: 90 }, fuelUsed: 1234, durationUs: 56, flowId: "f-9" });
    const conn = connect({ url: "https://games.example.com/base/", fetch });
    fake.last().acceptAndWelcome();
    const out = await conn.invoke("shop", "buy", { amount: 10 });
    expect(out).toEqual({ result: { gold: 90 }, fuelUsed: 1234, durationUs: 56, flowId: "f-9" });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe("https://games.example.com/base/api/compute/modules/shop/invoke/buy");
    expect(calls[0]!.init.method).toBe("POST");
    expect(calls[0]!.init.headers.Authorization).toBe("Bearer T1");
    expect(JSON.parse(calls[0]!.init.body)).toEqual({ params: { amount: 10 } });
    // An explicit token wins.
    await conn.invoke("shop", "buy", {}, { token: "manage-tok" });
    expect(calls[1]!.init.headers.Authorization).toBe("Bearer manage-tok");
    conn.close();
  });

  it("uses the ticket the last HELLO carried (a fresh one from the ticket function)", async () => {
    vi.useRealTimers();
    let n = 0;
    const { fetch, calls } = fakeFetch(200, { resultJson: 1, fuelUsed: 0, durationUs: 0, flowId: "" });
    const conn = connect({ ticket: async () => `T${++n}`, fetch, reconnect: false });
    await vi.waitFor(() => expect(fake.sockets).toHaveLength(1));
    fake.last().acceptAndWelcome();
    expect(fake.last().messages()[0]).toMatchObject({ type: 1, ticket: "T1" });
    await conn.invoke("m", "e");
    // The HELLO's ticket; the ticket function is not asked again.
    expect(calls[0]!.init.headers.Authorization).toBe("Bearer T1");
    expect(n).toBe(1);
    expect(JSON.parse(calls[0]!.init.body)).toEqual({ params: {} });
    conn.close();
  });

  it("decodes a base64 result to bytes", async () => {
    const { fetch } = fakeFetch(200, { resultBase64: "AP8=", fuelUsed: 5, durationUs: 2, flowId: "f" });
    const out = await invokeCompute("m", "e", null, { url: "http://h:1", token: "t", fetch });
    expect(out.result).toEqual(new Uint8Array([0x00, 0xff]));
  });

  it("throws a ComputeInvokeError with the server's code and message", async () => {
    const cases: [number, unknown, string, string][] = [
      [400, { code: "BAD_REQUEST", message: "params.amount: expected int, got string" }, "BAD_REQUEST", "params.amount: expected int, got string"],
      [403, { code: "FORBIDDEN", message: "not allowed" }, "FORBIDDEN", "not allowed"],
      [422, { code: "RUN_FAILED", message: "out of gold" }, "RUN_FAILED", "out of gold"],
      [502, "<html>bad gateway</html>", "HTTP_502", "<html>bad gateway</html>"],
    ];
    for (const [status, body, code, message] of cases) {
      const { fetch } = fakeFetch(status, body);
      const err = await invokeCompute("m", "e", {}, { url: "http://h:1", token: "t", fetch }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ComputeInvokeError);
      expect(err).toMatchObject({ status, code, message });
    }
    const { fetch } = fakeFetch(200, "not json");
    await expect(invokeCompute("m", "e", {}, { url: "http://h:1", token: "t", fetch })).rejects.toMatchObject({
      code: "BAD_RESPONSE",
    });
    const failing: FetchLike = async () => {
      throw new Error("connection refused");
    };
    await expect(invokeCompute("m", "e", {}, { url: "http://h:1", token: "t", fetch: failing })).rejects.toMatchObject({
      code: "NETWORK",
      status: 0,
    });
  });

  it("builds the export URL from http(s) or ws(s) and percent-encodes the names", () => {
    expect(invokeUrl("ws://h:2", "a b", "x/y")).toBe("http://h:2/api/compute/modules/a%20b/invoke/x%2Fy");
    expect(invokeUrl("wss://h", "m", "e")).toBe("https://h/api/compute/modules/m/invoke/e");
    expect(() => invokeUrl("ftp://h", "m", "e")).toThrow(/http\(s\)/);
    expect(() => invokeUrl("/rel", "m", "e")).toThrow(/absolute/);
  });

  it("needs a module and an export", async () => {
    const { fetch } = fakeFetch(200, {});
    await expect(invokeCompute("", "e", {}, { url: "http://h", token: "t", fetch })).rejects.toThrow(/module/);
    await expect(invokeCompute("m", "", {}, { url: "http://h", token: "t", fetch })).rejects.toThrow(/export/);
  });
});
