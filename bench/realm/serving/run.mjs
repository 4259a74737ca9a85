// bench/realm/serving: what serving a realm costs, each figure beside a
// baseline measured in the same run (docs/realms.md "Benchmarks
// (serving)"). Part of `make bench`.
//
//   node run.mjs [--clients 100] [--rate 1] [--duration 10] [--warmup 2]
//                [--bots-per-worker 50] [--doc-bytes 1048576] [--missed 100]
//                [--reps 50] [--priority NICE] [--tessera-bin PATH]
//                [--out DIR] [--quick]
//
// (a) Commit-to-client latency: `clients` connected clients on one realm of
//     `tessera dev` on loopback, each writing its own subtree `rate` times a
//     second; `observers` of them (all with --quick) decode everything and
//     record, for every other client's write, the time from the writer's
//     send stamp to their own receipt of the commit; the others receive and
//     count every message (the bots and adapters of bench/compare/realm). Once on an ephemeral
//     realm kind (nothing stored: the serving path alone) and once on a
//     durable one (each commit in SQLite before it is sent). The baseline is
//     the loopback floor: the same bots, the same load, through relay.mjs, a
//     plain `ws` server in Node that sends each message on to every other
//     client and does nothing else. Target: p99 <= 2 ms (ephemeral).
// (b) Reconnect cost (reconnect.mjs): bytes and server CPU of a reconnect by
//     replay of `missed` versions against a full hydrate (the baseline) of a
//     document of `doc-bytes`, on the same durable realm at the same head.
//
// Prints both tables and writes OUT/RESULTS-serving.md and
// OUT/results-serving.json (OUT: bench/realm, or a scratch folder with
// --quick unless --out is given). --quick: 10 clients for 3 s, 5 reconnects
// each way; exits 1 unless every write reached every other client and every
// reconnect was answered as expected (RESUME, HYDRATE). Timings are reported,
// never asserted.
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
  ROOT,
  setPriority,
  startProcess,
  stopProcess,
  TS_CLIENT_DIR,
  tesseraVersion,
} from "../../compare/harness/common.mjs";
import { loadAverage } from "../../compare/harness/proc.mjs";
import { num, ratio } from "../../compare/realm/report.mjs";
import { idleShare, runLoad, startTesseraDev } from "../../compare/realm/run.mjs";
import { measureReconnectCost } from "./reconnect.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
// Kinds "doc-unbatched" (durable) and "presence-unbatched" (ephemeral):
// without batchMs, every group commit is sent at once (the latency path).
const APP = path.join(ROOT, "bench/compare/realm/app");
const log = logger("realm-serving");

function parseArgs(argv) {
  const o = {
    clients: 100,
    observers: 10,
    rate: 1,
    duration: 10,
    warmup: 2,
    botsPerWorker: 50,
    docBytes: 1 << 20,
    missed: 100,
    reps: 50,
    priority: 0,
    tesseraBin: process.env.TESSERA_BIN || path.join(ROOT, "build/src/cli/tessera"),
    out: null,
    quick: false,
  };
  const flags = {
    "--clients": "clients",
    "--observers": "observers",
    "--rate": "rate",
    "--duration": "duration",
    "--warmup": "warmup",
    "--bots-per-worker": "botsPerWorker",
    "--doc-bytes": "docBytes",
    "--missed": "missed",
    "--reps": "reps",
    "--priority": "priority",
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--quick") o.quick = true;
    else if (a === "--tessera-bin") o.tesseraBin = argv[++i];
    else if (a === "--out") o.out = argv[++i];
    else if (flags[a] && i + 1 < argv.length && Number.isFinite(Number(argv[i + 1]))) o[flags[a]] = Number(argv[++i]);
    else {
      console.error(
        `realm-serving: ${a === "--help" || a === "-h" ? "" : `bad argument ${a}\n`}usage: node run.mjs [--clients 100] [--observers 10] [--rate 1] ` +
          "[--duration 10] [--warmup 2] [--bots-per-worker 50] [--doc-bytes 1048576] [--missed 100] [--reps 50] " +
          "[--priority NICE] [--tessera-bin PATH] [--out DIR] [--quick]",
      );
      process.exit(2);
    }
  }
  if (o.quick) Object.assign(o, { clients: 10, observers: 10, duration: 3, warmup: 1, reps: 5 });
  if (!(o.clients >= 2) || !(o.rate > 0) || !(o.reps >= 1)) {
    console.error("realm-serving: --clients >= 2, --rate > 0 and --reps >= 1");
    process.exit(2);
  }
  return o;
}

