// bench/compare: the arena on tessera and on Colyseus under the same load,
// side by side. See ../README.md for the method.
//
//   node run.mjs [--servers tessera,colyseus] [--bots 100,500,1000]
//                [--rate 10] [--duration 20] [--warmup 3] [--ramp SECS]
//                [--bots-per-worker 250] [--reject-fraction 0.05] [--seed 1]
//                [--state skip|decode] [--priority NICE]
//                [--tessera-mode replicate|snapshot] [--no-floor]
//                [--tessera-bin PATH] [--out DIR] [--quick]
//
// For each N and each server in turn: start the server (tessera: `tessera
// dev` on a scratch copy of examples/arena; Colyseus: node
// ../colyseus/server.mjs), start ceil(N / bots-per-worker) bot processes
// (worker.mjs), ramp the N joins, wait `warmup` seconds with every bot
// sending, then measure `duration` seconds: the server's CPU seconds
// (/proc/<pid>/stat utime+stime, descendants included) at the window's two
// ends, its peak RSS (VmHWM) at the end, the bots' send->ACK round trips,
// and the WebSocket payload bytes each client received. --state: whether
// the bots' client libraries decode the state messages (decode) or the
// adapters drop them, counted, before the libraries see them (skip, the
// default; see adapters.mjs). --tessera-mode: the arena shard's params;
// "replicate" (the default) turns on its replication mode (players as
// replicated entities, each client sent the ones that moved), "snapshot"
// sends every player in every frame. --priority sets the nice value of the server
// and the bot processes (e.g. -10 on a machine busy with other work). Writes
// OUT/results.json and OUT/RESULTS.md (OUT: bench/compare, or a scratch
// folder with --quick unless --out is given).
//
// --quick is the smoke test: 5 bots for 3 s against both servers, state
// decoded (the client libraries do all their work); it exits 1
// unless every run joined all its bots, had inputs ACKed and REJECTed (with
// the right text), left none unanswered and lost no connection.
import { execFileSync } from "node:child_process";
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
  setPriority as setNice,
  sleep,
  startProcess,
  stopProcess,
  TS_CLIENT_DIR,
  tesseraVersion as versionOf,
} from "./common.mjs";
import { loadAverage } from "./proc.mjs";
import { measureWindow, startFleet, stopFleet } from "./fleet.mjs";
import { renderMarkdown } from "./report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const COMPARE_DIR = path.resolve(here, "..");
const ROOT = path.resolve(COMPARE_DIR, "../..");
const COLYSEUS_DIR = path.join(COMPARE_DIR, "colyseus");
const WIDTH = 800; // the arena's size: examples/arena defaults, also the dev join params
const HEIGHT = 500;
const GRACE_MS = 2000; // after the window, for the last ACKs

function parseArgs(argv) {
  const o = {
    servers: ["tessera", "colyseus"],
    bots: [100, 500, 1000],
    rate: 10,
    duration: 20,
    warmup: 3,
    ramp: null,
    botsPerWorker: 250,
    rejectFraction: 0.05,
    seed: 1,
    tesseraBin: process.env.TESSERA_BIN || path.join(ROOT, "build/src/cli/tessera"),
    out: null,
    quick: false,
    state: null,
    priority: 0,
    tesseraMode: "replicate",
    floorBin: null,
    floor: true,
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
    else if (a === "--bots") o.bots = v().split(",").map(Number);
    else if (a === "--rate") o.rate = num();
    else if (a === "--duration") o.duration = num();
    else if (a === "--warmup") o.warmup = num();
    else if (a === "--ramp") o.ramp = num();
    else if (a === "--bots-per-worker") o.botsPerWorker = num();
    else if (a === "--reject-fraction") o.rejectFraction = num();
    else if (a === "--seed") o.seed = num();
    else if (a === "--tessera-bin") o.tesseraBin = v();
    else if (a === "--out") o.out = v();
    else if (a === "--quick") o.quick = true;
    else if (a === "--state") o.state = v();
    else if (a === "--priority") o.priority = Number(v());
    else if (a === "--tessera-mode") o.tesseraMode = v();
    else if (a === "--no-floor") o.floor = false;
    else if (a === "--help" || a === "-h") usage("");
    else usage(`unknown argument ${a}`);
  }
  // <build>/src/cli/tessera -> <build>/bench/compare/floor/loopback_floor
  o.floorBin = path.join(path.dirname(path.dirname(path.dirname(o.tesseraBin))), "bench/compare/floor/loopback_floor");
  if (o.quick) {
    o.floor = false;
    o.bots = [5];
    o.duration = 3;
    o.warmup = 1;
  }
  o.state ??= o.quick ? "decode" : "skip";
  if (o.state !== "skip" && o.state !== "decode") usage("--state is skip or decode");
  if (o.tesseraMode !== "replicate" && o.tesseraMode !== "snapshot") usage("--tessera-mode is replicate or snapshot");
  if (!Number.isInteger(o.priority) || o.priority < -20 || o.priority > 19) usage("--priority is a nice value, -20..19");
  for (const s of o.servers) if (s !== "tessera" && s !== "colyseus") usage(`unknown server ${s}`);
  if (!(o.rate > 0)) usage("--rate must be positive");
  return o;
}

