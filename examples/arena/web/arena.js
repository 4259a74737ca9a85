// The arena demo: joins shard "arena-1" through the dev join endpoint, draws
// every player on a canvas and moves yours where you click.
//
// - Other players are drawn ~100 ms in the past, interpolated between the two
//   snapshots around that time, so they glide at 60 fps although the shard
//   sends 20 snapshots a second.
// - Your own player is predicted: it heads for the click at once, and the
//   shard's position takes over once a FRAME says the input was applied
//   (last_seq), or at once when the shard refuses it.
// - window.__arena exposes what is drawn (for tests and the curious).
import { connectShard } from "/sdk/tessera-client.js";

const SHARD = "arena-1";
const ARENA = { width: 800, height: 500 }; // the shard's params
const MARGIN = 60; // canvas pixels outside the arena, so you can click there
const INTERP_DELAY_MS = 100;
const GLIDE_MS = 70; // time constant of the drawn position chasing its target
const RADIUS = 13;

const canvas = document.getElementById("arena");
const ctx = canvas.getContext("2d");
const el = (id) => document.getElementById(id);
const W = ARENA.width + 2 * MARGIN;
const H = ARENA.height + 2 * MARGIN;

// -- who am I ---------------------------------------------------------------
const ADJ = ["swift", "quiet", "brave", "lucky", "mellow", "bright", "fuzzy", "sly", "bold", "calm"];
const ANIMAL = ["fox", "otter", "lynx", "heron", "panda", "koala", "moose", "gecko", "yak", "wren"];
const pick = (a) => a[Math.floor(Math.random() * a.length)];
const randomName = () => `${pick(ADJ)}-${pick(ANIMAL)}-${Math.floor(Math.random() * 90 + 10)}`;
const params = new URLSearchParams(location.search);
const name = (params.get("name") || "").trim().slice(0, 40) || randomName();
el("me").textContent = name;
el("second-tab").href = `?name=${encodeURIComponent(randomName())}`;

// -- state --------------------------------------------------------------------
const state = {
  connection: "connecting",
  name,
  me: null, // subscriber id (from the join)
  shardId: SHARD,
  tick: 0,
  rttMs: undefined,
  lastRejection: undefined,
  players: [], // what was drawn last: [{ id, x, y, me }]
  server: new Map(), // latest snapshot: id -> {x, y}
  frames: 0,
  error: undefined,
};
window.__arena = state;

/** Snapshots for interpolation: { tick, at, players: Map(id -> {x, y}) }. */
const buffer = [];
let tickMs = 50;
let clockOffset = null; // performance.now() - tick * tickMs, of the least-delayed frame
/** Inputs sent but not yet applied: { seq, x, y }. */
let pending = [];
/** Drawn positions, chasing their targets: id -> {x, y}. */
const drawn = new Map();
const ripples = []; // { x, y, at, bad }
let placed = false; // whether we checked that we are in the arena

// -- joining and connecting -------------------------------------------------------
async function join() {
  const res = await fetch("/api/dev/join", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ shard: SHARD, kind: "arena", params: ARENA, subscriber: name }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `join failed: HTTP ${res.status}`);
  return body; // { shardId, subscriberId, ticket }
}

