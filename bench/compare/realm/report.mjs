// RESULTS.md of bench/compare/realm from results.json: one table, a column
// per server, the ratios tessera/Hocuspocus, the targets, the machine and
// the versions, and warnings where the harness or the machine was saturated.

const MiB = 2 ** 20;

export function num(v, digits = 1) {
  if (v == null || Number.isNaN(v)) return "-";
  if (Math.abs(v) >= 1000 && digits <= 1) return Math.round(v).toLocaleString("en-US");
  return v.toFixed(digits);
}

export function ratio(a, b) {
  if (a == null || b == null || Number.isNaN(a) || Number.isNaN(b) || b === 0) return "-";
  const r = a / b;
  return r !== 0 && Math.abs(r) < 0.1 ? r.toPrecision(2) : r.toFixed(2);
}

const LABEL = {
  tessera: "tessera (durable)",
  "tessera-ephemeral": "tessera (ephemeral)",
  "tessera-unbatched": "tessera (durable, batchMs 0)",
  hocuspocus: "Hocuspocus",
};

// Warnings about one run's conditions.
export function caveats(r) {
  if (r.error) return [`the run failed: ${r.error}`];
  const out = [];
  if (r.join_failed > 0) out.push(`${r.join_failed} of ${r.clients} clients could not join (${r.join_errors[0] ?? "?"})`);
  if (r.harness.busiest_process_core_share > 0.85) {
    out.push(
      `the harness was saturated (busiest bot process at ${Math.round(r.harness.busiest_process_core_share * 100)}% of a core): ` +
        `receipts queued in the bots, and the latencies include that queueing`,
    );
  } else if (r.harness.event_loop_delay_p99_ms > 50) {
    out.push(`the bots' event loops lagged (p99 ${num(r.harness.event_loop_delay_p99_ms)} ms): they waited for a CPU, and so do the latencies`);
  }
  const due = r.joined * r.rate * r.window_s;
  if (r.writes < 0.95 * due) out.push(`the bots sent ${Math.round((100 * r.writes) / due)}% of the ${Math.round(due)} writes due (late timers)`);
  if (r.machine.busy_share > 0.9) {
    out.push(`the machine was ${Math.round(r.machine.busy_share * 100)}% busy over the window (both cores): server and bots queued for CPU`);
  }
  if (r.deliveries !== r.deliveries_expected) {
    out.push(`${r.deliveries_expected - r.deliveries} of ${r.deliveries_expected} deliveries (write × observing client) never arrived within 2 s of the window`);
  }
  const refused = Object.entries(r.write_outcomes).filter(([k]) => k !== "committed");
  if (refused.length) out.push(`writes not committed: ${JSON.stringify(Object.fromEntries(refused))}`);
  const errs = Object.entries(r.write_errors ?? {});
  if (errs.length) out.push(`writes that could not be made (the bot stopped): ${JSON.stringify(Object.fromEntries(errs))}`);
  if (r.connections_lost > 0) out.push(`${r.connections_lost} connections were lost (codes ${JSON.stringify(r.close_codes)})`);
  return out;
}

function table(runs) {
  const hp = runs.find((r) => r.server === "hocuspocus" && !r.error);
  const ts = runs.filter((r) => r.server !== "hocuspocus");
  const cols = runs;
  const rows = [];
  const head = ["", ...cols.map((r) => LABEL[r.server] ?? r.server), ...ts.map((r) => `${LABEL[r.server]} / Hocuspocus`)];
  rows.push(`| ${head.join(" | ")} |`);
  rows.push(`|${head.map((_, i) => (i ? "---:" : "---")).join("|")}|`);
  const g = (r, f) => (r && !r.error ? f(r) : null);
  const line = (label, f, digits = 1, showRatio = true) => {
    const cells = cols.map((r) => num(g(r, f), digits));
    const rats = ts.map((r) => (showRatio ? ratio(g(r, f), g(hp, f)) : ""));
    rows.push(`| ${[label, ...cells, ...rats].join(" | ")} |`);
  };
  line("clients joined", (r) => r.joined, 0, false);
  line("writes in the window", (r) => r.writes, 0, false);
  line("**server CPU per write (µs)**, utime+stime / writes", (r) => r.server_cpu_us_per_write, 1);
  line("server CPU over the window (s)", (r) => r.server_cpu_s, 2);
  line("of which in the kernel, stime (s)", (r) => r.server_cpu_system_s, 2);
  line("server CPU (share of one core)", (r) => r.server_cpu_share_of_one_core, 2);
  line("the same server idle before the load, no client (share of one core)", (r) => r.server_idle_cpu_share_of_one_core, 3);
  line("**write → other clients latency p50 (ms)**", (r) => r.latency_ms.p50, 2);
  line("latency p90 (ms)", (r) => r.latency_ms.p90, 2);
  line("**latency p99 (ms)**", (r) => r.latency_ms.p99, 2);
  line("latency max (ms)", (r) => r.latency_ms.max, 1);
  line("deliveries (write × observer) received / expected", (r) => r.deliveries / r.deliveries_expected, 4, false);
  line("**bytes received per client over the window (KiB)**", (r) => r.recv_bytes_per_client / 1024, 1);
  line("bytes received per client per second", (r) => r.recv_bytes_per_client_s, 0);
  line("messages received per client per second", (r) => r.recv_messages_per_client_s, 1);
  line("bytes sent per client per second", (r) => r.sent_bytes_per_client_s, 0);
  line("**server RSS at the end, VmRSS (MiB)**", (r) => r.server_rss_end_bytes / MiB, 1);
  line("server peak RSS, VmHWM (MiB)", (r) => r.server_peak_rss_bytes / MiB, 1);
  line("**reconnect after missing N updates: bytes received** (median)", (r) => r.reconnect.median_recv_bytes, 0);
  line("reconnect: bytes sent (median)", (r) => r.reconnect.median_sent_bytes, 0);
  line("reconnect: messages received (median)", (r) => r.reconnect.median_recv_messages, 0);
  line("**reconnect: time until it holds the last write (ms)** (median)", (r) => r.reconnect.median_ms, 1);
  rows.push(`| reconnect: how | ${cols.map((r) => (r.error ? "-" : r.reconnect.modes.join(", "))).join(" | ")} | ${ts.map(() => "").join(" | ")} |`);
  line("harness CPU, all bot processes (s)", (r) => r.harness.cpu_s, 1, false);
  line("busiest bot process (share of one core)", (r) => r.harness.busiest_process_core_share, 2, false);
  line("machine busy over the window (share of both cores)", (r) => r.machine.busy_share, 2, false);
  rows.push(`| load average at the start | ${cols.map((r) => (r.error ? "-" : r.machine.load_at_start.join(" "))).join(" | ")} | ${ts.map(() => "").join(" | ")} |`);
  return rows.join("\n");
}