async function startRelay() {
  const port = await freePort();
  const p = await startProcess(
    process.execPath,
    [path.join(here, "relay.mjs"), "--port", String(port)],
    { env: { ...process.env, NODE_ENV: "production" } },
    /relay: listening on (\S+)/,
    30_000,
    "relay",
  );
  return { pid: p.child.pid, url: `http://${p.match[1]}`, stop: () => stopProcess(p.child, "SIGTERM", 10_000) };
}

function latencyTable(runs, idle) {
  const IDLE = num(idle, 3);
  const [floor, ...rest] = runs;
  const head = ["", ...runs.map((r) => r.label), ...rest.map((r) => `${r.label} / floor`)];
  const rows = [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i ? "---:" : "---")).join("|")}|`];
  const line = (label, f, digits = 2, showRatio = true) =>
    rows.push(
      `| ${[label, ...runs.map((r) => num(f(r), digits)), ...rest.map((r) => (showRatio ? ratio(f(r), f(floor)) : ""))].join(" | ")} |`,
    );
  line("**write → other clients latency p50 (ms)**", (r) => r.latency_ms.p50);
  line("latency p90 (ms)", (r) => r.latency_ms.p90);
  line("**latency p99 (ms)**", (r) => r.latency_ms.p99);
  line("latency max (ms)", (r) => r.latency_ms.max, 1);
  line("deliveries received / expected", (r) => r.deliveries / r.deliveries_expected, 4, false);
  line("writes in the window", (r) => r.writes, 0, false);
  line("server CPU per write (µs)", (r) => r.server_cpu_us_per_write, 1);
  line(`server CPU (share of one core; tessera dev idles at ${IDLE})`, (r) => r.server_cpu_share_of_one_core, 2);
  line("bytes per message received", (r) => r.recv_bytes_per_client_s / r.recv_messages_per_client_s, 1);
  line("busiest bot process (share of one core)", (r) => r.harness.busiest_process_core_share, 2, false);
  line("bots' event-loop delay p99 (ms)", (r) => r.harness.event_loop_delay_p99_ms, 1, false);
  line("machine busy over the window (share of both cores)", (r) => r.machine.busy_share, 2, false);
  return rows.join("\n");
}

function reconnectTable(rc) {
  const { hydrate: h, replay: p } = rc;
  const rows = [
    `| | hydrate, ${num(rc.document_json_bytes / 2 ** 20, 2)} MiB document (baseline) | replay of ${rc.missed} versions | replay / hydrate |`,
    "|---|---:|---:|---:|",
  ];
  const line = (label, k, digits = 0) => rows.push(`| ${label} | ${num(h[k], digits)} | ${num(p[k], digits)} | ${ratio(p[k], h[k])} |`);
  line("**server CPU per reconnect (ms)**, utime+stime over the batch / reconnects", "server_cpu_ms_per_reconnect", 2);
  line("**bytes received** (WebSocket payloads)", "recv_bytes");
  line("messages received", "recv_messages");
  line("bytes sent", "sent_bytes");
  line("time until the client holds the head, median (ms)", "median_ms", 2);
  line("time, max (ms)", "max_ms", 2);
  rows.push(`| answered by | ${h.mode} | ${p.mode} | |`);
  rows.push(`| reconnects | ${h.reps} | ${p.reps} | |`);
  return rows.join("\n");
}

function render(doc) {
  const { meta, latency, reconnect } = doc;
  const o = meta.options;
  const v = meta.versions;
  const eph = latency.find((r) => r.name === "tessera-ephemeral");
  const p99 = eph?.latency_ms?.p99;
  const debug = /\/bu\//.test(v.tessera_bin);
  return `# Realm serving benchmarks