function usage(error) {
  if (error) console.error(`compare: ${error}`);
  console.error(
    "usage: node run.mjs [--servers tessera,colyseus] [--bots 100,500,1000] [--rate 10] " +
      "[--duration 20] [--warmup 3] [--ramp SECS] [--bots-per-worker 250] " +
      "[--reject-fraction 0.05] [--seed 1] [--state skip|decode] [--priority NICE] " +
      "[--tessera-mode replicate|snapshot] [--no-floor] " +
      "[--tessera-bin PATH] [--out DIR] [--quick]",
  );
  process.exit(2);
}

const log = logger("compare");
const setPriority = (pid, prio) => setNice(pid, prio, log);

// tessera: `tessera dev` on a scratch copy of examples/arena (its state, a
// fresh SQLite, stays in the scratch folder), a port of its own.
let tesseraScratch = null;
async function startTessera(o, runName) {
  if (!fs.existsSync(o.tesseraBin)) {
    throw new Error(`no tessera binary at ${o.tesseraBin} (make build, or --tessera-bin / TESSERA_BIN)`);
  }
  if (!tesseraScratch) {
    tesseraScratch = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-compare-"));
    const src = path.join(ROOT, "examples/arena");
    fs.copyFileSync(path.join(src, "tessera.json"), path.join(tesseraScratch, "tessera.json"));
    fs.cpSync(path.join(src, "shards"), path.join(tesseraScratch, "shards"), { recursive: true });
  }
  const p = await startProcess(
    o.tesseraBin,
    ["dev", tesseraScratch, "--port", "0", "--host", "127.0.0.1", "--quiet"],
    { cwd: ROOT, env: { ...process.env } },
    /tessera dev: \S+ on (http:\/\/[\d.]+:\d+)/,
    900_000, // the first start builds the shard (wasm, then native code)
    "tessera dev",
  );
  const url = p.match[1];
  const shard = `cmp-${runName}-${Date.now()}`;
  const replicate = o.tesseraMode === "replicate";
  // Create the shard before the bots come (each bot's dev join would too).
  const res = await fetch(`${url}/api/dev/join`, {
    method: "POST",
    body: JSON.stringify({ shard, kind: "arena", params: { width: WIDTH, height: HEIGHT, replicate }, subscriber: "compare-setup" }),
  });
  if (!res.ok) throw new Error(`creating shard ${shard}: ${await res.text()}`);
  return {
    child: p.child,
    pid: p.child.pid,
    adapterConfig: { server: "tessera", url, shard, width: WIDTH, height: HEIGHT, replicate },
    stop: () => stopProcess(p.child, "SIGINT", 20000),
    output: p.output,
  };
}

// Colyseus: node ../colyseus/server.mjs, which creates the one room.
async function startColyseus() {
  if (!fs.existsSync(path.join(COLYSEUS_DIR, "node_modules/@colyseus/core"))) {
    throw new Error(`no node_modules in ${COLYSEUS_DIR} (npm ci there)`);
  }
  const port = await freePort();
  const p = await startProcess(
    process.execPath,
    [path.join(COLYSEUS_DIR, "server.mjs"), "--port", String(port), "--width", String(WIDTH), "--height", String(HEIGHT)],
    { cwd: COLYSEUS_DIR, env: { ...process.env, NODE_ENV: "production" } },
    /colyseus-arena: listening on \S+ room (\S+)/,
    60_000,
    "colyseus server",
  );
  return {
    child: p.child,
    pid: p.child.pid,
    adapterConfig: { server: "colyseus", url: `http://127.0.0.1:${port}`, roomId: p.match[1], width: WIDTH, height: HEIGHT },
    stop: () => stopProcess(p.child, "SIGTERM", 20000),
    output: p.output,
  };
}