function verdict(runs) {
  const hp = runs.find((r) => r.server === "hocuspocus" && !r.error);
  if (!hp) return "No Hocuspocus run to compare with.";
  const out = [];
  for (const t of runs.filter((r) => r.server !== "hocuspocus" && !r.error)) {
    const cpu = hp.server_cpu_us_per_write / t.server_cpu_us_per_write;
    const p99 = t.latency_ms.p99 / hp.latency_ms.p99;
    out.push(
      `- ${LABEL[t.server]}: server CPU per write ${num(t.server_cpu_us_per_write)} µs against ${num(hp.server_cpu_us_per_write)} µs, ` +
        `${cpu >= 1 ? `${cpu.toFixed(2)}× less` : `${(1 / cpu).toFixed(2)}× more`} (target at least 3× less: **${cpu >= 3 ? "met" : "not met"}**); ` +
        `latency p99 ${num(t.latency_ms.p99, 2)} ms against ${num(hp.latency_ms.p99, 2)} ms (target no worse: **${p99 <= 1 ? "met" : "not met"}**).`,
    );
  }
  return out.join("\n");
}

export function renderMarkdown({ meta, runs }) {
  const o = meta.options;
  const v = meta.versions;
  const m = meta.machine;
  const warn = runs.flatMap((r) => caveats(r).map((c) => `- ${LABEL[r.server] ?? r.server}: ${c}`));
  const debug = /debug|Debug|-O0/.test(v.tessera_build ?? "") || /\/bu\//.test(v.tessera_bin);
  return `# tessera realm vs Hocuspocus: a shared document with presence

Generated by \`make compare-realm\` (\`bench/compare/realm/run.mjs\`${o.quick ? " --quick" : ""}) on ${meta.started_at} – ${meta.finished_at ?? "(unfinished)"}. Method: [../README.md](../README.md) ("Realms: tessera vs Hocuspocus"); raw figures: [results.json](results.json).

Load: ${o.clients} clients on one document, each writing its own subtree (x, y, seq and a send stamp, as one write) ${o.rate} times a second; after a ${o.warmup_s} s warm-up, ${o.duration_s} s are measured. ${o.observers < o.clients ? `${o.observers} of the clients (observers) decode every message and record, for every other client's write sent in the window, the time from the stamp to its receipt; the other ${o.clients - o.observers} receive and count every message but drop the other clients' writes before their client library decodes them (the servers send the same either way; decoding ${o.clients - 1} clients' writes in all ${o.clients} bots would take more CPU than this machine has beside the server).` : "Every client decodes every message and records, for every other client's write sent in the window, the time from the stamp to its receipt."} The clients run in ceil(N/${o.bots_per_worker}) Node processes on the same machine as the server. Then, with the clients connected and quiet, one client disconnects, another writes ${o.missed} times, and the first reconnects with what it holds (${o.reconnects} times; medians).${o.priority ? ` Servers and bots ran at nice ${o.priority}.` : ""}

## Machine and versions

- ${m.nproc} cores (${m.cpu}), ${m.memory_gib} GiB, Linux ${m.kernel}; load average at the start ${m.load_at_start.join(" ")}
- Node ${v.node} (the Hocuspocus server and every bot)
- ${v.tessera} (git ${v.git.commit}), \`tessera dev\`, binary \`${v.tessera_bin}\`${debug ? " — **a -O0 debug build**: its CPU figures are far above a release build's" : ""}; @tessera/client ${v.tessera_client} (ws ${v.tessera_client_ws})
- @hocuspocus/server ${v.hocuspocus_server}, @hocuspocus/provider ${v.hocuspocus_provider}, yjs ${v.yjs}, y-protocols ${v.y_protocols}, ws ${v.ws}

## Results

${table(runs)}

${warn.length ? `Warnings:\n\n${warn.join("\n")}\n` : "No warnings: every client joined, every write reached every observing client, nothing was refused or lost, and neither the harness nor the machine was saturated.\n"}
tessera (durable) is the realm kind \`doc\` of [app/tessera.json](app/tessera.json): every write is in SQLite (WAL, synchronous=FULL) before anyone hears of it (group commit), and with \`batchMs: 16\` what arrives within 16 ms of a group commit going out waits to go out as the next one (docs/realms.md "Batching"; a write after a quiet spell is not held). tessera (ephemeral) is the kind \`presence\`: the same rules and batching, nothing stored. tessera (durable, batchMs 0) is the kind \`doc-unbatched\`: \`doc\` without batching, every group commit sent at once. Hocuspocus runs without extensions, so it stores nothing either; its documents live while a client is connected.

## Targets

${verdict(runs)}
`;
}
