// bench/compare/realm: one shared document with presence, on a tessera realm
// and on Hocuspocus (Yjs), under the same bots. See ../README.md ("Realms:
// tessera vs Hocuspocus") for the method.
//
//   node run.mjs [--servers tessera,tessera-ephemeral,tessera-unbatched,hocuspocus]
//                [--clients 100] [--observers 10|all] [--rate 5] [--duration 20] [--warmup 3]
//                [--ramp SECS] [--bots-per-worker 50] [--missed 100]
//                [--reconnects 5] [--seed 1] [--priority NICE]
//                [--tessera-bin PATH] [--out DIR] [--quick]
//
// For each server in turn: start it (tessera: `tessera dev` on a scratch
// copy of app/, realm kind "doc" (durable, batchMs 16), for
// tessera-ephemeral "presence" (batchMs 16), for tessera-unbatched
// "doc-unbatched" (durable, batchMs 0: every group commit sent at once); Hocuspocus: node hocuspocus.mjs), start the bot processes
// (worker.mjs), ramp the joins, let every bot write `rate` times a second
// for `warmup` seconds and then `duration` seconds measured: the server's
// utime+stime (/proc/<pid>/stat, descendants included) over the window
// divided by the writes sent in it, the write -> other clients latency of
// every write sent in it, as every other client received it, the WebSocket
// payload bytes each client received, and the server's VmRSS at the end.
// The latencies come from `observers` of the clients, which decode every
// message; the others receive and count everything but drop the other
// clients' writes before their library decodes them (worker.mjs).
// Then, with the bots connected and quiet, the reconnect: a client holding
// the document disconnects, another writes `missed` times (tessera:
// `missed` versions; Yjs: `missed` updates), and the first reconnects with
// what it holds; its bytes and the time until it holds the last write,
// `reconnects` times. Writes OUT/results.json and OUT/RESULTS.md (OUT:
// this folder, or a scratch folder with --quick unless --out is given).
//
// --quick: 5 clients for 3 s, 2 reconnects; exits 1 unless every run
// joined its clients, delivered every write to every other client, had no
// write refused or lost connection, and every reconnect caught up.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import {
  enterPriority,
  freePort,
  gitFacts,
  logger,
  machineFacts,
  percentile,
  readVersion,
  ROOT,
  setPriority,
  sleep,
  startProcess,
  stopProcess,
  TS_CLIENT_DIR,
  tesseraVersion,
} from "../harness/common.mjs";
import { cpuSeconds, loadAverage } from "../harness/proc.mjs";
import { clock, makeRealmAdapter } from "./adapters.mjs";
import { measureWindow, startFleet, stopFleet } from "../harness/fleet.mjs";
import { renderMarkdown } from "./report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const GRACE_MS = 2000; // after the window, for the last deliveries
const SERVERS = ["tessera", "tessera-ephemeral", "tessera-unbatched", "hocuspocus"];
const log = logger("compare-realm");

function parseArgs(argv) {
  const o = {
    servers: SERVERS,
    clients: 100,
    observers: 10,
    rate: 5,
    duration: 20,
    warmup: 3,
    ramp: null,
    botsPerWorker: 50,
    missed: 100,
    reconnects: 5,
    seed: 1,
    priority: 0,
    tesseraBin: process.env.TESSERA_BIN || path.join(ROOT, "build/src/cli/tessera"),
    out: null,
    quick: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    const num = () => {
      const n = Number(v());
      if (!Number.isFinite(n) || n < 0) usage(`${a} needs a number`);
      return n;
    };
    if (a === "--servers") o.servers = v().split(",");
    else if (a === "--clients") o.clients = num();
    else if (a === "--observers") {
      const x = v();
      o.observers = x === "all" ? Infinity : Number(x);
      if (!(o.observers >= 1)) usage("--observers is a count >= 1 or all");
    }
    else if (a === "--rate") o.rate = num();
    else if (a === "--duration") o.duration = num();
    else if (a === "--warmup") o.warmup = num();
    else if (a === "--ramp") o.ramp = num();
    else if (a === "--bots-per-worker") o.botsPerWorker = num();
    else if (a === "--missed") o.missed = num();
    else if (a === "--reconnects") o.reconnects = num();
    else if (a === "--seed") o.seed = num();
    else if (a === "--priority") o.priority = Number(v());
    else if (a === "--tessera-bin") o.tesseraBin = v();
    else if (a === "--out") o.out = v();
    else if (a === "--quick") o.quick = true;
    else if (a === "--help" || a === "-h") usage("");
    else usage(`unknown argument ${a}`);
  }
  if (o.quick) {
    o.clients = 5;
    o.observers = Math.min(o.observers, 5);
    o.duration = 3;
    o.warmup = 1;
    o.reconnects = 2;
  }
  for (const s of o.servers) if (!SERVERS.includes(s)) usage(`unknown server ${s}`);
  if (!(o.rate > 0) || !(o.clients >= 2)) usage("--rate must be positive and --clients at least 2");
  if (!Number.isInteger(o.priority) || o.priority < -20 || o.priority > 19) usage("--priority is a nice value, -20..19");
  return o;
}