let conn;
async function start() {
  let first;
  try {
    first = await join();
  } catch (e) {
    showOverlay(`Could not join the arena: ${e.message}. Is <code>make dev</code> running?`);
    setTimeout(start, 2000);
    return;
  }
  state.me = first.subscriberId;
  state.shardId = first.shardId;
  el("shard").textContent = first.shardId;
  let firstTicket = first.ticket;
  conn = connectShard(first.shardId, {
    subscriberId: first.subscriberId,
    // The first connect uses the join's ticket; reconnects join again for a
    // fresh one (the shard is created again if the server lost it).
    ticket: async () => {
      if (firstTicket) {
        const t = firstTicket;
        firstTicket = undefined;
        return t;
      }
      return (await join()).ticket;
    },
  });
  conn.on("state", (s) => {
    state.connection = s;
    renderStatus();
    if (s === "open") hideOverlay();
    else if (s === "connecting" && state.frames > 0) showOverlay("Connection lost, reconnecting…");
  });
  conn.on("open", (welcome) => {
    tickMs = 1000 / welcome.tickRate;
    clockOffset = null;
    buffer.length = 0;
    pending = []; // inputs of the old connection will not be applied now
  });
  conn.on("frame", onFrame);
  conn.on("reject", (r) => {
    state.lastRejection = r;
    pending = pending.filter((p) => p.seq !== r.seq);
    toast(r.error);
  });
  conn.on("rtt", (ms) => {
    state.rttMs = ms;
    renderStatus();
  });
  conn.on("error", (e) => {
    state.error = e.message;
    if (conn.state === "closed") showOverlay(`${escapeHtml(e.message)}<br><a href="">Join again</a>`);
  });
}

function onFrame(frame) {
  state.frames++;
  state.tick = frame.tick;
  const now = performance.now();
  const sample = now - frame.tick * tickMs;
  // The least-delayed frame anchors the clock; drift upwards slowly so a
  // lasting increase in delay is followed.
  clockOffset = clockOffset === null || sample < clockOffset ? sample : clockOffset + (sample - clockOffset) * 0.002;
  // Inputs up to last_seq are applied: their effect is in this snapshot.
  pending = pending.filter((p) => p.seq > frame.lastSeq);
  if (frame.snapshot === null || !conn.snapshot) return;
  const players = new Map();
  for (const p of conn.snapshot.players ?? []) players.set(p.id, { x: p.x, y: p.y });
  state.server = players;
  buffer.push({ tick: frame.tick, players });
  // The arena adds a player on their first move: step in somewhere so the
  // others see you before you click (not when the shard kept your spot).
  if (!placed && state.me) {
    placed = true;
    if (!players.has(state.me) && pending.length === 0) {
      const spot = { x: round1(80 + Math.random() * (ARENA.width - 160)), y: round1(80 + Math.random() * (ARENA.height - 160)) };
      pending.push({ seq: conn.send({ move_to: spot }), ...spot });
    }
  }
  while (buffer.length > 2 && buffer[1].tick < frame.tick - 40) buffer.shift();
}

// -- input ------------------------------------------------------------------------
canvas.addEventListener("pointerdown", (ev) => {
  const r = canvas.getBoundingClientRect();
  const x = ((ev.clientX - r.left) / r.width) * W - MARGIN;
  const y = ((ev.clientY - r.top) / r.height) * H - MARGIN;
  const inside = x >= 0 && x <= ARENA.width && y >= 0 && y <= ARENA.height;
  ripples.push({ x, y, at: performance.now(), bad: !inside });
  if (!conn || conn.state === "closed") return;
  const target = { x: round1(x), y: round1(y) };
  const seq = conn.send({ move_to: target });
  if (inside) pending.push({ seq, ...target });
});

const round1 = (v) => Math.round(v * 10) / 10;

// -- where things are -----------------------------------------------------------------
/** Positions at `renderTick`, interpolated between the snapshots around it. */
function interpolated(renderTick) {
  if (buffer.length === 0) return new Map();
  let i = buffer.length - 1;
  while (i > 0 && buffer[i].tick > renderTick) i--;
  const a = buffer[i];
  const b = buffer[i + 1];
  if (!b || renderTick <= a.tick) return new Map(a.players);
  const t = Math.min(1, Math.max(0, (renderTick - a.tick) / (b.tick - a.tick)));
  const out = new Map();
  for (const [id, pb] of b.players) {
    const pa = a.players.get(id);
    out.set(id, pa ? { x: pa.x + (pb.x - pa.x) * t, y: pa.y + (pb.y - pa.y) * t } : pb);
  }
  return out;
}