Generated by \`bench/realm/serving/run.mjs\`${o.quick ? " --quick" : ""} (\`make bench\`) on ${meta.started_at}. Method: the script's header and docs/realms.md ("Benchmarks (serving)"); raw figures: results-serving.json.

- ${meta.machine.nproc} cores (${meta.machine.cpu}), Linux ${meta.machine.kernel}; load average at the start ${meta.machine.load_at_start.join(" ")}; Node ${v.node}
- ${v.tessera} (git ${v.git.commit}), \`tessera dev\`, binary \`${v.tessera_bin}\`${debug ? " — **a -O0 debug build**: its CPU and latency figures are above a release build's" : ""}

## (a) Commit-to-client latency, ${o.clients} clients on one realm, loopback

Each client writes its own subtree ${o.rate} time(s) a second (${o.clients * o.rate} writes/s in all, each delivered to ${o.clients - 1} clients); ${o.duration_s} s measured after ${o.warmup_s} s. Latency: from the writer's send stamp to another client's receipt (same clock), every write × every other observing client (${o.observers} of the ${o.clients} clients observe: they decode every message; the others receive and count them all). The floor is a plain \`ws\` relay in Node (relay.mjs) under the same bots.

${latencyTable(latency, meta.tessera_idle_cpu_share_of_one_core)}

Target p99 ≤ 2 ms (ephemeral realm): ${p99 == null ? "not measured" : `${num(p99, 2)} ms, **${p99 <= 2 ? "met" : "not met"}**`}.

## (b) Reconnect cost: replay of ${reconnect?.missed ?? o.missed} versions vs a full hydrate

${reconnect ? reconnectTable(reconnect) : "not measured"}
`;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (enterPriority(o.priority, log)) return;
  const outDir = o.out ?? (o.quick ? fs.mkdtempSync(path.join(os.tmpdir(), "realm-serving-quick-")) : path.resolve(here, ".."));
  fs.mkdirSync(outDir, { recursive: true });
  const meta = {
    started_at: new Date().toISOString(),
    options: {
      clients: o.clients,
      observers: Math.min(o.clients, o.observers),
      rate: o.rate,
      duration_s: o.duration,
      warmup_s: o.warmup,
      doc_bytes: o.docBytes,
      missed: o.missed,
      reps: o.reps,
      quick: o.quick,
    },
    machine: machineFacts(loadAverage),
    versions: {
      node: process.version,
      tessera: tesseraVersion(o.tesseraBin),
      tessera_bin: o.tesseraBin,
      git: gitFacts(),
      tessera_client: JSON.parse(fs.readFileSync(path.join(TS_CLIENT_DIR, "package.json"), "utf8")).version,
    },
  };
  const load = (name, label, config, pid) =>
    runLoad({
      config,
      n: o.clients,
      observers: o.observers,
      rate: o.rate,
      warmup: o.warmup,
      duration: o.duration,
      botsPerWorker: o.botsPerWorker,
      seed: 1,
      priority: o.priority,
      pid,
      name,
    }).then((r) => {
      log(`${name}: latency p50 ${num(r.latency_ms.p50, 2)} p99 ${num(r.latency_ms.p99, 2)} ms, ${r.deliveries}/${r.deliveries_expected} delivered`);
      return { name, label, ...r };
    });
  const latency = [];
  const relay = await startRelay();
  setPriority(relay.pid, o.priority, log);
  try {
    latency.push(await load("floor", "ws relay (floor)", { server: "ws-relay", url: relay.url }, relay.pid));
  } finally {
    await relay.stop();
  }
  const tessera = await startTesseraDev(o.tesseraBin, APP);
  setPriority(tessera.pid, o.priority, log);
  let reconnect = null;
  try {
    meta.tessera_idle_cpu_share_of_one_core = await idleShare(tessera.pid, o.quick ? 2 : 5);
    const stamp = Date.now();
    const cfg = (kind) => ({ server: "tessera", url: tessera.url, kind, key: `serving-${kind}-${stamp}` });
    latency.push(await load("tessera-ephemeral", "tessera, ephemeral realm", cfg("presence-unbatched"), tessera.pid));
    latency.push(await load("tessera-durable", "tessera, durable realm", cfg("doc-unbatched"), tessera.pid));
    reconnect = await measureReconnectCost({
      url: tessera.url,
      kind: "doc-unbatched",
      key: `serving-reconnect-${stamp}`,
      pid: tessera.pid,
      docBytes: o.docBytes,
      missed: o.missed,
      reps: o.reps,
      log,
    });
  } finally {
    await tessera.stop();
  }
  meta.finished_at = new Date().toISOString();
  const doc = { meta, latency, reconnect };
  const md = render(doc);
  fs.writeFileSync(path.join(outDir, "results-serving.json"), JSON.stringify(doc, null, 2) + "\n");
  fs.writeFileSync(path.join(outDir, "RESULTS-serving.md"), md);
  process.stdout.write(md);
  log(`wrote ${path.join(outDir, "RESULTS-serving.md")} and results-serving.json`);
  const bad = [
    ...latency
      .filter((r) => r.joined !== o.clients || r.deliveries !== r.deliveries_expected || r.connections_lost > 0 || Object.keys(r.write_errors).length)
      .map((r) => r.name),
    ...(reconnect.replay.mode === "resume" && reconnect.hydrate.mode === "hydrate" ? [] : ["reconnect modes"]),
  ];
  if (bad.length) log(`failed checks: ${bad.join(", ")}`);
  process.exit(bad.length ? 1 : 0);
}

main().catch((e) => {
  console.error(`realm-serving: ${e?.stack ?? e}`);
  process.exit(1);
});