async function runOne(o, serverName, n) {
  const runName = `${serverName}-${n}`;
  log(`${runName}: starting the server`);
  const server = serverName === "tessera" ? await startTessera(o, String(n)) : await startColyseus();
  setPriority(server.pid, o.priority);
  const fleet = {};
  try {
    await startFleet({
      worker: path.join(here, "worker.mjs"),
      n,
      botsPerWorker: o.botsPerWorker,
      rampMs: (o.ramp ?? Math.max(2, n / 200)) * 1000,
      priority: o.priority,
      log,
      name: runName,
      config: (bots) => ({
        ...server.adapterConfig,
        bots,
        rate: o.rate,
        rejectFraction: o.rejectFraction,
        seed: o.seed,
        state: o.state,
      }),
      out: fleet,
    });
    const { nWorkers } = fleet;
    const { ok: joinedOk, failed: joinFailed, errors: joinErrors, secs: joinSecs } = fleet.joined;
    const m = await measureWindow(fleet, {
      pid: server.pid,
      warmupS: o.warmup,
      durationS: o.duration,
      graceMs: GRACE_MS,
      log,
      name: runName,
    });
    const { s0, s1, rss, peakRss, windowS, serverCpu, workerCpu, controllerCpu, machineBusy, stats: st } = m;
    const sum = (k) => st.reduce((a, s) => a + s[k], 0);
    const rtt = st.flatMap((s) => s.rtt).sort((a, b) => a - b);
    const closeCodes = {};
    for (const s of st) for (const [c, k] of Object.entries(s.closeCodes)) closeCodes[c] = (closeCodes[c] ?? 0) + k;
    const botWindowS = st.reduce((a, s) => a + s.windowMs, 0) / st.length / 1000;
    const result = {
      server: serverName,
      bots: n,
      rate: o.rate,
      duration_s: o.duration,
      window_s: windowS,
      joined: joinedOk,
      join_failed: joinFailed,
      join_errors: joinErrors,
      join_s: joinSecs,
      server_cpu_s: serverCpu,
      server_cpu_user_s: m.serverUser,
      server_cpu_system_s: m.serverSystem,
      server_cpu_ms_per_player_s: (serverCpu * 1000) / (joinedOk * windowS),
      server_cpu_share_of_one_core: serverCpu / windowS,
      server_peak_rss_bytes: peakRss,
      server_rss_end_bytes: rss,
      rtt_ms: {
        count: rtt.length,
        p50: percentile(rtt, 50),
        p90: percentile(rtt, 90),
        p99: percentile(rtt, 99),
        max: rtt.length ? rtt[rtt.length - 1] : null,
      },
      recv_bytes_per_client_s: sum("recvBytes") / joinedOk / botWindowS,
      recv_messages_per_client_s: sum("recvMessages") / joinedOk / botWindowS,
      sent_bytes_per_client_s: sum("sendBytes") / joinedOk / botWindowS,
      inputs_sent: sum("sent"),
      acks: sum("acked"),
      rejects: sum("rejected"),
      wrong_rejections: sum("wrongRejections"),
      wrong_rejection_texts: st.reduce((acc, s) => {
        for (const [k, c] of Object.entries(s.wrongRejectionTexts)) acc[k] = (acc[k] ?? 0) + c;
        return acc;
      }, {}),
      unanswered: sum("unanswered"),
      connections_lost: sum("closes"),
      close_codes: closeCodes,
      harness: {
        processes: nWorkers,
        cpu_s: workerCpu.reduce((a, b) => a + b, 0) + controllerCpu,
        busiest_process_core_share: Math.max(...workerCpu) / windowS,
        event_loop_delay_p99_ms: Math.max(...st.map((s) => s.loopDelay?.p99 ?? 0)),
        event_loop_delay_max_ms: Math.max(...st.map((s) => s.loopDelay?.max ?? 0)),
      },
      machine: {
        busy_share: machineBusy,
        load_at_start: s0.load,
        load_at_end: s1.load,
      },
    };
    log(
      `${runName}: server CPU ${serverCpu.toFixed(2)} s, RTT p50 ${fmt(result.rtt_ms.p50)} p99 ${fmt(result.rtt_ms.p99)} ms, ` +
        `${Math.round(result.recv_bytes_per_client_s)} B/client/s, ${result.acks} acks ${result.rejects} rejects, ` +
        `harness CPU ${result.harness.cpu_s.toFixed(1)} s, loop delay p99 ${fmt(result.harness.event_loop_delay_p99_ms)} ms`,
    );
    return result;
  } finally {
    // The bots close their connections and exit; stragglers are killed.
    await stopFleet(fleet);
    await server.stop();
  }
}

// The loopback floor for N clients (../floor/loopback_floor.cc): the CPU
// the kernel alone takes to send each client one message of `bytes` per
// tick at `rate` Hz for `seconds`, on this machine, now. Null when the
// tool is not built.
function runFloor(o, n, bytes, rate) {
  const bin = o.floorBin;
  if (!fs.existsSync(bin)) {
    log(`no loopback floor tool at ${bin} (make build): floor skipped`);
    return null;
  }
  const args = ["--clients", n, "--bytes", Math.max(1, Math.round(bytes)), "--rate", rate, "--seconds", o.duration];
  log(`floor-${n}: ${bin} ${args.join(" ")}`);
  try {
    const out = execFileSync(bin, args.map(String), { encoding: "utf8", timeout: (o.duration + 60) * 1000 });
    const f = JSON.parse(out.trim().split("\n").pop());
    log(`floor-${n}: ${(f.user_s + f.sys_s).toFixed(2)} s CPU for ${f.sent} sends (${f.us_per_send.toFixed(2)} µs each)`);
    return { bots: n, ...f, cpu_s: f.user_s + f.sys_s, load_at_start: loadAverage() };
  } catch (e) {
    log(`floor-${n} failed: ${e.message}`);
    return null;
  }
}