function targets(now) {
  const renderTick = clockOffset === null ? Infinity : (now - clockOffset - INTERP_DELAY_MS) / tickMs;
  const out = interpolated(renderTick);
  // Players who joined after renderTick already show (no waiting to appear).
  for (const [id, p] of state.server) if (!out.has(id)) out.set(id, p);
  // My own player: the prediction, else the newest server state (not 100 ms old).
  if (state.me) {
    const predicted = pending[pending.length - 1];
    const mine = predicted ?? state.server.get(state.me);
    if (mine) out.set(state.me, { x: mine.x, y: mine.y });
  }
  return out;
}

// -- drawing ----------------------------------------------------------------------
let lastFrameAt = performance.now();
function frame(now) {
  const dt = Math.min(100, now - lastFrameAt);
  lastFrameAt = now;
  const want = targets(now);
  const k = 1 - Math.exp(-dt / GLIDE_MS);
  for (const id of [...drawn.keys()]) if (!want.has(id)) drawn.delete(id);
  for (const [id, t] of want) {
    const d = drawn.get(id);
    if (!d) drawn.set(id, { x: t.x, y: t.y });
    else {
      d.x += (t.x - d.x) * k;
      d.y += (t.y - d.y) * k;
      if (Math.abs(t.x - d.x) < 0.05 && Math.abs(t.y - d.y) < 0.05) (d.x = t.x), (d.y = t.y);
    }
  }
  state.players = [...drawn].map(([id, p]) => ({ id, x: p.x, y: p.y, me: id === state.me }));
  draw(now);
  renderStatusLazy(now);
  requestAnimationFrame(frame);
}

function setupCanvas() {
  const dpr = Math.min(window.devicePixelRatio || 1, 2);
  canvas.width = W * dpr;
  canvas.height = H * dpr;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
}

function hue(id) {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return (h >>> 0) % 360;
}

let hatch;
function hatchPattern() {
  if (hatch) return hatch;
  const c = document.createElement("canvas");
  c.width = c.height = 12;
  const g = c.getContext("2d");
  g.fillStyle = "#0a0f18";
  g.fillRect(0, 0, 12, 12);
  g.strokeStyle = "#141c2a";
  g.lineWidth = 3;
  g.beginPath();
  g.moveTo(-3, 15);
  g.lineTo(15, -3);
  g.stroke();
  return (hatch = ctx.createPattern(c, "repeat"));
}

