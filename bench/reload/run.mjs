// bench/reload: how long a newcomer waits between saving a shard's source
// in the editor and the running shard executing the change (issue 21,
// "Fast rebuilds"). Part of `make bench`; alone: `make bench-reload`.
//
//   node run.mjs [--reps 5] [--tessera-bin PATH] [--out DIR] [--quick]
//
// `tessera dev` serves a copy of examples/arena with one connected player
// (`tessera connect`) holding a shard. Each rep rewrites one refusal text in
// arena.cc and records, from the moment the file was written:
//   - quick:     the shard runs the quick build (the -O0 guest against the
//                precompiled SDK, its C compiled by Tiny C): the reload's
//                `quick` report (docs/admin-api.md);
//   - optimised: the shard runs the -O2 build that follows: the baseline,
//                what every reload cost before quick builds (one optimised
//                build: clang++ -O2 for the guest, cc -O2 for its C).
// The first rep also builds the precompiled header and the SDK's objects
// and is reported apart ("first"). Each rep checks that the player stayed
// connected and that the shard moved both times. Timings are reported,
// never asserted; --quick runs 2 reps and exits 1 when a reload failed.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { logger, ROOT, sleep, startProcess, stopProcess } from "../compare/harness/common.mjs";

const log = logger("reload");

