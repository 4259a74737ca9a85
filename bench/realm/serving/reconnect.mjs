// bench/realm/serving (b): what a reconnect costs the server and the wire,
// by replay of `missed` versions against a full hydrate of a document of
// about `docBytes`, on the same realm at the same head in the same run.
//
// A seeding client (connectRealm) writes the document (`docBytes` of
// strings under players/seed/) and then `missed` small writes, so the realm
// stands at version v0 + missed. A reconnecting client then connects `reps`
// times each way over the realm protocol itself (the SDK's codec, so that it
// can say what it holds): HELLO with (epoch, v0), answered by RESUME and the
// `missed` COMMITs, which it decodes and applies to the document it held at
// v0; and HELLO with (0, 0), answered by HYDRATE, which it decodes. Each
// reconnect opens a WebSocket, waits until it holds the head, and closes it;
// the tickets are fetched before, so the server's CPU over a batch
// (utime+stime, /proc) divided by `reps` is the reconnect alone.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { TS_CLIENT_DIR } from "../../compare/harness/common.mjs";
import { cpuSeconds } from "../../compare/harness/proc.mjs";
import { clock } from "../../compare/realm/adapters.mjs";

const WS = createRequire(path.join(TS_CLIENT_DIR, "package.json"))("ws");

async function ticketFor(url, kind, key, subscriber) {
  const r = await fetch(`${url}/api/realms/${kind}/${key}/join`, { method: "POST", body: JSON.stringify({ subscriber }) });
  const body = await r.json();
  if (!r.ok) throw new Error(`realm join: ${body.message ?? r.status}`);
  return body.ticket;
}

// One reconnect: resolves with {mode, ms, recv_bytes, recv_messages,
// sent_bytes, version, document} once the client holds `head`.
function reconnectOnce(sdk, wsUrl, ticket, held, head) {
  return new Promise((resolve, reject) => {
    const t0 = clock();
    const ws = new WS(wsUrl, sdk.REALM_SUBPROTOCOL);
    ws.binaryType = "arraybuffer";
    const keys = new sdk.KeyTable();
    let doc = held.document;
    let version = held.version;
    let mode = null;
    let recv = 0;
    let msgs = 0;
    let sent = 0;
    let done = null;
    const timer = setTimeout(() => fail(new Error(`no head ${head} in 30 s (at ${version}, ${mode})`)), 30_000);
    const fail = (e) => {
      clearTimeout(timer);
      ws.terminate();
      reject(e);
    };
    ws.on("open", () => {
      const hello = sdk.encodeRealmClientMessage({
        type: sdk.RealmMessageType.Hello,
        protocol: sdk.REALM_PROTOCOL_VERSION,
        ticket,
        epoch: held.epoch,
        version: held.version,
      });
      sent += hello.byteLength;
      ws.send(hello);
    });
    ws.on("message", (data) => {
      if (done) return;
      recv += data.byteLength;
      msgs++;
      try {
        const m = sdk.decodeRealmServerMessage(new Uint8Array(data));
        if (m.type === sdk.RealmMessageType.Hydrate) {
          mode = "hydrate";
          doc = sdk.applyPatch({}, sdk.decodePatch(m.state, keys));
          version = m.version;
        } else if (m.type === sdk.RealmMessageType.Resume) {
          mode = "resume";
          if (m.from !== held.version) throw new Error(`RESUME from ${m.from}, held ${held.version}`);
        } else if (m.type === sdk.RealmMessageType.Commit) {
          doc = sdk.applyPatch(doc, sdk.decodePatch(m.patch, keys));
          version = m.version;
        } else if (m.type === sdk.RealmMessageType.Ping) {
          ws.send(sdk.encodeRealmClientMessage({ type: sdk.RealmMessageType.Pong, nonce: m.nonce }));
        }
      } catch (e) {
        fail(e);
        return;
      }
      if (mode && version >= head) {
        done = { mode, ms: clock() - t0, recv_bytes: recv, recv_messages: msgs, sent_bytes: sent, version, document: doc };
        ws.close(1000);
      }
    });
    ws.on("close", (code) => {
      clearTimeout(timer);
      if (done) resolve(done);
      else reject(new Error(`closed (${code}) before the head, at ${version}`));
    });
    ws.on("error", () => {});
  });
}

