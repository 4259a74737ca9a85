// One bot process: plays the bots the controller (run.mjs) hands it against
// one server, through one adapter (adapters.mjs), with the bot logic below,
// the same for both servers. Node is single-threaded, so the controller
// starts one of these per 250 bots.
//
// Messages from the controller (IPC):
//   {type: "start", config}   join config.bots at their join times
//   {type: "window", start, end}  Date.now() times of the measured window
//   {type: "report"}          -> {type: "report", stats}
//   {type: "exit"}            close every connection and exit
// To the controller: {type: "joined", ok, failed, errors}, {type: "report"}.
//
// The bot logic: each bot joins at its time (the controller ramps the joins
// over a few seconds), then sends move_to R times a second, evenly spaced
// from a random phase on a fixed timeline, to points from its own seeded random sequence (the
// same sequence against both servers): inside the arena, except a fraction
// `rejectFraction` just outside it (refused with "outside the arena").
// For every input sent inside the window it records the time from send to
// the ACK/REJECT (performance.now()); bytes are counted while the window is
// open. Bots stop sending at the end of the window and wait a grace period
// for the last answers.
import { monitorEventLoopDelay, performance } from "node:perf_hooks";

import { makeAdapter } from "./adapters.mjs";

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

const stats = {
  joined: 0,
  joinFailed: 0,
  joinErrors: [],
  joinMs: [],
  sent: 0, // inputs sent inside the window
  acked: 0, // of those, ACKed
  rejected: 0, // of those, REJECTed
  wrongRejections: 0, // REJECTs whose text was not "outside the arena"
  wrongRejectionTexts: {}, // their texts, counted
  rtt: [], // ms, send -> ACK/REJECT, inputs sent inside the window
  recvBytes: 0, // WebSocket payload bytes received inside the window
  recvMessages: 0,
  sendBytes: 0,
  closes: 0, // connections closed by the server or lost
  closeCodes: {},
  windowMs: 0,
  loopDelay: null,
};

let measuring = false; // the window is open
let sending = true; // bots keep sending until the window's end
const bots = [];
const loop = monitorEventLoopDelay({ resolution: 10 });

class Bot {
  constructor(id, index, cfg) {
    this.id = id;
    this.index = index;
    this.cfg = cfg;
    this.random = mulberry32(cfg.seed * 1000003 + index);
    this.pending = new Map(); // key -> [sent at, inside the window]
    this.handle = null;
    this.timer = null;
    this.open = false;
  }

  // The next point: inside the arena, or (rejectFraction of the time) just
  // outside one of its sides.
  nextPoint() {
    const { width, height, rejectFraction } = this.cfg;
    const r = this.random;
    let x = Math.round(r() * width * 10) / 10;
    let y = Math.round(r() * height * 10) / 10;
    if (r() < rejectFraction) {
      const side = Math.floor(r() * 4);
      const off = 1 + Math.round(r() * 50);
      if (side === 0) x = -off;
      else if (side === 1) x = width + off;
      else if (side === 2) y = -off;
      else y = height + off;
    }
    return [x, y];
  }

  async join(adapter) {
    const t0 = performance.now();
    this.handle = await adapter.connect(this.id, {
      onAck: (key) => this.answer(key, true, ""),
      onReject: (key, error) => this.answer(key, false, error),
      onClose: (code) => {
        if (!this.open) return;
        this.open = false;
        clearTimeout(this.timer);
        if (!stats.closing) {
          stats.closes++;
          stats.closeCodes[code] = (stats.closeCodes[code] ?? 0) + 1;
        }
      },
      onRecv: (n) => {
        if (measuring) {
          stats.recvBytes += n;
          stats.recvMessages++;
        }
      },
      onSend: (n) => {
        if (measuring) stats.sendBytes += n;
      },
    });
    this.open = true;
    stats.joinMs.push(performance.now() - t0);
    this.period = 1000 / this.cfg.rate;
    this.nextAt = performance.now() + this.random() * this.period;
    this.schedule();
  }

  // Sends on a fixed timeline, nextAt = join + phase + k * period, so that
  // late timers do not shift a bot's phase (with setInterval, timers that
  // fire late after a burst of incoming messages are rescheduled from that
  // moment, and the bots drift into step with the server's broadcasts). A
  // bot more than a period late skips the missed sends.
  schedule() {
    if (!this.open || !sending) return;
    this.timer = setTimeout(() => {
      if (!this.open || !sending) return;
      this.tick();
      const now = performance.now();
      this.nextAt += this.period;
      if (this.nextAt < now) this.nextAt += Math.ceil((now - this.nextAt) / this.period) * this.period;
      this.schedule();
    }, Math.max(0, this.nextAt - performance.now()));
  }

  tick() {
    const [x, y] = this.nextPoint();
    const t = performance.now();
    const key = this.handle.send(x, y);
    this.pending.set(key, [t, measuring]);
    if (measuring) stats.sent++;
  }

  answer(key, ok, error) {
    const p = this.pending.get(key);
    if (p === undefined) return;
    this.pending.delete(key);
    if (!p[1]) return; // sent before the window
    stats.rtt.push(performance.now() - p[0]);
    if (ok) stats.acked++;
    else {
      stats.rejected++;
      if (error !== "outside the arena") {
        stats.wrongRejections++;
        stats.wrongRejectionTexts[error] = (stats.wrongRejectionTexts[error] ?? 0) + 1;
      }
    }
  }
}

async function start(cfg) {
  const adapter = await makeAdapter(cfg);
  const joins = cfg.bots.map(({ id, index, joinAt }) => {
    const bot = new Bot(id, index, cfg);
    bots.push(bot);
    return new Promise((resolve) => {
      setTimeout(() => {
        bot.join(adapter).then(
          () => {
            stats.joined++;
            resolve();
          },
          (e) => {
            stats.joinFailed++;
            if (stats.joinErrors.length < 5) stats.joinErrors.push(String(e?.message ?? e));
            resolve();
          },
        );
      }, Math.max(0, joinAt - Date.now()));
    });
  });
  await Promise.all(joins);
  process.send({ type: "joined", ok: stats.joined, failed: stats.joinFailed, errors: stats.joinErrors });
}

function windowAt(start, end) {
  let opened = 0;
  setTimeout(() => {
    opened = performance.now();
    measuring = true;
    loop.reset();
    loop.enable();
  }, Math.max(0, start - Date.now()));
  setTimeout(() => {
    measuring = false;
    sending = false;
    stats.windowMs = performance.now() - opened;
    loop.disable();
    stats.loopDelay = {
      p50: loop.percentile(50) / 1e6,
      p99: loop.percentile(99) / 1e6,
      max: loop.max / 1e6,
    };
  }, Math.max(0, end - Date.now()));
}

process.on("message", (m) => {
  if (m.type === "start") {
    start(m.config).catch((e) => {
      console.error(`worker: ${e?.stack ?? e}`);
      process.exit(1);
    });
  } else if (m.type === "window") {
    windowAt(m.start, m.end);
  } else if (m.type === "report") {
    let unanswered = 0;
    for (const b of bots) for (const p of b.pending.values()) if (p[1]) unanswered++;
    const { joinErrors, ...rest } = stats;
    process.send({ type: "report", stats: { ...rest, joinErrors, unanswered } });
  } else if (m.type === "exit") {
    stats.closing = true;
    for (const b of bots) {
      clearTimeout(b.timer);
      try {
        b.handle?.close();
      } catch {
        /* already closed */
      }
    }
    setTimeout(() => process.exit(0), 500);
  }
});
