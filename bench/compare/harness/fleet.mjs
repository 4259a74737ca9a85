// The bot processes of a side-by-side run (run.mjs here, ../realm/run.mjs):
// fork them, spread the joins over a ramp, run one measured window while
// sampling the server's and the harness's CPU, collect the reports and stop
// them. The bots themselves (worker.mjs of each harness) differ.
import { fork } from "node:child_process";
import { sampleAt, setPriority, sleep, stopProcess, waitFor } from "./common.mjs";
import { cpuSeconds, cpuSplit, loadAverage, machineCpu, statusBytes } from "./proc.mjs";

/**
 * Forks ceil(n / botsPerWorker) processes of `worker` for `n` bots whose
 * joins spread over `rampMs`, sends each its "start" with `config(bots)`
 * and waits for every "joined". Returns the fleet (stop it with stopFleet,
 * also on failure: the fleet is returned through `out` as soon as it has
 * processes).
 */
export async function startFleet({ worker, n, botsPerWorker, rampMs, priority, log, name, config, serialization, out }) {
  const nWorkers = Math.max(1, Math.ceil(n / botsPerWorker));
  const t0 = Date.now() + 500;
  const perWorker = Array.from({ length: nWorkers }, () => []);
  for (let i = 0; i < n; i++) {
    perWorker[i % nWorkers].push({ id: `bot-${String(i).padStart(4, "0")}`, index: i, joinAt: t0 + Math.floor((i * rampMs) / n) });
  }
  const fleet = out ?? {};
  fleet.workers = [];
  fleet.nWorkers = nWorkers;
  for (let w = 0; w < nWorkers; w++) {
    // COMPARE_WORKER_NODE_ARGS: node flags for the bot processes (e.g.
    // "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the harness).
    const execArgv = process.env.COMPARE_WORKER_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
    const child = fork(worker, [], {
      execArgv,
      ...(serialization ? { serialization } : {}),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    setPriority(child.pid, priority, log);
    fleet.workers.push(child);
  }
  log(`${name}: ${n} bots in ${nWorkers} process(es), joins over ${rampMs / 1000} s`);
  const joinedP = fleet.workers.map((w) => waitFor(w, "joined", rampMs + 120_000));
  fleet.workers.forEach((w, i) => w.send({ type: "start", config: config(perWorker[i]) }));
  const joined = await Promise.all(joinedP);
  fleet.joined = {
    ok: joined.reduce((a, j) => a + j.ok, 0),
    failed: joined.reduce((a, j) => a + j.failed, 0),
    errors: joined.flatMap((j) => j.errors),
    secs: (Date.now() - t0) / 1000,
  };
  const j = fleet.joined;
  log(`${name}: ${j.ok} joined, ${j.failed} failed in ${j.secs.toFixed(1)} s${j.errors.length ? ` (${j.errors[0]})` : ""}`);
  return fleet;
}

/**
 * The measured window: starts `warmupS` from now, lasts `durationS`; each
 * bot gets {type: "window", start, end, ...extra(start, end)}. Samples the
 * server `pid` (null: none), the bot processes, this process and the
 * machine at both ends, then waits `graceMs` and collects every "report".
 */
export async function measureWindow(fleet, { pid, warmupS, durationS, graceMs, extra, log, name }) {
  const { workers } = fleet;
  const start = Date.now() + warmupS * 1000;
  const end = start + durationS * 1000;
  for (const w of workers) w.send({ type: "window", start, end, ...(extra ? extra(start, end) : {}) });
  const sample = () => ({
    at: Date.now(),
    server: pid ? cpuSeconds(pid) : NaN,
    serverSplit: pid ? cpuSplit(pid) : { user: NaN, system: NaN },
    workers: workers.map((w) => cpuSeconds(w.pid, { withChildren: false })),
    controller: process.cpuUsage(),
    machine: machineCpu(),
    load: loadAverage(),
  });
  const s0 = await sampleAt(start, sample);
  log(`${name}: measuring ${durationS} s`);
  const s1 = await sampleAt(end, sample);
  const rss = pid ? statusBytes(pid, "VmRSS") : NaN;
  const peakRss = pid ? statusBytes(pid, "VmHWM") : NaN;
  await sleep(graceMs);
  const reports = await Promise.all(
    workers.map((w) => {
      const p = waitFor(w, "report", 60_000);
      w.send({ type: "report" });
      return p;
    }),
  );
  const workerCpu = s1.workers.map((c, i) => c - s0.workers[i]);
  return {
    s0,
    s1,
    rss,
    peakRss,
    reports,
    stats: reports.map((r) => r.stats),
    windowS: (s1.at - s0.at) / 1000,
    serverCpu: s1.server - s0.server,
    serverUser: s1.serverSplit.user - s0.serverSplit.user,
    serverSystem: s1.serverSplit.system - s0.serverSplit.system,
    workerCpu,
    controllerCpu: (s1.controller.user + s1.controller.system - s0.controller.user - s0.controller.system) / 1e6,
    machineBusy: (s1.machine.busy - s0.machine.busy) / (s1.machine.total - s0.machine.total),
  };
}

/** Tells the bots to close and exit; kills the stragglers. */
export async function stopFleet(fleet) {
  const workers = fleet.workers ?? [];
  const exits = workers.map((w) => (w.exitCode !== null || w.signalCode !== null ? null : new Promise((r) => w.once("exit", r))));
  for (const w of workers) if (w.connected) w.send({ type: "exit" });
  await Promise.race([Promise.all(exits), sleep(5000)]);
  await Promise.all(workers.map((w) => stopProcess(w, "SIGTERM", 5000).catch(() => {})));
}