function usage(error) {
  if (error) console.error(`compare-realm: ${error}`);
  console.error(
    "usage: node run.mjs [--servers tessera,tessera-ephemeral,tessera-unbatched,hocuspocus] [--clients 100] [--rate 5] " +
      "[--duration 20] [--warmup 3] [--ramp SECS] [--bots-per-worker 50] [--missed 100] [--reconnects 5] " +
      "[--seed 1] [--priority NICE] [--tessera-bin PATH] [--out DIR] [--quick]",
  );
  process.exit(2);
}

/** `tessera dev` on a fresh scratch copy of `appDir`; resolves with {url, child, pid, stop, dir}. */
export async function startTesseraDev(bin, appDir, args = []) {
  if (!fs.existsSync(bin)) throw new Error(`no tessera binary at ${bin} (make build, or --tessera-bin / TESSERA_BIN)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-realm-"));
  fs.copyFileSync(path.join(appDir, "tessera.json"), path.join(dir, "tessera.json"));
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TESSERA_")) env[k] = v;
  const p = await startProcess(
    bin,
    ["dev", dir, "--port", "0", "--host", "127.0.0.1", ...args],
    { cwd: ROOT, env },
    /tessera dev: \S+ on (http:\/\/[\d.]+:\d+)/,
    120_000,
    "tessera dev",
  );
  return {
    url: p.match[1],
    child: p.child,
    pid: p.child.pid,
    dir,
    output: p.output,
    stop: async () => {
      await stopProcess(p.child, "SIGINT", 20000);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startServer(o, name) {
  if (name === "hocuspocus") {
    if (!fs.existsSync(path.join(here, "node_modules/@hocuspocus/server"))) {
      throw new Error(`no node_modules in ${here} (npm ci there, or make compare-realm)`);
    }
    const port = await freePort();
    const p = await startProcess(
      process.execPath,
      [path.join(here, "hocuspocus.mjs"), "--port", String(port)],
      { cwd: here, env: { ...process.env, NODE_ENV: "production" } },
      /hocuspocus: listening on (\S+)/,
      60_000,
      "hocuspocus",
    );
    return {
      pid: p.child.pid,
      config: { server: "hocuspocus", url: `http://${p.match[1]}`, docName: "bench" },
      stop: () => stopProcess(p.child, "SIGTERM", 20000),
    };
  }
  const t = await startTesseraDev(o.tesseraBin, path.join(here, "app"));
  const kind = { tessera: "doc", "tessera-ephemeral": "presence", "tessera-unbatched": "doc-unbatched" }[name];
  return { pid: t.pid, config: { server: "tessera", url: t.url, kind, key: `bench-${Date.now()}` }, stop: t.stop };
}

/**
 * Forks the bot processes for `n` clients against `config`, waits for the
 * joins, runs the window and returns the merged figures. Shared with
 * bench/realm/serving. `pid`: the server process sampled (null: none).
 * `afterWindow`: an async function run after the window with the clients
 * still connected (and quiet); its result is the figures' `after`.
 */
