// Guest sign-in, the app's functions by name, and a join function as the
// connection's ticket source (asked again on every reconnect).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  callFunction,
  ComputeInvokeError,
  connectShard,
  type FetchLike,
  functionUrl,
  signInAsGuest,
} from "../src/index.js";
import { fakeWebSocket } from "./helpers/fake-websocket.js";

type Init = Parameters<FetchLike>[1];

/** A fetch double: `answer(url, init)` gives the status and body of each call. */
function fakeFetch(answer: (url: string, init: Init) => [number, unknown]) {
  const calls: { url: string; init: Init }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, init });
    const [status, body] = answer(url, init);
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return { status, ok: status >= 200 && status < 300, text: async () => text };
  };
  return { fetch, calls };
}

describe("signInAsGuest", () => {
  it("POSTs /api/auth/guest without a token and returns the guest", async () => {
    const { fetch, calls } = fakeFetch(() => [200, { userId: "guest-0011223344556677", token: "v1.g", expires: 1900 }]);
    const guest = await signInAsGuest("ws://127.0.0.1:4321/base/", { fetch });
    expect(guest).toEqual({ userId: "guest-0011223344556677", token: "v1.g", expires: 1900 });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe("http://127.0.0.1:4321/base/api/auth/guest");
    expect(calls[0]!.init.method).toBe("POST");
    expect(calls[0]!.init.headers.Authorization).toBeUndefined();
    expect(JSON.parse(calls[0]!.init.body)).toEqual({});
  });

  it("throws the server's refusal, and BAD_RESPONSE for an answer without a token", async () => {
    const limited = fakeFetch(() => [429, { code: "rate_limited", message: "too many guest sign-ins; try again in 3 s" }]);
    await expect(signInAsGuest("http://h:1", { fetch: limited.fetch })).rejects.toMatchObject({
      status: 429,
      code: "rate_limited",
      message: "too many guest sign-ins; try again in 3 s",
    });
    const off = fakeFetch(() => [404, { code: "not_found", message: "no route /api/auth/guest" }]);
    const err = await signInAsGuest("http://h:1", { fetch: off.fetch }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ComputeInvokeError);
    expect(err).toMatchObject({ status: 404, code: "not_found" });
    const odd = fakeFetch(() => [200, { userId: "guest-1" }]);
    await expect(signInAsGuest("http://h:1", { fetch: odd.fetch })).rejects.toMatchObject({ code: "BAD_RESPONSE" });
  });
});

describe("callFunction", () => {
  it("POSTs the params to /api/functions/<name> with the token and resolves with the JSON result", async () => {
    const { fetch, calls } = fakeFetch(() => [
      200,
      { resultJson: { shardId: "arena-main", subscriberId: "guest-1", ticket: "v1.t" }, fuelUsed: 9, durationUs: 4, flowId: "f" },
    ]);
    const join = await callFunction<{ shardId: string; ticket: string }>("http://h:1", "arena.joinArena", { team: "red" }, {
      token: "v1.g",
      fetch,
    });
    expect(join).toEqual({ shardId: "arena-main", subscriberId: "guest-1", ticket: "v1.t" });
    expect(calls[0]!.url).toBe("http://h:1/api/functions/arena.joinArena");
    expect(calls[0]!.init.headers.Authorization).toBe("Bearer v1.g");
    expect(JSON.parse(calls[0]!.init.body)).toEqual({ params: { team: "red" } });
    // No params: {}.
    await callFunction("http://h:1", "joinArena", undefined, { token: "v1.g", fetch });
    expect(JSON.parse(calls[1]!.init.body)).toEqual({ params: {} });
  });

  it("throws ComputeInvokeError with the server's code: unknown, ambiguous, refused, not JSON", async () => {
    const cases: [number, unknown, string][] = [
      [404, { code: "not_found", message: "FUNCTION_NOT_FOUND: no function \"nope\"" }, "not_found"],
      [400, { code: "BAD_REQUEST", message: "\"join\" is ambiguous: a.join, b.join" }, "BAD_REQUEST"],
      [401, { code: "unauthorized", message: "the bearer token is neither an API token nor a valid ticket" }, "unauthorized"],
      [422, { code: "trap", message: "zone is full" }, "trap"],
      [200, { resultBase64: "AP8=", fuelUsed: 1, durationUs: 1, flowId: "f" }, "BAD_RESPONSE"],
    ];
    for (const [status, body, code] of cases) {
      const { fetch } = fakeFetch(() => [status, body]);
      const err = await callFunction("http://h:1", "join", {}, { token: "t", fetch }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ComputeInvokeError);
      expect(err).toMatchObject({ status, code });
    }
  });

  it("builds the URL from http(s) or ws(s) and percent-encodes the name", async () => {
    expect(functionUrl("wss://games.example/x/", "a b/c")).toBe("https://games.example/x/api/functions/a%20b%2Fc");
    expect(() => functionUrl("ftp://h", "f")).toThrow(/http\(s\)/);
    const { fetch } = fakeFetch(() => [200, {}]);
    await expect(callFunction("http://h", "", {}, { token: "t", fetch })).rejects.toThrow(/function name/);
  });
});

describe("a join function as the ticket", () => {
  let fake: ReturnType<typeof fakeWebSocket>;
  beforeEach(() => {
    fake = fakeWebSocket();
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is called for the first connect, again on every reconnect, and after a refused TRANSFER ticket", async () => {
    let n = 0;
    const { fetch, calls } = fakeFetch((url) => {
      if (url.endsWith("/api/auth/guest")) return [200, { userId: "guest-1", token: "G", expires: 0 }];
      n++;
      return [200, { resultJson: { shardId: "arena-main", subscriberId: "guest-1", ticket: `J${n}` } }];
    });
    const url = "http://127.0.0.1:4321";
    const guest = await signInAsGuest(url, { fetch });
    const join = () => callFunction<{ shardId: string; ticket: string }>(url, "joinArena", {}, { token: guest.token, fetch });
    const first = await join();
    const conn = connectShard(first.shardId, {
      url,
      ticket: async () => (await join()).ticket,
      WebSocket: fake.WebSocket,
      random: () => 0.5,
      pingIntervalMs: 0,
      reconnect: { initialDelayMs: 100 },
    });
    await vi.waitFor(() => expect(fake.sockets).toHaveLength(1));
    fake.last().accept();
    expect(fake.last().messages()[0]).toMatchObject({ type: 1, ticket: "J2" });
    fake.last().welcome();
    expect(conn.state).toBe("open");
    // A dropped connection: the function is called again for the next one.
    fake.last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(100);
    expect(fake.sockets).toHaveLength(2);
    fake.last().accept();
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "J3" });
    // A move: the TRANSFER's ticket first; once that is refused, the function.
    fake.last().welcome();
    fake.last().transfer("arena-2", "T-moved");
    await vi.waitFor(() => expect(fake.sockets).toHaveLength(3));
    fake.last().accept();
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "T-moved" });
    fake.last().serverClose(4002, "ticket expired");
    await vi.waitFor(() => expect(fake.sockets).toHaveLength(4));
    fake.last().accept();
    expect(fake.last().messages()[0]).toMatchObject({ ticket: "J4" });
    // Every call carried the guest's token.
    const functionCalls = calls.filter((c) => c.url.endsWith("/api/functions/joinArena"));
    expect(functionCalls).toHaveLength(4);
    for (const c of functionCalls) expect(c.init.headers.Authorization).toBe("Bearer G");
    conn.close();
  });
});
