// What the side-by-side harnesses share (run.mjs here, ../realm/*.mjs and
// ../../realm/serving/*.mjs): starting and stopping server processes,
// waiting on bot processes, percentiles, priorities, counting a `ws`
// socket's bytes, and the facts about the machine and the versions.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository's root. */
export const ROOT = path.resolve(here, "../../..");
/** clients/ts: @tessera/client's build is dist/node.js there. */
export const TS_CLIENT_DIR = path.join(ROOT, "clients/ts");

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A logger that prefixes each line with `[tag hh:mm:ss]`, on stderr. */
export const logger = (tag) => (s) => console.error(`[${tag} ${new Date().toISOString().slice(11, 19)}] ${s}`);

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Starts a server process and waits for the stdout line `ready` matches.
export function startProcess(cmd, args, opts, ready, timeoutMs, name) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...opts });
    let out = "";
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${name} did not start in ${timeoutMs / 1000} s:\n${out}`)), timeoutMs);
    const finish = (err, match) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        child.kill("SIGKILL");
        reject(err);
      } else resolve({ child, match, output: () => out });
    };
    const onData = (d) => {
      out += d.toString();
      if (out.length > 100000) out = out.slice(-50000);
      const m = out.match(ready);
      if (m) finish(null, m);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code, sig) => finish(new Error(`${name} exited (${code ?? sig}) before it was ready:\n${out}`)));
  });
}

export async function stopProcess(child, signal, timeoutMs) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill(signal);
  const t = await Promise.race([exited.then(() => "exited"), sleep(timeoutMs).then(() => "timeout")]);
  if (t === "timeout") {
    child.kill("SIGKILL");
    await exited;
  }
}

/** Nearest rank; null for no samples. `sorted` ascending. */
export function percentile(sorted, q) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Resolves with the first IPC message of `type` from a forked child. */
export function waitFor(child, type, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`a bot process sent no "${type}" in ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const onMsg = (m) => {
      if (m?.type === type) {
        cleanup();
        resolve(m);
      }
    };
    const onExit = (code) => {
      cleanup();
      reject(new Error(`a bot process exited (${code}) before "${type}"`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMsg);
      child.off("exit", onExit);
    };
    child.on("message", onMsg);
    child.on("exit", onExit);
  });
}

/** Runs `fn` at Date.now() time `when`. */
export function sampleAt(when, fn) {
  return new Promise((resolve) => setTimeout(() => resolve(fn()), Math.max(0, when - Date.now())));
}

// Nice value of a process and its threads (a server's threads already run).
export function setPriority(pid, prio, log = console.error) {
  if (!prio || os.getPriority(pid) === prio) return;
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) os.setPriority(Number(tid), prio);
  } catch (e) {
    log(`cannot set priority ${prio} of ${pid}: ${e.message}`);
  }
}

/**
 * --priority: with autogroup scheduling (the default on Linux desktops and
 * on this kind of machine) nice values only weigh within a session, so the
 * controller runs again in a session of its own (setsid) and gives that
 * session's autogroup and itself the nice value; servers and bots inherit
 * it. Returns true in the parent, which must then do nothing else (it exits
 * with the child's code).
 */
export function enterPriority(priority, log) {
  if (!priority) return false;
  if (!process.env.COMPARE_OWN_SESSION) {
    const child = spawn("setsid", ["-w", process.execPath, ...process.argv.slice(1)], {
      stdio: "inherit",
      env: { ...process.env, COMPARE_OWN_SESSION: "1" },
    });
    child.on("exit", (code, sig) => process.exit(code ?? (sig ? 1 : 0)));
    for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => child.kill(s));
    return true;
  }
  try {
    fs.writeFileSync("/proc/self/autogroup", String(priority));
  } catch (e) {
    log(`cannot set the autogroup's nice to ${priority}: ${e.message}`);
  }
  try {
    os.setPriority(0, priority);
  } catch (e) {
    log(`cannot set nice ${priority}: ${e.message}`);
  }
  return false;
}

export function readVersion(dir, pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "node_modules", pkg, "package.json"), "utf8")).version;
  } catch {
    return "missing";
  }
}

// The commit the tessera binary was built from: COMPARE_TESSERA_REV when
// set (a binary built elsewhere), else the work tree's HEAD, "+dirty" when
// src/ or sdk/ has uncommitted changes.
export function gitFacts() {
  if (process.env.COMPARE_TESSERA_REV) return { commit: process.env.COMPARE_TESSERA_REV };
  try {
    const head = execFileSync("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"]).toString().trim();
    const dirty = execFileSync("git", ["-C", ROOT, "status", "--porcelain", "--", "src", "sdk"]).toString().trim() !== "";
    return { commit: head + (dirty ? "+dirty" : "") };
  } catch {
    return { commit: "unknown" };
  }
}

export function cpuModel() {
  try {
    const m = fs.readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.+)$/m);
    return m ? m[1] : "unknown";
  } catch {
    return "unknown";
  }
}

/** `tessera --version`, or why there is none. */
export function tesseraVersion(bin) {
  if (!fs.existsSync(bin)) return "not found";
  try {
    return execFileSync(bin, ["--version"]).toString().trim();
  } catch {
    return "unknown";
  }
}

/** What the tables say about the machine. */
export function machineFacts(loadAverage) {
  return {
    nproc: os.cpus().length,
    cpu: cpuModel(),
    memory_gib: +(os.totalmem() / 2 ** 30).toFixed(1),
    kernel: os.release(),
    load_at_start: loadAverage(),
  };
}

/** Bytes of a WebSocket message payload as `ws` hands it over (or sends it). */
export function byteLength(data) {
  if (data == null) return 0;
  if (typeof data === "string") return Buffer.byteLength(data);
  if (Array.isArray(data)) return data.reduce((n, d) => n + byteLength(d), 0);
  return data.byteLength ?? data.length ?? 0;
}

/**
 * Counts a `ws` socket's message payloads both ways: a second "message"
 * listener beside the client library's own, and a wrapped send(). WebSocket
 * frame headers (2-10 bytes a message), TCP and IP are not counted.
 */
export function observe(ws, hooks) {
  ws.on("message", (data) => hooks.onRecv(byteLength(data)));
  const send = ws.send;
  ws.send = function (data, ...rest) {
    hooks.onSend(byteLength(data));
    return send.call(this, data, ...rest);
  };
}
