// The thin adapters of bench/compare/realm (and bench/realm/serving): how one
// bot joins the shared document, writes its own subtree and hears the
// other bots' writes, with tessera's own client (connectRealm,
// @tessera/client) and with Hocuspocus's (@hocuspocus/provider over Yjs),
// plus a plain `ws` relay (the loopback floor of bench/realm/serving). The
// bot logic (worker.mjs, and the reconnect in run.mjs) is shared.
//
// The document, the same in each: a root map "players" holding one map per
// bot, keyed by its id, with the fields {x, y, seq, t}. A bot writes all
// four fields at once, as one write: in tessera one WRITE of four `set` ops
// on players/<id>/<field> (the realm kind's rule `players/{avatar}/**`
// gives each avatar its own subtree), in Yjs one transaction setting four
// keys of the bot's Y.Map. `t` is the send time on the machine's clock
// (performance.timeOrigin + performance.now(), the same clock in every
// process), so every other client can take the write's latency.
//
// adapter.connect(id, hooks, {decode}) resolves once the bot holds the document
// (tessera: HYDRATE/RESUME; Hocuspocus: synced) with a handle:
//   write(fields)   fields {x, y, seq, t}; returns a promise of
//                   "committed" | "rejected: ..." | other outcome, or null
//                   where the server does not answer writes (Yjs)
//   flushed()       resolves once every write so far is acknowledged
//   pause()         drops the connection and stays away until resume()
//   resume()        connects again with what it holds (tessera: HELLO with
//                   its epoch and version, answered by RESUME and the missed
//                   commits; Hocuspocus: y-protocols sync step 1 with its
//                   state vector, answered by step 2 with what is missing)
//   close()
// and calls hooks.onRemote(from, seq, t) for each other bot's write it
// receives, hooks.onRecv(bytes), hooks.onSend(bytes), hooks.onClose(code).
//
// decode: false makes a bot that receives and counts every message but
// drops the other bots' writes before its client library sees them
// (tessera: COMMITs without a seq, and the entries without a seq of a
// COMMITS; Hocuspocus: relayed Yjs updates);
// everything else (HELLO, HYDRATE, ACKs, sync steps, SyncStatus, pings, its
// own writes) goes through the library. The servers do the same work either
// way (they send every write to every client); see worker.mjs ("observers").
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { observe, TS_CLIENT_DIR } from "../harness/common.mjs";

const here = path.dirname(new URL(import.meta.url).pathname);
/** The clock of every stamp and receipt, ms: the same in every process of the machine. */
export const clock = () => performance.timeOrigin + performance.now();

/**
 * A `ws` class (from `dir`'s node_modules) whose sockets count their bytes
 * into `hooks`. With `drop(data)`, the messages it returns true for are
 * counted but never reach the client library (its onmessage or "message"
 * event listeners added with addEventListener); when it returns bytes, the
 * library gets those instead (what is left of the message once the other
 * bots' writes are dropped); false passes the message as it is.
 */
function countingWebSocket(dir, hooks, drop = null) {
  const WS = createRequire(path.join(dir, "package.json"))("ws");
  const filtered = (fn) => (ev) => {
    const kept = drop(ev.data);
    if (kept === true) return;
    fn(kept === false ? ev : { type: ev.type, data: kept, target: ev.target });
  };
  return class CountingWebSocket extends WS {
    constructor(url, protocols) {
      super(url, protocols);
      observe(this, hooks);
    }
    get onmessage() {
      return super.onmessage;
    }
    set onmessage(fn) {
      super.onmessage = drop && typeof fn === "function" ? filtered(fn) : fn;
    }
    addEventListener(type, fn, options) {
      if (drop && type === "message" && typeof fn === "function") {
        return super.addEventListener(type, filtered(fn), options);
      }
      return super.addEventListener(type, fn, options);
    }
  };
}

const bytesOf = (data) => (data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength));

