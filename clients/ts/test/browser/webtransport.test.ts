// WebTransport in headless Chromium (playwright-core, /usr/bin/chromium or
// $CHROMIUM_PATH) against the real `tessera dev` serving a scratch arena:
// the page asks GET /webtransport for the URL and the development
// certificate's hash, opens `new WebTransport(url, {serverCertificateHashes})`
// to /shard/arena-1, sends HELLO with a dev ticket on its first
// bidirectional stream (varint-length-prefixed protocol-v1 messages), gets
// WELCOME there, whole-tick FRAMEs as datagrams (tick, count, index,
// chunk: reassembled here), sends an INPUT and sees its ACK, and a FRAME
// whose last_seq says it was applied. Then the closes: an invalid ticket
// gets CLOSE [22, 4001, ...] on the stream and the session's closeCode
// 4001; a SIGTERM gets CLOSE [22, 1001, ...] and the server exits 0. The
// page's own code is below (no SDK transport yet).
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, TesseraServer } from "../helpers/tessera-server.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const MSGPACK = join(REPO, "clients/ts/node_modules/@msgpack/msgpack/dist.umd/msgpack.min.js");

let server: TesseraServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    TesseraServer.start(),
    chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] }),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  server?.removeApp();
});

interface Seen {
  welcome: unknown[];
  frames: { tick: number; lastSeq: number; chunks: number }[];
  ack: unknown[] | null;
  appliedFrame: { tick: number; lastSeq: number } | null;
  errors: string[];
}

