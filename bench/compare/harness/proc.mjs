// Reading /proc: a process's CPU seconds (its threads, its live descendants
// and its reaped children), peak RSS, and the machine's CPU.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

let clkTck = 100;
try {
  clkTck = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
} catch {
  /* 100 on Linux */
}

function readStat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after "(comm)": state is field 3; utime 14, stime 15,
    // cutime 16, cstime 17 (1-based, proc(5)).
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return {
      ppid: Number(f[1]),
      utime: Number(f[11]),
      stime: Number(f[12]),
      cutime: Number(f[13]),
      cstime: Number(f[14]),
    };
  } catch {
    return null;
  }
}

function descendants(pid) {
  const children = new Map();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const st = readStat(d);
    if (!st) continue;
    if (!children.has(st.ppid)) children.set(st.ppid, []);
    children.get(st.ppid).push(Number(d));
  }
  const out = [];
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    for (const c of children.get(p) ?? []) {
      out.push(c);
      todo.push(c);
    }
  }
  return out;
}

/** User and system CPU seconds of `pid` alone (its threads). */
export function cpuSplit(pid) {
  const st = readStat(pid);
  return st ? { user: st.utime / clkTck, system: st.stime / clkTck } : { user: NaN, system: NaN };
}

/** CPU seconds used so far by `pid`, its live descendants and its reaped children. */
export function cpuSeconds(pid, { withChildren = true } = {}) {
  const st = readStat(pid);
  if (!st) return NaN;
  let ticks = st.utime + st.stime + st.cutime + st.cstime;
  if (withChildren) {
    for (const c of descendants(pid)) {
      const cs = readStat(c);
      if (cs) ticks += cs.utime + cs.stime;
    }
  }
  return ticks / clkTck;
}

/** The `Vm*` line of /proc/<pid>/status in bytes (VmHWM: peak RSS). */
export function statusBytes(pid, key) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = s.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The machine's CPU counters (jiffies): busy and total, from /proc/stat. */
export function machineCpu() {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / clkTck, total: total / clkTck };
}

export function loadAverage() {
  return fs.readFileSync("/proc/loadavg", "utf8").trim().split(/\s+/).slice(0, 3).map(Number);
}