function draw(now) {
  ctx.save();
  ctx.fillStyle = hatchPattern();
  ctx.fillRect(0, 0, W, H);
  ctx.font = "600 11px system-ui, sans-serif";
  ctx.fillStyle = "#3a4760";
  ctx.textAlign = "center";
  ctx.fillText("OUTSIDE THE ARENA", W / 2, MARGIN / 2 + 4);
  ctx.translate(MARGIN, MARGIN);

  // Floor and grid.
  const floor = ctx.createRadialGradient(ARENA.width / 2, ARENA.height / 2, 40, ARENA.width / 2, ARENA.height / 2, ARENA.width * 0.7);
  floor.addColorStop(0, "#1a2436");
  floor.addColorStop(1, "#121a28");
  ctx.fillStyle = floor;
  ctx.fillRect(0, 0, ARENA.width, ARENA.height);
  ctx.strokeStyle = "rgba(122, 162, 255, 0.07)";
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let x = 50; x < ARENA.width; x += 50) (ctx.moveTo(x + 0.5, 0), ctx.lineTo(x + 0.5, ARENA.height));
  for (let y = 50; y < ARENA.height; y += 50) (ctx.moveTo(0, y + 0.5), ctx.lineTo(ARENA.width, y + 0.5));
  ctx.stroke();
  ctx.shadowColor = "rgba(122, 162, 255, 0.6)";
  ctx.shadowBlur = 14;
  ctx.strokeStyle = "#5b7fd6";
  ctx.lineWidth = 2;
  ctx.strokeRect(0, 0, ARENA.width, ARENA.height);
  ctx.shadowBlur = 0;

  // Click ripples (red cross for a refused spot).
  for (let i = ripples.length - 1; i >= 0; i--) {
    const r = ripples[i];
    const t = (now - r.at) / 600;
    if (t >= 1) {
      ripples.splice(i, 1);
      continue;
    }
    ctx.globalAlpha = 1 - t;
    ctx.strokeStyle = r.bad ? "#f87171" : "#7aa2ff";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(r.x, r.y, 6 + t * 22, 0, Math.PI * 2);
    ctx.stroke();
    if (r.bad) {
      ctx.beginPath();
      ctx.moveTo(r.x - 6, r.y - 6);
      ctx.lineTo(r.x + 6, r.y + 6);
      ctx.moveTo(r.x + 6, r.y - 6);
      ctx.lineTo(r.x - 6, r.y + 6);
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
  }

  // My pending target.
  const target = pending[pending.length - 1];
  if (target) {
    ctx.setLineDash([4, 5]);
    ctx.strokeStyle = "rgba(255,255,255,0.35)";
    ctx.beginPath();
    ctx.arc(target.x, target.y, RADIUS + 4, 0, Math.PI * 2);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  // Players: others first, me on top.
  const list = [...state.players].sort((a, b) => Number(a.me) - Number(b.me));
  for (const p of list) {
    const h = hue(p.id);
    ctx.fillStyle = "rgba(0,0,0,0.35)";
    ctx.beginPath();
    ctx.ellipse(p.x, p.y + RADIUS * 0.8, RADIUS * 0.9, RADIUS * 0.35, 0, 0, Math.PI * 2);
    ctx.fill();
    const body = ctx.createRadialGradient(p.x - 4, p.y - 5, 2, p.x, p.y, RADIUS);
    body.addColorStop(0, `hsl(${h} 90% 75%)`);
    body.addColorStop(1, `hsl(${h} 70% 50%)`);
    ctx.fillStyle = body;
    ctx.beginPath();
    ctx.arc(p.x, p.y, RADIUS, 0, Math.PI * 2);
    ctx.fill();
    if (p.me) {
      ctx.strokeStyle = "#ffffff";
      ctx.lineWidth = 2.5;
      ctx.stroke();
    }
    ctx.font = `${p.me ? 700 : 500} 12px system-ui, sans-serif`;
    ctx.textAlign = "center";
    ctx.fillStyle = p.me ? "#ffffff" : "rgba(230,233,240,0.8)";
    ctx.fillText(p.me ? `${p.id} (you)` : p.id, p.x, p.y - RADIUS - 7);
  }
  ctx.restore();
}

// -- status, toast, overlay ---------------------------------------------------------------
function renderStatus() {
  el("state").textContent = state.connection === "open" ? "connected" : state.connection;
  el("dot").className = `dot ${state.connection}`;
  el("players").textContent = String(state.server.size);
  el("rtt").textContent = state.rttMs === undefined ? "–" : `${Math.round(state.rttMs)} ms`;
  el("tick").textContent = state.tick ? String(state.tick) : "–";
}
let statusAt = 0;
function renderStatusLazy(now) {
  if (now - statusAt < 250) return;
  statusAt = now;
  renderStatus();
}

let toastTimer;
function toast(text) {
  const t = el("toast");
  t.textContent = `The shard refused the move: ${text}`;
  t.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove("show"), 2500);
}

function showOverlay(html) {
  const o = el("overlay");
  o.innerHTML = `<div>${html}</div>`;
  o.hidden = false;
}
function hideOverlay() {
  el("overlay").hidden = true;
}
function escapeHtml(s) {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

setupCanvas();
window.addEventListener("resize", setupCanvas);
requestAnimationFrame(frame);
start();