const fmt = (v) => (v == null ? "-" : v.toFixed(1));

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (enterPriority(o.priority, log)) return;
  const outDir = o.out ?? (o.quick ? fs.mkdtempSync(path.join(os.tmpdir(), "compare-quick-")) : COMPARE_DIR);
  fs.mkdirSync(outDir, { recursive: true });
  const tesseraVersion = o.servers.includes("tessera") ? versionOf(o.tesseraBin) : "not run";
  const meta = {
    started_at: new Date().toISOString(),
    options: {
      bots: o.bots,
      rate: o.rate,
      duration_s: o.duration,
      warmup_s: o.warmup,
      ramp_s: o.ramp ?? "max(2, N/200)",
      bots_per_worker: o.botsPerWorker,
      reject_fraction: o.rejectFraction,
      seed: o.seed,
      quick: o.quick,
      state: o.state,
      priority: o.priority,
      tessera_mode: o.tesseraMode,
    },
    machine: machineFacts(loadAverage),
    versions: {
      node: process.version,
      tessera: tesseraVersion,
      tessera_bin: o.tesseraBin,
      git: gitFacts(),
      tessera_client: JSON.parse(fs.readFileSync(path.join(TS_CLIENT_DIR, "package.json"), "utf8")).version,
      tessera_client_msgpack: readVersion(TS_CLIENT_DIR, "@msgpack/msgpack"),
      tessera_client_ws: readVersion(TS_CLIENT_DIR, "ws"),
      colyseus_core: readVersion(COLYSEUS_DIR, "@colyseus/core"),
      colyseus_ws_transport: readVersion(COLYSEUS_DIR, "@colyseus/ws-transport"),
      colyseus_schema_server: readVersion(COLYSEUS_DIR, "@colyseus/schema"),
      colyseus_server_ws: readVersion(COLYSEUS_DIR, "ws"),
      colyseus_js: readVersion(here, "colyseus.js"),
      colyseus_schema_client: readVersion(here, "@colyseus/schema"),
      colyseus_client_ws: readVersion(here, "ws"),
    },
  };
  log(`load average ${meta.machine.load_at_start.join(" ")} on ${meta.machine.nproc} cores; results in ${outDir}`);
  const runs = [];
  const floors = [];
  const write = () => {
    const doc = { meta, runs, floors };
    fs.writeFileSync(path.join(outDir, "results.json"), JSON.stringify(doc, null, 2) + "\n");
    fs.writeFileSync(path.join(outDir, "RESULTS.md"), renderMarkdown(doc));
  };
  let failed = false;
  for (const n of o.bots) {
    for (const s of o.servers) {
      try {
        runs.push(await runOne(o, s, n));
      } catch (e) {
        failed = true;
        log(`${s}-${n} failed: ${e?.stack ?? e}`);
        runs.push({ server: s, bots: n, error: String(e?.message ?? e) });
      }
      write();
      await sleep(2000);
    }
    const t = runs.find((r) => r.bots === n && r.server === "tessera" && !r.error);
    if (o.floor) {
      // tessera's average message, at the tick rate (a server's fewest sends).
      const bytes = t ? t.recv_bytes_per_client_s / t.recv_messages_per_client_s : 1000;
      const f = runFloor(o, n, bytes, 20);
      if (f) floors.push(f);
      write();
    }
  }
  meta.finished_at = new Date().toISOString();
  write();
  if (tesseraScratch) fs.rmSync(tesseraScratch, { recursive: true, force: true });
  if (o.quick) {
    process.stdout.write(fs.readFileSync(path.join(outDir, "RESULTS.md"), "utf8"));
    const bad = runs.filter(
      (r) =>
        r.error ||
        r.join_failed > 0 ||
        r.acks === 0 ||
        r.rejects === 0 ||
        r.wrong_rejections > 0 ||
        r.unanswered > 0 ||
        r.connections_lost > 0,
    );
    for (const r of bad) log(`quick: ${r.server} failed the smoke check: ${r.error ?? JSON.stringify(r)}`);
    process.exit(bad.length ? 1 : 0);
  }
  log(`wrote ${path.join(outDir, "RESULTS.md")} and results.json`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(`compare: ${e?.stack ?? e}`);
  process.exit(1);
});
