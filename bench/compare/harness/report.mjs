// RESULTS.md from results.json: one table per N, ratios tessera/Colyseus,
// the machine and the versions, and warnings where the harness or the
// machine was saturated (the figures then say more about the machine than
// about the servers).

const MiB = 2 ** 20;

function num(v, digits = 1) {
  if (v == null || Number.isNaN(v)) return "-";
  if (Math.abs(v) >= 1000 && digits <= 1) return Math.round(v).toLocaleString("en-US");
  return v.toFixed(digits);
}

function ratio(a, b) {
  if (a == null || b == null || Number.isNaN(a) || Number.isNaN(b) || b === 0) return "-";
  return `${(a / b).toFixed(2)}`;
}

// Warnings about one run's conditions.
export function caveats(r) {
  const out = [];
  if (r.error) return [`the run failed: ${r.error}`];
  if (r.join_failed > 0) out.push(`${r.join_failed} of ${r.bots} bots could not join (${r.join_errors[0] ?? "?"})`);
  if (r.harness.busiest_process_core_share > 0.85) {
    out.push(
      `the harness was saturated (busiest bot process at ${Math.round(r.harness.busiest_process_core_share * 100)}% of a core): ` +
        `the bots could not keep up, and their round trips include their own queueing`,
    );
  } else if (r.harness.event_loop_delay_p99_ms > 50) {
    out.push(
      `the bots' event loops lagged (p99 ${num(r.harness.event_loop_delay_p99_ms)} ms, busiest bot process at ` +
        `${Math.round(r.harness.busiest_process_core_share * 100)}% of a core): they waited for a CPU, and so do their round trips`,
    );
  }
  const expected = r.joined * r.rate * r.window_s;
  if (r.inputs_sent < 0.95 * expected) {
    out.push(`the bots sent ${Math.round((100 * r.inputs_sent) / expected)}% of the ${Math.round(expected)} inputs due in the window (late timers)`);
  }
  if (r.machine.busy_share > 0.9) {
    out.push(`the machine was ${Math.round(r.machine.busy_share * 100)}% busy over the window (every core): the processes queued for CPU`);
  }
  if (r.connections_lost > 0) {
    out.push(`${r.connections_lost} connections were lost or closed by the server (codes ${JSON.stringify(r.close_codes)})`);
  }
  if (r.unanswered > 0) out.push(`${r.unanswered} inputs sent in the window had no ACK/REJECT 2 s after it`);
  if (r.wrong_rejections > 0) {
    out.push(`${r.wrong_rejections} rejections were not the arena's (texts: ${JSON.stringify(r.wrong_rejection_texts ?? {})})`);
  }
  return out;
}

function table(t, c) {
  const rows = [];
  const row = (label, a, b, rat) => rows.push(`| ${label} | ${a} | ${b} | ${rat} |`);
  rows.push("| | tessera | Colyseus | tessera / Colyseus |");
  rows.push("|---|---:|---:|---:|");
  const g = (r, f) => (r && !r.error ? f(r) : null);
  const line = (label, f, digits = 1, showRatio = true) =>
    row(label, num(g(t, f), digits), num(g(c, f), digits), showRatio ? ratio(g(t, f), g(c, f)) : "");
  line("server CPU over the window (s)", (r) => r.server_cpu_s, 2);
  line("of which in the kernel, system time (s)", (r) => r.server_cpu_system_s, 2);
  line("server CPU per connected player (ms per player-second)", (r) => r.server_cpu_ms_per_player_s, 3);
  line("server CPU (share of one core)", (r) => r.server_cpu_share_of_one_core, 2);
  line("server peak RSS, VmHWM (MiB)", (r) => r.server_peak_rss_bytes / MiB, 1);
  line("round trip send→ACK/REJECT p50 (ms)", (r) => r.rtt_ms.p50, 1);
  line("round trip p99 (ms)", (r) => r.rtt_ms.p99, 1);
  line("round trip max (ms)", (r) => r.rtt_ms.max, 1);
  line("bytes received per client per second (WebSocket payloads)", (r) => r.recv_bytes_per_client_s, 0);
  line("all bots together, MB received per second", (r) => (r.recv_bytes_per_client_s * r.joined) / 1e6, 1);
  line("messages received per client per second", (r) => r.recv_messages_per_client_s, 1);
  line("bytes sent per client per second (WebSocket payloads)", (r) => r.sent_bytes_per_client_s, 0);
  line("inputs sent in the window", (r) => r.inputs_sent, 0, false);
  line("ACKs", (r) => r.acks, 0, false);
  line("refusals (REJECT \"outside the arena\")", (r) => r.rejects, 0, false);
  line("unanswered", (r) => r.unanswered, 0, false);
  row(
    "bots joined / connections lost",
    t && !t.error ? `${t.joined} / ${t.connections_lost}` : "-",
    c && !c.error ? `${c.joined} / ${c.connections_lost}` : "-",
    "",
  );
  line("harness CPU, all bot processes (s)", (r) => r.harness.cpu_s, 1, false);
  line("harness busiest bot process (share of one core)", (r) => r.harness.busiest_process_core_share, 2, false);
  line("harness event loop delay p99 (ms)", (r) => r.harness.event_loop_delay_p99_ms, 1, false);
  line("machine busy over the window (share of all cores)", (r) => r.machine.busy_share, 2, false);
  row(
    "load average at the window's start",
    t && !t.error ? t.machine.load_at_start.join(" ") : "-",
    c && !c.error ? c.machine.load_at_start.join(" ") : "-",
    "",
  );
  return rows.join("\n");
}