// tessera: a COMMIT of another writer, [18, version, patch] (a fixarray of
// 3; a COMMIT of one's own sliced write has a 4th element, the seq): true.
// A COMMITS, [21, [[version, patch | nil, seq?], ...]]: the entries with a
// seq (the bot's own writes) as a COMMITS of their own, or true if none.
const othersCommits = (data) => {
  const b = bytesOf(data);
  if (b.length >= 2 && b[0] === 0x93 && b[1] === 18) return true;
  if (b.length < 3 || b[0] !== 0x92 || b[1] !== 21) return false;
  let i = 2;
  const count = (fix, b16) => {
    const h = b[i++];
    if ((h & 0xf0) === fix) return h & 0x0f;
    const n = h === b16 ? (b[i] << 8) | b[i + 1] : ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
    i += h === b16 ? 2 : 4;
    return n;
  };
  const skipUint = () => (i += b[i] < 0x80 ? 1 : { 0xcc: 2, 0xcd: 3, 0xce: 5, 0xcf: 9 }[b[i]]);
  const skipPatch = () => {
    const h = b[i++];
    if (h === 0xc4) i += 1 + b[i];
    else if (h === 0xc5) i += 2 + ((b[i] << 8) | b[i + 1]);
    else if (h === 0xc6) i += 4 + (((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0);
  };
  const entries = count(0x90, 0xdc);
  const kept = [];
  for (let k = 0; k < entries; k++) {
    const start = i;
    const n = count(0x90, 0xdc); // the server writes 2 or 3 elements
    skipUint();
    skipPatch();
    if (n >= 3) {
      skipUint();
      kept.push(b.subarray(start, i));
    }
  }
  if (kept.length === 0) return true;
  const head = kept.length < 16 ? [0x92, 21, 0x90 | kept.length] : [0x92, 21, 0xdc, kept.length >> 8, kept.length & 0xff];
  const out = new Uint8Array(head.length + kept.reduce((n, e) => n + e.length, 0));
  out.set(head);
  let at = head.length;
  for (const e of kept) {
    out.set(e, at);
    at += e.length;
  }
  return out;
};

// A lib0 varUint at b[i]: [value, next index].
function varUint(b, i) {
  let v = 0;
  let shift = 0;
  while (i < b.length) {
    const c = b[i++];
    v += (c & 0x7f) * 2 ** shift;
    if (c < 0x80) return [v, i];
    shift += 7;
  }
  return [NaN, i];
}

// Hocuspocus: a Yjs update relayed from another client, [docName: varString,
// MessageType.Sync = 0: varUint, messageYjsUpdate = 2: varUint, update].
const isRelayedUpdate = (data) => {
  const b = bytesOf(data);
  const [len, i] = varUint(b, 0);
  const [type, j] = varUint(b, i + len);
  const [sync] = varUint(b, j);
  return type === 0 && sync === 2;
};

// The next `event` of a Hocuspocus emitter (which has on/off, no once).
function nextEvent(emitter, event) {
  return new Promise((resolve) => {
    const on = (arg) => {
      emitter.off(event, on);
      resolve(arg);
    };
    emitter.on(event, on);
  });
}

// A promise with its resolve.
function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

// tessera: a ticket from POST /api/realms/<kind>/<key>/join, then
// connectRealm. pause() takes the next ticket at once and holds it back
// from the client's ticket function until resume(), so a resume is only
// the reconnect itself.
export async function tesseraRealmAdapter({ url, kind, key }) {
  const client = await import(pathToFileURL(path.join(TS_CLIENT_DIR, "dist/node.js")).href);
  const ticketFor = async (subscriber) => {
    const r = await fetch(`${url}/api/realms/${kind}/${key}/join`, { method: "POST", body: JSON.stringify({ subscriber }) });
    const body = await r.json();
    if (!r.ok) throw new Error(`realm join: ${body.message ?? r.status}`);
    return body.ticket;
  };
  return {
    name: "tessera",
    async connect(id, hooks, { decode = true } = {}) {
      let gate = null; // while paused: {promise, resolve} of the held ticket
      const conn = client.connectRealm(url, kind, key, {
        ticket: async () => (gate ? gate.promise : ticketFor(id)),
        WebSocket: countingWebSocket(TS_CLIENT_DIR, hooks, decode ? null : othersCommits),
        reconnect: false, // a drop is a result to report, not to hide
      });
      conn.on("commit", (c) => {
        if (c.own) return;
        for (const op of c.ops) {
          if (op.op === "set" && op.path.length === 3 && op.path[0] === "players" && op.path[2] === "t") {
            const seqOp = c.ops.find((o) => o.path.length === 3 && o.path[1] === op.path[1] && o.path[2] === "seq");
            hooks.onRemote(op.path[1], seqOp?.value, op.value);
          }
        }
      });
      conn.on("close", (c) => {
        if (!gate) hooks.onClose(c.code, c.reason);
      });
      conn.on("error", () => {}); // the close reports it
      await conn.ready;
      // The bot's own subtree, once.
      const made = await conn.set(["players", id], { x: 0, y: 0, seq: 0, t: 0 }).done;
      if (made.status !== "committed") throw new Error(`creating players/${id}: ${JSON.stringify(made)}`);
      let last = Promise.resolve();
      const outcome = (o) => (o.status === "rejected" ? `rejected: ${o.code}` : o.status);
      return {
        write({ x, y, seq, t }) {
          const w = conn.write((d) => d.set(["players", id, "x"], x).set(["players", id, "y"], y).set(["players", id, "seq"], seq).set(["players", id, "t"], t));
          last = w.done;
          return w.done.then(outcome);
        },
        flushed: () => last.then(() => {}),
        async pause() {
          gate = deferred();
          const ticket = await ticketFor(id);
          const held = gate;
          held.release = () => held.resolve(ticket);
          const opened = new Promise((r) => {
            const off = conn.on("open", (at) => {
              off();
              r(at);
            });
          });
          held.opened = opened;
          conn.reconnect(); // closes the socket; the new one waits for the ticket
        },
        resume() {
          const held = gate;
          gate = null;
          held.release();
          return held.opened; // {mode: "resume" | "hydrate", ...}
        },
        version: () => conn.version,
        close: () => conn.close(),
      };
    },
  };
}

// Hocuspocus: a HocuspocusProvider (its own socket, a `ws` of this folder)
// on the document `docName`, without awareness (the document is the
// presence here, as in tessera).
export async function hocuspocusAdapter({ url, docName }) {
  const { HocuspocusProvider } = await import("@hocuspocus/provider");
  const Y = await import("yjs");
  return {
    name: "hocuspocus",
    async connect(id, hooks, { decode = true } = {}) {
      const doc = new Y.Doc();
      let paused = false;
      const synced = deferred();
      const provider = new HocuspocusProvider({
        url: url.replace(/^http/, "ws"),
        name: docName,
        document: doc,
        awareness: null,
        WebSocketPolyfill: countingWebSocket(here, hooks, decode ? null : isRelayedUpdate),
        onSynced: () => synced.resolve(),
        onClose: ({ event }) => {
          if (!paused) hooks.onClose(event?.code ?? 0, event?.reason ?? "");
        },
      });
      const players = doc.getMap("players");
      players.observeDeep((events, tr) => {
        if (tr.local) return;
        for (const ev of events) {
          if (ev.target !== players && ev.keysChanged?.has("t")) {
            hooks.onRemote(ev.path[0], ev.target.get("seq"), ev.target.get("t"));
          }
        }
      });
      await synced.promise;
      const mine = new Y.Map();
      doc.transact(() => {
        players.set(id, mine);
        mine.set("x", 0);
        mine.set("y", 0);
        mine.set("seq", 0);
        mine.set("t", 0);
      });
      // Acknowledged: Hocuspocus answers each update with a SyncStatus message.
      const flushed = () =>
        new Promise((resolve) => {
          if (provider.unsyncedChanges === 0) return resolve();
          const on = ({ number }) => {
            if (number === 0) {
              provider.off("unsyncedChanges", on);
              resolve();
            }
          };
          provider.on("unsyncedChanges", on);
        });
      await flushed();
      return {
        write({ x, y, seq, t }) {
          doc.transact(() => {
            mine.set("x", x);
            mine.set("y", y);
            mine.set("seq", seq);
            mine.set("t", t);
          });
          return null;
        },
        flushed,
        async pause() {
          paused = true;
          const closed = nextEvent(provider, "disconnect");
          provider.disconnect();
          await closed;
        },
        resume() {
          paused = false;
          const again = nextEvent(provider, "synced");
          void provider.connect();
          return again.then(() => ({ mode: "sync" }));
        },
        close: () => provider.destroy(),
      };
    },
  };
}

// The loopback floor (bench/realm/serving): a `ws` client of the plain
// relay in ../../realm/serving/relay.mjs. A write is one JSON text message
// {from, x, y, seq, t}, which the relay sends to every other client as it
// is; nothing is merged, stored or acknowledged.
export async function wsRelayAdapter({ url }) {
  return {
    name: "ws-relay",
    async connect(id, hooks, { decode = true } = {}) {
      const WS = countingWebSocket(TS_CLIENT_DIR, hooks);
      const ws = new WS(url.replace(/^http/, "ws"));
      ws.on("message", (data) => {
        if (!decode) return;
        const m = JSON.parse(data.toString());
        hooks.onRemote(m.from, m.seq, m.t);
      });
      ws.on("close", (code, reason) => hooks.onClose(code, reason.toString()));
      await new Promise((resolve, reject) => {
        ws.once("open", resolve);
        ws.once("error", reject);
      });
      return {
        write({ x, y, seq, t }) {
          ws.send(JSON.stringify({ from: id, x, y, seq, t }));
          return null;
        },
        flushed: () => Promise.resolve(),
        pause: () => Promise.reject(new Error("the relay has no reconnect")),
        resume: () => Promise.reject(new Error("the relay has no reconnect")),
        close: () => ws.close(),
      };
    },
  };
}

export async function makeRealmAdapter(config) {
  if (config.server === "tessera") return tesseraRealmAdapter(config);
  if (config.server === "hocuspocus") return hocuspocusAdapter(config);
  if (config.server === "ws-relay") return wsRelayAdapter(config);
  throw new Error(`unknown server ${config.server}`);
}