export async function runLoad({ config, n, observers, rate, warmup, duration, ramp, botsPerWorker, seed, priority, pid, name, afterWindow }) {
  observers = Math.min(n, observers ?? n);
  const fleet = {};
  try {
    await startFleet({
      worker: path.join(here, "worker.mjs"),
      n,
      botsPerWorker,
      rampMs: (ramp ?? Math.max(2, n / 100)) * 1000,
      priority,
      log,
      name,
      config: (bots) => ({ ...config, bots, rate, seed, observers }),
      serialization: "advanced",
      out: fleet,
    });
    const { nWorkers } = fleet;
    const { ok: joinedOk, failed: joinFailed, errors: joinErrors } = fleet.joined;
    // The bots' latencies are on the shared clock (adapters.mjs).
    const offset = clock() - Date.now();
    const m = await measureWindow(fleet, {
      pid,
      warmupS: warmup,
      durationS: duration,
      graceMs: GRACE_MS,
      extra: (start, end) => ({ clockStart: start + offset, clockEnd: end + offset }),
      log,
      name,
    });
    const { s0, rss, peakRss, windowS, serverCpu, workerCpu, controllerCpu, reports, stats: st } = m;
    const sum = (k) => st.reduce((a, s) => a + s[k], 0);
    const all = new Float64Array(reports.reduce((a, r) => a + r.latency.length, 0));
    let off = 0;
    for (const r of reports) {
      all.set(r.latency, off);
      off += r.latency.length;
    }
    all.sort();
    const outcomes = {};
    const closeCodes = {};
    for (const s of st) {
      for (const [k, c] of Object.entries(s.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + c;
      for (const [k, c] of Object.entries(s.closeCodes)) closeCodes[k] = (closeCodes[k] ?? 0) + c;
    }
    const writes = sum("sent");
    const byObservers = sum("sentByObservers");
    const writeErrors = {};
    for (const s of st) for (const [k, c] of Object.entries(s.writeErrors)) writeErrors[k] = (writeErrors[k] ?? 0) + c;
    const botWindowS = st.reduce((a, s) => a + s.windowMs, 0) / st.length / 1000;
    const pick = (q) => percentile(all, q);
    const after = afterWindow ? await afterWindow() : undefined;
    return {
      after,
      clients: n,
      rate,
      duration_s: duration,
      window_s: windowS,
      joined: joinedOk,
      join_failed: joinFailed,
      join_errors: joinErrors,
      writes,
      write_outcomes: outcomes,
      deliveries: sum("received"),
      observers,
      // Each write goes to every observer but its writer.
      deliveries_expected: byObservers * (observers - 1) + (writes - byObservers) * observers,
      write_errors: writeErrors,
      server_cpu_s: serverCpu,
      server_cpu_user_s: m.serverUser,
      server_cpu_system_s: m.serverSystem,
      server_cpu_us_per_write: (serverCpu * 1e6) / writes,
      server_cpu_share_of_one_core: serverCpu / windowS,
      server_rss_end_bytes: rss,
      server_peak_rss_bytes: peakRss,
      latency_ms: { count: all.length, p50: pick(50), p90: pick(90), p99: pick(99), max: all.length ? all[all.length - 1] : null },
      recv_bytes_per_client: sum("recvBytes") / joinedOk,
      recv_bytes_per_client_s: sum("recvBytes") / joinedOk / botWindowS,
      recv_messages_per_client_s: sum("recvMessages") / joinedOk / botWindowS,
      sent_bytes_per_client_s: sum("sendBytes") / joinedOk / botWindowS,
      connections_lost: sum("closes"),
      close_codes: closeCodes,
      harness: {
        processes: nWorkers,
        cpu_s: workerCpu.reduce((a, b) => a + b, 0) + controllerCpu,
        busiest_process_core_share: Math.max(...workerCpu) / windowS,
        event_loop_delay_p99_ms: Math.max(...st.map((s) => s.loopDelay?.p99 ?? 0)),
      },
      machine: {
        busy_share: m.machineBusy,
        load_at_start: s0.load,
      },
    };
  } finally {
    await stopFleet(fleet);
  }
}

/**
 * The reconnect after missing `missed` writes, `reps` times, on one
 * connection: pause it, let another client write `missed` times and wait
 * for their acknowledgements, then resume and time it until it holds the
 * last one. Bytes: WebSocket payloads of the reconnecting client from the
 * resume to then.
 */
async function measureReconnects(config, missed, reps) {
  const adapter = await makeRealmAdapter(config);
  const count = { recv: 0, sent: 0, msgs: 0, on: false };
  let waiting = null; // {seq, resolve}
  const quiet = { onRecv() {}, onSend() {}, onRemote() {}, onClose() {} };
  const writer = await adapter.connect("reconnect-writer", quiet);
  const reader = await adapter.connect("reconnect-reader", {
    onRecv: (n) => {
      if (count.on) {
        count.recv += n;
        count.msgs++;
      }
    },
    onSend: (n) => {
      if (count.on) count.sent += n;
    },
    onRemote: (from, seq) => {
      if (waiting && from === "reconnect-writer" && seq >= waiting.seq) waiting.resolve(clock());
    },
    onClose() {},
  });
  const out = [];
  let seq = 0;
  try {
    for (let r = 0; r < reps; r++) {
      await reader.pause();
      for (let i = 0; i < missed; i++) writer.write({ x: i, y: i, seq: ++seq, t: clock() });
      await writer.flushed();
      await sleep(200); // let every connected client take the burst
      const target = seq;
      const caughtUp = new Promise((resolve) => (waiting = { seq: target, resolve }));
      Object.assign(count, { recv: 0, sent: 0, msgs: 0, on: true });
      const t0 = clock();
      const attach = await reader.resume();
      const t1 = await Promise.race([caughtUp, sleep(30_000).then(() => null)]);
      count.on = false;
      waiting = null;
      if (t1 === null) throw new Error(`reconnect ${r + 1}: the client never caught up to write ${target}`);
      out.push({ mode: attach?.mode ?? "?", ms: t1 - t0, recv_bytes: count.recv, recv_messages: count.msgs, sent_bytes: count.sent });
      await sleep(100);
    }
  } finally {
    reader.close();
    writer.close();
  }
  const med = (k) => {
    const v = out.map((x) => x[k]).sort((a, b) => a - b);
    return v.length ? v[Math.floor((v.length - 1) / 2)] : null;
  };
  return {
    missed,
    reps: out.length,
    modes: [...new Set(out.map((x) => x.mode))],
    median_ms: med("ms"),
    median_recv_bytes: med("recv_bytes"),
    median_recv_messages: med("recv_messages"),
    median_sent_bytes: med("sent_bytes"),
    each: out,
  };
}

/** The share of one core `pid` uses over `seconds` with no client connected. */
export async function idleShare(pid, seconds) {
  await sleep(1000);
  const c0 = cpuSeconds(pid);
  const t0 = Date.now();
  await sleep(seconds * 1000);
  return (cpuSeconds(pid) - c0) / ((Date.now() - t0) / 1000);
}

async function runOne(o, name) {
  log(`${name}: starting the server`);
  const server = await startServer(o, name);
  setPriority(server.pid, o.priority, log);
  try {
    const idle = await idleShare(server.pid, o.quick ? 2 : 5);
    const { after: reconnect, ...load } = await runLoad({
      config: server.config,
      n: o.clients,
      observers: o.observers,
      rate: o.rate,
      warmup: o.warmup,
      duration: o.duration,
      ramp: o.ramp,
      botsPerWorker: o.botsPerWorker,
      seed: o.seed,
      priority: o.priority,
      pid: server.pid,
      name,
      // The reconnect, on the document the load left, with the load's
      // clients still connected (a Hocuspocus document with no client left
      // is unloaded) and quiet.
      afterWindow: () => measureReconnects(server.config, o.missed, o.reconnects),
    });
    log(
      `${name}: ${load.writes} writes, server CPU ${load.server_cpu_s.toFixed(2)} s (${load.server_cpu_us_per_write.toFixed(0)} µs/write), ` +
        `latency p50 ${fmt(load.latency_ms.p50)} p99 ${fmt(load.latency_ms.p99)} ms, ${load.deliveries}/${load.deliveries_expected} delivered, ` +
        `${Math.round(load.recv_bytes_per_client_s)} B/client/s, harness CPU ${load.harness.cpu_s.toFixed(1)} s`,
    );
    log(
      `${name}: reconnect after ${o.missed} missed (${reconnect.modes.join(",")}): ${reconnect.median_recv_bytes} B, ` +
        `${fmt(reconnect.median_ms)} ms (median of ${reconnect.reps})`,
    );
    return { server: name, server_idle_cpu_share_of_one_core: idle, ...load, reconnect };
  } finally {
    await server.stop();
  }
}

const fmt = (v) => (v == null ? "-" : v.toFixed(1));

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (enterPriority(o.priority, log)) return;
  const outDir = o.out ?? (o.quick ? fs.mkdtempSync(path.join(os.tmpdir(), "compare-realm-quick-")) : here);
  fs.mkdirSync(outDir, { recursive: true });
  const meta = {
    started_at: new Date().toISOString(),
    options: {
      clients: o.clients,
      observers: Math.min(o.clients, o.observers),
      rate: o.rate,
      duration_s: o.duration,
      warmup_s: o.warmup,
      bots_per_worker: o.botsPerWorker,
      missed: o.missed,
      reconnects: o.reconnects,
      seed: o.seed,
      quick: o.quick,
      priority: o.priority,
    },
    machine: machineFacts(loadAverage),
    versions: {
      node: process.version,
      tessera: o.servers.some((s) => s.startsWith("tessera")) ? tesseraVersion(o.tesseraBin) : "not run",
      tessera_bin: o.tesseraBin,
      git: gitFacts(),
      tessera_client: JSON.parse(fs.readFileSync(path.join(TS_CLIENT_DIR, "package.json"), "utf8")).version,
      tessera_client_ws: readVersion(TS_CLIENT_DIR, "ws"),
      hocuspocus_server: readVersion(here, "@hocuspocus/server"),
      hocuspocus_provider: readVersion(here, "@hocuspocus/provider"),
      yjs: readVersion(here, "yjs"),
      y_protocols: readVersion(here, "y-protocols"),
      ws: readVersion(here, "ws"),
    },
  };
  log(`load average ${meta.machine.load_at_start.join(" ")} on ${meta.machine.nproc} cores; results in ${outDir}`);
  const runs = [];
  const write = () => {
    const doc = { meta, runs };
    fs.writeFileSync(path.join(outDir, "results.json"), JSON.stringify(doc, null, 2) + "\n");
    fs.writeFileSync(path.join(outDir, "RESULTS.md"), renderMarkdown(doc));
  };
  let failed = false;
  for (const s of o.servers) {
    try {
      runs.push(await runOne(o, s));
    } catch (e) {
      failed = true;
      log(`${s} failed: ${e?.stack ?? e}`);
      runs.push({ server: s, clients: o.clients, error: String(e?.message ?? e) });
    }
    write();
    await sleep(2000);
  }
  meta.finished_at = new Date().toISOString();
  write();
  if (o.quick) {
    process.stdout.write(fs.readFileSync(path.join(outDir, "RESULTS.md"), "utf8"));
    const bad = runs.filter(
      (r) =>
        r.error ||
        r.join_failed > 0 ||
        r.writes === 0 ||
        r.deliveries !== r.deliveries_expected ||
        Object.keys(r.write_errors).length > 0 ||
        r.connections_lost > 0 ||
        Object.keys(r.write_outcomes).some((k) => k !== "committed") ||
        r.reconnect.reps !== o.reconnects,
    );
    for (const r of bad) log(`quick: ${r.server} failed the smoke check: ${r.error ?? JSON.stringify({ ...r, each: undefined })}`);
    process.exit(bad.length ? 1 : 0);
  }
  log(`wrote ${path.join(outDir, "RESULTS.md")} and results.json`);
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`compare-realm: ${e?.stack ?? e}`);
    process.exit(1);
  });
}