describe("WebTransport", () => {
  it("plays the shard protocol over a session: WELCOME, whole-tick FRAME datagrams, an INPUT's ACK", async () => {
    const info = (await (await fetch(`${server.url}/webtransport`)).json()) as {
      url: string;
      certHashes: { algorithm: string; value: string }[];
    };
    expect(info.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(info.certHashes).toHaveLength(1);
    expect(info.certHashes[0]!.algorithm).toBe("sha-256");
    expect(info.certHashes[0]!.value).toMatch(/^[0-9a-f]{64}$/);
    expect(server.log).toMatch(/webtransport: udp port \d+/);

    const joined = await server.join({ shard: "arena-1", kind: "arena", subscriber: "alice" });
    const page = await browser.newPage();
    // A secure context on the server's origin (http://127.0.0.1 is one).
    await page.goto(`${server.url}/webtransport`);
    await page.addScriptTag({ path: MSGPACK });

    const seen = await page.evaluate(
      async ({ url, hashes, ticket }): Promise<Seen> => {
        const mp = (globalThis as unknown as { MessagePack: { encode(v: unknown): Uint8Array; decode(b: Uint8Array): unknown } })
          .MessagePack;
        const out: Seen = { welcome: [], frames: [], ack: null, appliedFrame: null, errors: [] };
        const varint = (v: number): number[] =>
          v < 64 ? [v] : v < 16384 ? [0x40 | (v >> 8), v & 255] : [0x80 | (v >>> 24), (v >> 16) & 255, (v >> 8) & 255, v & 255];
        const readVarint = (b: Uint8Array, pos: number): [number, number] | null => {
          if (pos >= b.length) return null;
          const n = 1 << (b[pos]! >> 6);
          if (pos + n > b.length) return null;
          let v = b[pos]! & 0x3f;
          for (let i = 1; i < n; i++) v = v * 256 + b[pos + i]!;
          return [v, pos + n];
        };
        const wt = new WebTransport(`${url}/shard/arena-1`, {
          serverCertificateHashes: hashes.map((h) => ({
            algorithm: h.algorithm,
            value: Uint8Array.from(h.value.match(/../g)!.map((x) => parseInt(x, 16))),
          })),
        });
        await wt.ready;
        const bidi = await wt.createBidirectionalStream();
        const writer = bidi.writable.getWriter();
        const send = (msg: unknown) => {
          const body = mp.encode(msg);
          void writer.write(new Uint8Array([...varint(body.length), ...body]));
        };
        const deadline = Date.now() + 20_000;
        let welcomed = () => {};
        const welcome = new Promise<void>((r) => (welcomed = r));
        let acked = () => {};
        const ack = new Promise<void>((r) => (acked = r));
        // Stream messages.
        void (async () => {
          const reader = bidi.readable.getReader();
          let buf = new Uint8Array(0);
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            const joinedBuf = new Uint8Array(buf.length + value.length);
            joinedBuf.set(buf);
            joinedBuf.set(value, buf.length);
            buf = joinedBuf;
            for (;;) {
              const len = readVarint(buf, 0);
              if (!len || len[1] + len[0] > buf.length) break;
              const msg = mp.decode(buf.subarray(len[1], len[1] + len[0])) as unknown[];
              buf = buf.slice(len[1] + len[0]);
              if (msg[0] === 16) {
                out.welcome = msg;
                welcomed();
              } else if (msg[0] === 17) {
                out.ack = msg;
                acked();
              } else if (msg[0] === 19) {
                out.errors.push("a FRAME came on the stream");
              }
            }
          }
        })();
        // Datagrams: whole ticks only.
        let applied = () => {};
        const appliedFrame = new Promise<void>((r) => (applied = r));
        let inputSent = false;
        void (async () => {
          const reader = wt.datagrams.readable.getReader();
          const pending = new Map<number, { count: number; parts: (Uint8Array | undefined)[]; have: number }>();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            const t = readVarint(value, 0);
            const c = t && readVarint(value, t[1]);
            const i = c && readVarint(value, c[1]);
            if (!t || !c || !i) {
              out.errors.push("a datagram without its tick header");
              continue;
            }
            const [tick, count, index] = [t[0], c[0], i[0]];
            let p = pending.get(tick);
            if (!p) pending.set(tick, (p = { count, parts: [], have: 0 }));
            if (!p.parts[index]) p.have++;
            p.parts[index] = value.slice(i[1]);
            if (p.have < p.count) continue;
            pending.delete(tick);
            const size = p.parts.reduce((s, x) => s + x!.length, 0);
            const whole = new Uint8Array(size);
            let at = 0;
            for (const x of p.parts) {
              whole.set(x!, at);
              at += x!.length;
            }
            const frame = mp.decode(whole) as unknown[];
            if (frame[0] !== 19 || frame[1] !== tick) {
              out.errors.push(`datagrams of tick ${tick} made ${JSON.stringify(frame.slice(0, 2))}`);
              continue;
            }
            out.frames.push({ tick, lastSeq: frame[2] as number, chunks: count });
            if (inputSent && (frame[2] as number) >= 1 && !out.appliedFrame) {
              out.appliedFrame = { tick, lastSeq: frame[2] as number };
              applied();
            }
          }
        })();
        const timeout = (what: string) =>
          new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), deadline - Date.now()));
        send([1, 1, ticket]);
        await Promise.race([welcome, timeout("WELCOME")]);
        // A few ticks, then an input.
        while (out.frames.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        send([2, 1, mp.encode({ move_to: { x: 100, y: 80 } }), null]);
        inputSent = true;
        await Promise.race([Promise.all([ack, appliedFrame]), timeout("ACK and an applied FRAME")]);
        wt.close({ closeCode: 0, reason: "done" });
        return out;
      },
      { url: info.url, hashes: info.certHashes, ticket: joined.ticket },
    );

    expect(seen.errors).toEqual([]);
    expect(seen.welcome[1]).toBe("arena-1");
    expect(seen.welcome[2]).toBe("alice");
    expect(seen.welcome[3]).toBe(20); // the arena's tick rate
    expect(seen.frames.length).toBeGreaterThanOrEqual(5);
    const ticks = seen.frames.map((f) => f.tick);
    for (let i = 1; i < ticks.length; i++) expect(ticks[i]!).toBeGreaterThan(ticks[i - 1]!);
    expect(seen.ack).toEqual([17, 1]);
    expect(seen.appliedFrame!.lastSeq).toBe(1);
    await page.close();
    // The server saw the player join and, after the close, leave.
    await expect.poll(() => server.log, { timeout: 5_000 }).toMatch(/alice joined shard arena-1/);
    await expect.poll(() => server.log, { timeout: 5_000 }).toMatch(/alice left shard arena-1/);
  });

  it("says why it closes: CLOSE [22, code, reason] on the stream, then the session's close with the same code", async () => {
    const info = (await (await fetch(`${server.url}/webtransport`)).json()) as {
      url: string;
      certHashes: { algorithm: string; value: string }[];
    };
    const page = await browser.newPage();
    await page.goto(`${server.url}/webtransport`);
    await page.addScriptTag({ path: MSGPACK });
    const seen = await page.evaluate(
      async ({ url, hashes }) => {
        const mp = (globalThis as unknown as { MessagePack: { encode(v: unknown): Uint8Array; decode(b: Uint8Array): unknown } })
          .MessagePack;
        const wt = new WebTransport(`${url}/shard/arena-1`, {
          serverCertificateHashes: hashes.map((h) => ({
            algorithm: h.algorithm,
            value: Uint8Array.from(h.value.match(/../g)!.map((x) => parseInt(x, 16))),
          })),
        });
        await wt.ready;
        const bidi = await wt.createBidirectionalStream();
        const hello = mp.encode([1, 1, "not-a-ticket"]);
        void bidi.writable.getWriter().write(new Uint8Array([hello.length, ...hello]));
        const reader = bidi.readable.getReader();
        let bytes = new Uint8Array(0);
        for (;;) {
          const r = await reader.read().catch(() => ({ done: true, value: undefined }));
          if (r.done || !r.value) break;
          bytes = new Uint8Array([...bytes, ...r.value]);
        }
        const closed = await wt.closed.catch((e: unknown) => ({ error: String(e) }));
        // One message (its length fits one byte).
        return { message: bytes.length > 1 ? (mp.decode(bytes.subarray(1, 1 + bytes[0]!)) as unknown[]) : null, closed };
      },
      { url: info.url, hashes: info.certHashes },
    );
    expect(seen.message?.[0]).toBe(22);
    expect(seen.message?.[1]).toBe(4001);
    expect(String(seen.message?.[2])).toMatch(/ticket/i);
    expect(seen.closed).toMatchObject({ closeCode: 4001 });
    await page.close();
  });

  // Last: it stops the server.
  it("tells a joined player the server is going away (CLOSE 1001) and the server exits cleanly", async () => {
    const info = (await (await fetch(`${server.url}/webtransport`)).json()) as {
      url: string;
      certHashes: { algorithm: string; value: string }[];
    };
    const joined = await server.join({ shard: "arena-1", kind: "arena", subscriber: "bob" });
    const page = await browser.newPage();
    await page.goto(`${server.url}/webtransport`);
    await page.addScriptTag({ path: MSGPACK });
    await page.evaluate(
      async ({ url, hashes, ticket }) => {
        const mp = (globalThis as unknown as { MessagePack: { encode(v: unknown): Uint8Array; decode(b: Uint8Array): unknown } })
          .MessagePack;
        const g = globalThis as unknown as { seen: unknown[][]; closed?: unknown };
        g.seen = [];
        const wt = new WebTransport(`${url}/shard/arena-1`, {
          serverCertificateHashes: hashes.map((h) => ({
            algorithm: h.algorithm,
            value: Uint8Array.from(h.value.match(/../g)!.map((x) => parseInt(x, 16))),
          })),
        });
        void wt.closed.then(
          (c) => (g.closed = c),
          (e: unknown) => (g.closed = { error: String(e) }),
        );
        await wt.ready;
        const bidi = await wt.createBidirectionalStream();
        const hello = mp.encode([1, 1, ticket]);
        // Tickets are longer than 63 bytes: a two-byte length.
        void bidi.writable.getWriter().write(new Uint8Array([0x40 | (hello.length >> 8), hello.length & 255, ...hello]));
        const reader = bidi.readable.getReader();
        let buf = new Uint8Array(0);
        void (async () => {
          for (;;) {
            const r = await reader.read().catch(() => ({ done: true, value: undefined }));
            if (r.done || !r.value) return;
            buf = new Uint8Array([...buf, ...r.value]);
            for (;;) {
              if (buf.length < 1) break;
              const n = 1 << (buf[0]! >> 6);
              if (buf.length < n) break;
              let len = buf[0]! & 0x3f;
              for (let i = 1; i < n; i++) len = len * 256 + buf[i]!;
              if (buf.length < n + len) break;
              g.seen.push(mp.decode(buf.subarray(n, n + len)) as unknown[]);
              buf = buf.slice(n + len);
            }
          }
        })();
      },
      { url: info.url, hashes: info.certHashes, ticket: joined.ticket },
    );
    await page.waitForFunction(() => (globalThis as unknown as { seen: unknown[][] }).seen.some((m) => m[0] === 16));
    expect(await server.stop()).toBe(0);
    await page.waitForFunction(() => (globalThis as unknown as { closed?: unknown }).closed !== undefined);
    const seen = await page.evaluate(() => (globalThis as unknown as { seen: unknown[][] }).seen);
    // What a WebSocket close frame says at a SIGTERM.
    expect(seen.at(-1)).toEqual([22, 1001, "server restarting: reconnect"]);
    await page.close();
  });
});
