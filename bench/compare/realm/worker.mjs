// One bot process of bench/compare/realm (and bench/realm/serving): plays
// the bots the controller hands it against one server, through one adapter
// (adapters.mjs), with the bot logic below, the same for every server.
//
// Messages from the controller (IPC, "advanced" serialization):
//   {type: "start", config}        join config.bots at their join times
//   {type: "window", start, end, clockStart, clockEnd}
//                                  Date.now() times of the byte window, and
//                                  the same on the clock of adapters.mjs:
//                                  write until clockEnd; writes sent in
//                                  [clockStart, clockEnd] are measured
//   {type: "report"}               -> {type: "report", stats}
//   {type: "exit"}                 close every connection and exit
// To the controller: {type: "joined", ok, failed, errors}, {type: "report"}.
//
// Observers: the bots with index < config.observers decode everything and
// take the latencies; the others receive and count every message but drop
// the other bots' writes before their client library sees them (adapters.mjs,
// decode: false). With N clients each writing R times a second every client
// receives (N-1)R writes a second: decoding all of them in every bot costs
// the harness O(N^2 R) CPU (at N = 100, R = 5, more than this machine's two
// cores with a server beside it), while the servers send the same either way.
//
// The bot logic: each bot joins at its time, and from the "window" message
// on writes its four fields (adapters.mjs) `rate` times a second, evenly
// spaced from a random phase on a fixed timeline (a timer that fires late
// does not shift the later writes), x and y from its own seeded random
// sequence. Every bot records, for each other bot's write sent inside the
// window, the time from its send stamp to its receipt here; bytes are
// counted while the window is open.
import { monitorEventLoopDelay } from "node:perf_hooks";

import { clock, makeRealmAdapter } from "./adapters.mjs";

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A growable list of float64 samples.
class Samples {
  constructor() {
    this.a = new Float64Array(1 << 16);
    this.n = 0;
  }
  push(v) {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  take() {
    return this.a.slice(0, this.n);
  }
}

const stats = {
  joined: 0,
  joinFailed: 0,
  joinErrors: [],
  sent: 0, // writes sent inside the window
  sentByObservers: 0, // of those, by observers
  writeErrors: {}, // writes that threw (a closed connection), by message
  outcomes: {}, // their answers, counted (tessera: committed / rejected: code / unknown)
  received: 0, // other bots' writes sent inside the window and received by an observer here
  recvBytes: 0, // WebSocket payload bytes received inside the window
  recvMessages: 0,
  sendBytes: 0,
  closes: 0, // connections closed by the server or lost
  closeCodes: {},
  windowMs: 0,
  loopDelay: null,
};
const latency = new Samples(); // ms, send stamp -> receipt, writes sent inside the window

let measuring = false; // the byte window is open (Date.now() inside it)
let win = null; // {start, end} on the clock of adapters.mjs
const bots = [];
const loop = monitorEventLoopDelay({ resolution: 10 });

class Bot {
  constructor(id, index, cfg) {
    this.id = id;
    this.index = index;
    this.cfg = cfg;
    this.random = mulberry32(cfg.seed * 1000003 + index);
    this.handle = null;
    this.timer = null;
    this.seq = 0;
  }

  hooks() {
    return {
      onRemote: (from, seq, t) => {
        if (from === this.id || !win || !(t >= win.start && t <= win.end)) return;
        latency.push(clock() - t);
        stats.received++;
      },
      onRecv: (n) => {
        if (!measuring) return;
        stats.recvBytes += n;
        stats.recvMessages++;
      },
      onSend: (n) => {
        if (measuring) stats.sendBytes += n;
      },
      onClose: (code) => {
        if (this.closing) return;
        stats.closes++;
        stats.closeCodes[code] = (stats.closeCodes[code] ?? 0) + 1;
      },
    };
  }

  async join(adapter) {
    this.observer = this.index < this.cfg.observers;
    this.handle = await adapter.connect(this.id, this.hooks(), { decode: this.observer });
  }

  // Writes on the timeline first + k / rate (clock ms) until `end`.
  startWriting(end) {
    const period = 1000 / this.cfg.rate;
    const first = clock() + this.random() * period;
    let k = 0;
    const tick = () => {
      const due = first + k * period;
      if (due > end) return;
      const now = clock();
      if (now < due) {
        this.timer = setTimeout(tick, due - now);
        return;
      }
      k++;
      const t = clock();
      const inside = t >= win.start && t <= win.end;
      const x = Math.round(this.random() * 8000) / 10;
      const y = Math.round(this.random() * 5000) / 10;
      let done;
      try {
        done = this.handle.write({ x, y, seq: ++this.seq, t });
      } catch (e) {
        // A closed connection (its close is counted): this bot stops.
        stats.writeErrors[e.message] = (stats.writeErrors[e.message] ?? 0) + 1;
        return;
      }
      if (inside) {
        stats.sent++;
        if (this.observer) stats.sentByObservers++;
        done?.then((o) => (stats.outcomes[o] = (stats.outcomes[o] ?? 0) + 1));
      }
      tick();
    };
    tick();
  }

  stop() {
    clearTimeout(this.timer);
  }

  close() {
    this.closing = true;
    this.stop();
    try {
      this.handle?.close();
    } catch {
      /* closing anyway */
    }
  }
}

async function start(cfg) {
  const adapter = await makeRealmAdapter(cfg);
  await Promise.all(
    cfg.bots.map(async ({ id, index, joinAt }) => {
      const bot = new Bot(id, index, cfg);
      await new Promise((r) => setTimeout(r, Math.max(0, joinAt - Date.now())));
      try {
        await bot.join(adapter);
        bots.push(bot);
        stats.joined++;
      } catch (e) {
        stats.joinFailed++;
        if (stats.joinErrors.length < 5) stats.joinErrors.push(String(e?.message ?? e));
      }
    }),
  );
  process.send({ type: "joined", ok: stats.joined, failed: stats.joinFailed, errors: stats.joinErrors });
}

function openWindow(start, end, clockStart, clockEnd) {
  // The write and receipt window on the shared clock, as the controller
  // took it (the same bounds in every bot process).
  win = { start: clockStart, end: clockEnd };
  for (const b of bots) b.startWriting(win.end);
  setTimeout(() => {
    measuring = true;
    loop.enable();
    const opened = Date.now();
    setTimeout(() => {
      measuring = false;
      loop.disable();
      stats.windowMs = Date.now() - opened;
    }, Math.max(0, end - Date.now()));
  }, Math.max(0, start - Date.now()));
}

process.on("message", async (m) => {
  if (m.type === "start") await start(m.config);
  else if (m.type === "window") openWindow(m.start, m.end, m.clockStart, m.clockEnd);
  else if (m.type === "report") {
    stats.loopDelay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
    process.send({ type: "report", stats, latency: latency.take() });
  } else if (m.type === "exit") {
    for (const b of bots) b.close();
    setTimeout(() => process.exit(0), 500);
  }
});