// The loopback floor's paragraph for N (see ../floor/loopback_floor.cc).
function floorLine(f, t, c) {
  if (!f) return null;
  const perWindow = (f.cpu_s / f.seconds) * (t?.window_s ?? c?.window_s ?? f.seconds);
  const vs = (r, name) => (r && !r.error ? `${name} used ${(r.server_cpu_s / perWindow).toFixed(1)}× that` : null);
  return (
    `**Loopback floor:** the kernel alone needs ${num(perWindow, 2)} s of CPU over the window to send each of the ${f.clients} ` +
    `clients one ${f.bytes}-byte message ${f.rate} times a second over loopback TCP (${num(f.us_per_send, 2)} µs a send; ` +
    "on loopback the sender also pays for most of the receiver's TCP work). A server sending a frame a tick cannot use less. " +
    [vs(t, "tessera"), vs(c, "Colyseus")].filter(Boolean).join(", ") +
    (c && !c.error ? `; no server can be more than ${(c.server_cpu_s / perWindow).toFixed(1)}× cheaper than Colyseus here.` : ".")
  );
}

export function renderMarkdown({ meta, runs, floors = [] }) {
  const L = [];
  const o = meta.options;
  const v = meta.versions;
  L.push("# tessera vs Colyseus: the arena under the same load");
  L.push("");
  L.push(
    `Generated by \`make compare\` (\`bench/compare/harness/run.mjs\`${o.quick ? " --quick" : ""}) on ${meta.started_at}` +
      `${meta.finished_at ? ` – ${meta.finished_at}` : " (incomplete)"}. Method and fairness choices: [README.md](README.md); raw figures: [results.json](results.json).`,
  );
  L.push("");
  L.push(
    `Load: N bots join one arena (ramped over ${typeof o.ramp_s === "number" ? `${o.ramp_s} s` : "max(2, N/200) s"}), each sends move_to ${o.rate} times a second ` +
      `(${Math.round(o.reject_fraction * 100)}% of them outside the arena, refused); after a ${o.warmup_s} s warm-up, ${o.duration_s} s are measured. ` +
      `Bots run in ceil(N/${o.bots_per_worker}) Node processes on the same machine as the server. ` +
      (o.state === "skip"
        ? "State messages are received and counted but not decoded by the bots (`--state skip`, the same for both servers; see README.md)."
        : "The client libraries decode every state message (`--state decode`).") +
      (o.priority ? ` Servers and bots ran at nice ${o.priority}, above the machine's other work.` : ""),
  );
  L.push("");
  L.push("## Machine and versions");
  L.push("");
  L.push(`- ${meta.machine.nproc} cores (${meta.machine.cpu}), ${meta.machine.memory_gib} GiB, Linux ${meta.machine.kernel}`);
  L.push(`- load average when the run started: ${meta.machine.load_at_start.join(" ")} (other work on the machine: see each table's last rows)`);
  L.push(`- Node ${v.node} (the Colyseus server and every bot)`);
  L.push(`- ${v.tessera} (git ${v.git.commit}), \`tessera dev\`, RelWithDebInfo build; @tessera/client ${v.tessera_client} (ws ${v.tessera_client_ws}, @msgpack/msgpack ${v.tessera_client_msgpack})`);
  L.push(
    `- Colyseus: @colyseus/core ${v.colyseus_core}, @colyseus/ws-transport ${v.colyseus_ws_transport} (ws ${v.colyseus_server_ws}), @colyseus/schema ${v.colyseus_schema_server}; ` +
      `client colyseus.js ${v.colyseus_js} (@colyseus/schema ${v.colyseus_schema_client}, ws ${v.colyseus_client_ws})`,
  );
  L.push("");
  L.push("## Reading the tables");
  L.push("");
  const replicate = (o.tessera_mode ?? "snapshot") === "replicate";
  L.push(
    (replicate
      ? "The tessera arena shard runs in its replication mode (create params `replicate: true`, `--tessera-mode replicate`): " +
        "the players are replicated entities (position to 0.1 units, the subscriber id as a component), and each FRAME " +
        "carries only the players that moved since the client's last frame, as bit-packed differences; every client in " +
        "step gets the same bytes, encoded once per tick. "
      : "The tessera arena shard runs without replication (`--tessera-mode snapshot`): every FRAME carries every " +
        "player's state to every client, 20 times a second, so bytes per client grow with N and the server's output " +
        "with N². ") +
      "The Colyseus room sends schema patches holding only the players that moved since the last patch (also encoded " +
      "once per patch for all clients). Neither server filters by interest: every client sees every player. " +
      "The bots share the machine's cores with the server: when they cannot read what a server writes, its CPU looks " +
      "lower than its real cost (it writes only what is read) and its round trips longer (ACKs queue behind unread " +
      "frames); tessera then skips frames for those clients or sends them a new baseline (`docs/protocol.md`, \"Slow " +
      "readers\"). The warnings under a table say when that happened; such a run measures the machine, not the server.",
  );
  L.push("");
  const ns = [...new Set(runs.map((r) => r.bots))];
  for (const n of ns) {
    const t = runs.find((r) => r.bots === n && r.server === "tessera");
    const c = runs.find((r) => r.bots === n && r.server === "colyseus");
    L.push(`## N = ${n}`);
    L.push("");
    L.push(table(t, c));
    L.push("");
    const floor = floorLine(floors.find((f) => f.bots === n), t, c);
    if (floor) {
      L.push(floor);
      L.push("");
    }
    for (const [name, r] of [["tessera", t], ["Colyseus", c]]) {
      if (!r) continue;
      for (const w of caveats(r)) L.push(`- **${name}**: ${w}.`);
    }
    L.push("");
  }
  // The issue's target, at the largest N.
  const nMax = Math.max(...ns);
  const t = runs.find((r) => r.bots === nMax && r.server === "tessera" && !r.error);
  const c = runs.find((r) => r.bots === nMax && r.server === "colyseus" && !r.error);
  L.push("## Target");
  L.push("");
  if (t && c) {
    const cpuRatio = t.server_cpu_ms_per_player_s / c.server_cpu_ms_per_player_s;
    const p99Ratio = t.rtt_ms.p99 / c.rtt_ms.p99;
    const cpuOk = cpuRatio <= 0.2;
    const p99Ok = p99Ratio <= 1;
    L.push(
      `At N = ${nMax}: tessera's server CPU per connected player is ${cpuRatio.toFixed(2)}× Colyseus's ` +
        `(${(1 / cpuRatio).toFixed(1)}× less; target at least 5× less: **${cpuOk ? "met" : "not met"}**), ` +
        `its round trip p99 ${num(t.rtt_ms.p99)} ms against ${num(c.rtt_ms.p99)} ms (target no worse: **${p99Ok ? "met" : "not met"}**).` +
        (caveats(t).length || caveats(c).length
          ? ` The runs at N = ${nMax} have warnings (above): the verdict holds for this machine under that load, not for the servers alone.`
          : ""),
    );
  } else {
    L.push(`No complete pair of runs at N = ${nMax}.`);
  }
  L.push("");
  return L.join("\n");
}