// JSON with sorted keys: documents compared whatever their keys' order.
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

function summary(batch, cpuS) {
  const med = (k) => {
    const v = batch.map((x) => x[k]).sort((a, b) => a - b);
    return v[Math.floor((v.length - 1) / 2)];
  };
  return {
    reps: batch.length,
    mode: [...new Set(batch.map((x) => x.mode))].join(","),
    server_cpu_ms_per_reconnect: (cpuS * 1000) / batch.length,
    recv_bytes: med("recv_bytes"),
    recv_messages: med("recv_messages"),
    sent_bytes: med("sent_bytes"),
    median_ms: med("ms"),
    max_ms: Math.max(...batch.map((x) => x.ms)),
  };
}

/** Runs (b) on realm `kind`/`key` of the tessera server at `url` (process `pid`). */
export async function measureReconnectCost({ url, kind, key, pid, docBytes, missed, reps, log }) {
  const sdk = await import(pathToFileURL(path.join(TS_CLIENT_DIR, "dist/node.js")).href);
  const seed = sdk.connectRealm(url, kind, key, { ticket: () => ticketFor(url, kind, key, "seed"), reconnect: false });
  seed.on("error", () => {});
  try {
    await seed.ready;
    // The document: strings of 4 KiB (one leaf each) under players/seed.
    const chunk = 4096;
    const n = Math.max(1, Math.round(docBytes / chunk));
    let r = 1;
    const text = () => Array.from({ length: chunk }, () => ((r = (r * 48271) % 2147483647) % 36).toString(36)).join("");
    const made = await seed.set(["players", "seed"], { n: 0 }).done;
    if (made.status !== "committed") throw new Error(`seeding: ${JSON.stringify(made)}`);
    const ops = Array.from({ length: n }, (_, i) => ({ op: "set", path: ["players", "seed", `b${i}`], value: text() }));
    const filled = await seed.write(ops).done;
    if (filled.status !== "committed") throw new Error(`seeding: ${JSON.stringify(filled)}`);
    const held = { epoch: seed.epoch, version: seed.version, document: seed.confirmed };
    const documentBytes = Buffer.byteLength(JSON.stringify(held.document));
    let last;
    for (let i = 1; i <= missed; i++) last = seed.set(["players", "seed", "n"], i).done;
    const tail = await last;
    if (tail.status !== "committed") throw new Error(`the ${missed} writes: ${JSON.stringify(tail)}`);
    const head = seed.version;
    if (head !== held.version + missed) throw new Error(`head ${head}, expected ${held.version + missed}`);
    log(`reconnect: document ${documentBytes} B of JSON at version ${held.version}, head ${head}`);

    const wsUrl = `${url.replace(/^http/, "ws")}/realm/${kind}/${key}`;
    const tickets = await Promise.all(Array.from({ length: 2 * reps + 2 }, () => ticketFor(url, kind, key, "reader")));
    const nothing = { epoch: 0, version: 0, document: {} };
    // One of each first, not counted (first-use costs on both sides).
    await reconnectOnce(sdk, wsUrl, tickets.pop(), held, head);
    await reconnectOnce(sdk, wsUrl, tickets.pop(), nothing, head);
    const batch = async (from) => {
      const out = [];
      const c0 = cpuSeconds(pid);
      for (let i = 0; i < reps; i++) out.push(await reconnectOnce(sdk, wsUrl, tickets.pop(), from, head));
      return summary(out, cpuSeconds(pid) - c0);
    };
    const replay = await batch(held);
    const hydrate = await batch(nothing);
    // Both end on the same document.
    const check = await reconnectOnce(sdk, wsUrl, await ticketFor(url, kind, key, "reader"), held, head);
    const full = await reconnectOnce(sdk, wsUrl, await ticketFor(url, kind, key, "reader"), nothing, head);
    const same = canonical(check.document) === canonical(full.document);
    if (!same) throw new Error("the replayed document differs from the hydrated one");
    return { document_json_bytes: documentBytes, missed, from_version: held.version, head, replay, hydrate };
  } finally {
    seed.close();
  }
}