function parseArgs(argv) {
  const o = { reps: 5, out: null, quick: false, bin: process.env.TESSERA_BIN || path.join(ROOT, "build/src/cli/tessera") };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--reps") o.reps = Math.max(2, Number(argv[++i]));
    else if (a === "--tessera-bin") o.bin = argv[++i];
    else if (a === "--out") o.out = argv[++i];
    else if (a === "--quick") o.quick = true;
    else if (a === "--help" || a === "-h") {
      console.log("usage: node run.mjs [--reps N] [--tessera-bin PATH] [--out DIR] [--quick]");
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (o.quick) o.reps = 2;
  return o;
}

async function kindReport(url, token) {
  const r = await fetch(`${url}/api/kinds/arena`, { headers: { authorization: `Bearer ${token}` } });
  if (!r.ok) throw new Error(`GET /api/kinds/arena: ${r.status} ${await r.text()}`);
  return r.json();
}

// Polls the kind until the reload after `afterId` finishes.
async function waitReload(url, token, afterId, timeoutMs) {
  const until = Date.now() + timeoutMs;
  let quickSeen = null;
  while (Date.now() < until) {
    const k = await kindReport(url, token);
    const r = k.reload;
    if (r && r.id > afterId) {
      if (r.quick && !quickSeen) quickSeen = Date.now();
      if (r.state === "done" || r.state === "failed") return { report: r, quickSeen };
    }
    await sleep(5);
  }
  throw new Error(`no reload finished within ${timeoutMs} ms`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
};

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(o.bin)) throw new Error(`no tessera binary at ${o.bin} (make build, or --tessera-bin)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-reload-"));
  fs.cpSync(path.join(ROOT, "examples/arena"), dir, { recursive: true });
  fs.rmSync(path.join(dir, ".tessera"), { recursive: true, force: true });
  const source = path.join(dir, "shards/arena/arena.cc");
  const original = fs.readFileSync(source, "utf8");
  const marker = '"outside the arena"';
  if (!original.includes(marker)) throw new Error(`${source} no longer holds ${marker}`);

  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("TESSERA_")) env[k] = v;
  const dev = await startProcess(o.bin, ["dev", dir, "--port", "0", "--host", "127.0.0.1"], { env },
    /admin token: ([0-9a-f]+)[\s\S]*tessera dev: \S+ on (http:\/\/[\d.]+:\d+)|tessera dev: \S+ on (http:\/\/[\d.]+:\d+)[\s\S]*admin token: ([0-9a-f]+)/,
    180_000, "tessera dev");
  const url = dev.match[2] || dev.match[3];
  const token = dev.match[1] || dev.match[4];
  const player = spawn(o.bin, ["connect", "--url", url, "--shard", "reload-bench", "--kind", "arena", "--seconds", "3600"], { stdio: ["ignore", "pipe", "pipe"] });
  let playerOut = "";
  player.stdout.on("data", (d) => (playerOut += d.toString()).length > 200000 && (playerOut = playerOut.slice(-100000)));
  player.stderr.on("data", (d) => (playerOut += d.toString()));
  const rows = [];
  let failed = false;
  try {
    for (let t = Date.now(); !/WELCOME/.test(playerOut); await sleep(20)) {
      if (Date.now() - t > 30000) throw new Error(`the player did not join:\n${playerOut}`);
    }
    let lastId = (await kindReport(url, token)).reload?.id ?? 0;
    for (let rep = 0; rep <= o.reps; rep++) {
      const text = `"outside the arena (edit ${rep})"`;
      const t0 = Date.now();
      fs.writeFileSync(source, original.replace(marker, text));
      const { report } = await waitReload(url, token, lastId, 300_000);
      lastId = report.id;
      const moved = report.shards.filter((s) => s.reloaded).length;
      const ok = report.state === "done" && report.quick && moved === 1;
      if (!ok) {
        failed = true;
        log(`rep ${rep}: ${report.state} ${report.error ?? ""} (shards moved ${moved})`);
      }
      const row = {
        rep,
        first: rep === 0,
        quickMs: report.quick ? report.requestedUnixMs + report.quick.ms - t0 : null,
        optimisedMs: report.finishedUnixMs - t0,
        ok,
      };
      rows.push(row);
      log(`rep ${rep}${row.first ? " (first: PCH + SDK objects)" : ""}: quick ${row.quickMs} ms, optimised ${row.optimisedMs} ms`);
      await sleep(300);
    }
    if (!/WELCOME/.test(playerOut) || /CLOSED/.test(playerOut)) {
      failed = true;
      log(`the player was disconnected:\n${playerOut.slice(-2000)}`);
    }
  } finally {
    player.kill("SIGINT");
    await stopProcess(dev.child, "SIGINT", 20000);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const steady = rows.filter((r) => !r.first && r.ok);
  const q = median(steady.map((r) => r.quickMs));
  const b = median(steady.map((r) => r.optimisedMs));
  const load = os.loadavg().map((x) => x.toFixed(2)).join(" ");
  const md = [
    "# Hot reload: source saved → shard running the change",
    "",
    `examples/arena, one connected player, ${steady.length} reps after the first; machine load ${load}; ${new Date().toISOString()}`,
    "",
    "| | median | min | max |",
    "|---|---|---|---|",
    `| quick build swapped (-O0 guest + precompiled SDK, Tiny C) | ${q} ms | ${Math.min(...steady.map((r) => r.quickMs))} ms | ${Math.max(...steady.map((r) => r.quickMs))} ms |`,
    `| optimised build swapped (baseline: clang++ -O2, cc -O2) | ${b} ms | ${Math.min(...steady.map((r) => r.optimisedMs))} ms | ${Math.max(...steady.map((r) => r.optimisedMs))} ms |`,
    `| ratio quick / baseline | ${q && b ? (q / b).toFixed(2) : "-"}× | | |`,
    "",
    `First reload (builds the precompiled header and the SDK's -O0 objects): quick ${rows[0]?.quickMs} ms.`,
    "",
  ].join("\n");
  console.log(md);
  const out = o.out ?? (o.quick ? fs.mkdtempSync(path.join(os.tmpdir(), "reload-bench-")) : path.join(ROOT, "bench/reload"));
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, "RESULTS.md"), md);
  fs.writeFileSync(path.join(out, "results.json"), JSON.stringify({ rows, medianQuickMs: q, medianOptimisedMs: b, load }, null, 2));
  if (failed) process.exit(1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
