// The zone demo: joins shard "zone-1" through the dev join endpoint and draws
// the world around your unit with the SDK's game layer (connectShardGame).
//
// - The shard replicates entities: each FRAME carries the changes to what
//   this connection can see (interest radius ~300). game.frame(now) gives the
//   entities interpolated ~100 ms behind the shard, plus the ids that came
//   into view (entered) and went out of it (left) since the previous call.
// - Components (examples/zone/shards/zone/zone.cc): 1 kind ("npc",
//   "stealth", "player"), 2 name (players: the subscriber id), 3 hp (0..100),
//   MessagePack values. Standing next to an NPC drains it; at 0 it comes back
//   elsewhere under the same id, which the game reports as left + entered.
// - window.__zone exposes what is drawn (for tests and the curious).
import { connectShardGame, decodePayload } from "/sdk/tessera-client.js";

const SHARD = "zone-1";
const KIND = "zone";
const C_KIND = 1;
const C_NAME = 2;
const C_HP = 3;
const INTEREST_RADIUS = 300;
const NEAR_RADIUS = 50; // stealthed units show within this distance to anyone
const DRAIN_RADIUS = 30; // players drain NPCs within this distance
const W = 920;
const H = 620;
const SCALE = H / (2 * INTEREST_RADIUS + 70); // pixels per world unit
const FADE_MS = 450;

const canvas = document.getElementById("zone");
const ctx = canvas.getContext("2d");
const mini = document.getElementById("minimap");
const mctx = mini.getContext("2d");
const el = (id) => document.getElementById(id);

// -- who am I ---------------------------------------------------------------
const ADJ = ["amber", "misty", "rapid", "silent", "golden", "stormy", "gentle", "dusky", "brisk", "wild"];
const NOUN = ["badger", "falcon", "marten", "ibis", "tapir", "newt", "bison", "raven", "stoat", "crane"];
const pick = (a) => a[Math.floor(Math.random() * a.length)];
const randomName = () => `${pick(ADJ)}-${pick(NOUN)}-${Math.floor(Math.random() * 90 + 10)}`;
const params = new URLSearchParams(location.search);
const name = (params.get("name") || "").trim().slice(0, 40) || randomName();
el("me").textContent = name;
el("second-tab").href = `?name=${encodeURIComponent(randomName())}`;
el("scout-link").href = `?name=${encodeURIComponent(`scout-${pick(NOUN)}-${Math.floor(Math.random() * 90 + 10)}`)}`;

// -- state --------------------------------------------------------------------
const state = {
  name,
  me: null, // subscriber id
  myEntity: undefined, // id of my unit, once seen
  connection: "connecting",
  world: { width: 2000, height: 2000 },
  camera: { x: 1000, y: 1000, ready: false },
  target: null, // where I asked to go
  drawn: [], // what the last frame drew: [{ id, x, y, kind, name, hp, stealth, me }]
  enteredTotal: 0,
  leftTotal: 0,
  rates: { entered: 0, left: 0, kbps: 0 },
  players: 0, // in the whole zone (from the snapshot)
  error: undefined,
};
window.__zone = state;

let game;
const effects = []; // { x, y, at, kind: "in" | "out", id }
const lastSeen = new Map(); // id -> { x, y, kind } (for the fade-out of what left)
const bornAt = new Map(); // id -> time it entered (fade-in)
const eventLog = []; // { at, entered, left } per frame, last second
const byteLog = []; // { at, bytes }, last 2 s

// Decoded component values, cached per (immutable) byte array.
const decoded = new WeakMap();
function value(bytes) {
  if (bytes === undefined) return undefined;
  let v = decoded.get(bytes);
  if (v === undefined && !decoded.has(bytes)) {
    try {
      v = decodePayload("msgpack", bytes);
    } catch {
      v = null;
    }
    decoded.set(bytes, v);
  }
  return v;
}

/** What a component map says about a unit. */
function describe(components) {
  const kindValue = value(components.get(C_KIND));
  const nameValue = value(components.get(C_NAME));
  const hpValue = value(components.get(C_HP));
  const kind = typeof kindValue === "string" ? kindValue : kindValue && typeof kindValue === "object" ? kindValue.kind ?? "npc" : kindValue ?? "npc";
  const stealth =
    (typeof kind === "string" && kind.includes("stealth")) ||
    (kindValue && typeof kindValue === "object" && (kindValue.stealth === true || kindValue.stealthed === true));
  let hp;
  let hpMax = 100;
  if (typeof hpValue === "number") hp = hpValue;
  else if (Array.isArray(hpValue)) [hp, hpMax = 100] = hpValue;
  else if (hpValue && typeof hpValue === "object") (hp = hpValue.hp), (hpMax = hpValue.max ?? 100);
  return { kind: String(kind), name: typeof nameValue === "string" ? nameValue : undefined, hp, hpMax, stealth };
}

// -- joining and connecting -------------------------------------------------------
async function join() {
  const res = await fetch("/api/dev/join", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ shard: SHARD, kind: KIND, subscriber: name }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `join failed: HTTP ${res.status}`);
  return body; // { shardId, subscriberId, ticket }
}

let joinedWelcome; // the WELCOME after which {"join":{}} was sent
let seenRejection;

async function start() {
  let first;
  try {
    first = await join();
  } catch (e) {
    showOverlay(`Could not join the zone: ${escapeHtml(e.message)}. Is <code>make dev</code> running?`);
    setTimeout(start, 2000);
    return;
  }
  state.me = first.subscriberId;
  el("me").textContent = state.me;
  let firstTicket = first.ticket;
  game = connectShardGame(first.shardId, {
    subscriberId: first.subscriberId,
    // Reconnects join again for a fresh ticket.
    ticket: async () => {
      if (firstTicket) {
        const t = firstTicket;
        firstTicket = undefined;
        return t;
      }
      return (await join()).ticket;
    },
    interpolationDelayMs: 100,
    onError: (e) => console.warn("zone:", e.message),
  });
  window.__zone.game = game;
}

/** Per rendered frame: connection bookkeeping the SDK leaves to the page. */
function watchConnection() {
  const conn = game.connection;
  const s = conn.state;
  if (s !== state.connection) {
    state.connection = s;
    if (s === "open") hideOverlay();
    else if (s === "connecting" && game.framesReceived > 0) showOverlay("Connection lost, reconnecting…");
    else if (s === "closed") showOverlay(escapeHtml(conn.error?.message ?? "The connection closed."));
  }
  // Every new connection (re)joins the world with our unit.
  if (s === "open" && conn.welcome && conn.welcome !== joinedWelcome) {
    joinedWelcome = conn.welcome;
    game.send({ join: {} });
  }
  if (conn.lastRejection && conn.lastRejection !== seenRejection) {
    seenRejection = conn.lastRejection;
    toast(seenRejection.error);
  }
}

// -- input ------------------------------------------------------------------------
canvas.addEventListener("pointerdown", (ev) => {
  if (!game || game.connection.state === "closed") return;
  const r = canvas.getBoundingClientRect();
  const px = ((ev.clientX - r.left) / r.width) * W;
  const py = ((ev.clientY - r.top) / r.height) * H;
  const x = clamp(state.camera.x + (px - W / 2) / SCALE, 0, state.world.width);
  const y = clamp(state.camera.y + (py - H / 2) / SCALE, 0, state.world.height);
  state.target = { x, y, at: performance.now() };
  game.send({ move_to: { x: Math.round(x * 10) / 10, y: Math.round(y * 10) / 10 } });
});

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

// -- the frame ----------------------------------------------------------------------
let lastFrameAt = performance.now();
function frame(now) {
  const dt = Math.min(100, now - lastFrameAt);
  lastFrameAt = now;
  if (game) {
    watchConnection();
    game.frame(now);
    collect(now);
  }
  followCamera(dt);
  draw(now);
  drawMinimap();
  updateRates(now);
  requestAnimationFrame(frame);
}

/** Reads the game's render state into `state.drawn` and the effects. */
function collect(now) {
  const yUp = game.yUp;
  for (const id of game.left) {
    const seen = lastSeen.get(id);
    if (seen) effects.push({ ...seen, at: now, kind: "out", id });
    lastSeen.delete(id);
    bornAt.delete(id);
    if (id === state.myEntity) state.myEntity = undefined;
  }
  const snap = game.snapshot; // { width, height, npcs, players }: rarely changes
  if (snap && typeof snap === "object") {
    if (snap.width > 0 && snap.height > 0) state.world = { width: snap.width, height: snap.height };
    if (Array.isArray(snap.players)) state.players = snap.players.length;
  }
  const drawn = [];
  for (const e of game.entities.values()) {
    const d = describe(e.components);
    const x = e.x;
    const y = yUp ? e.z : e.y;
    const me = d.name !== undefined && d.name === state.me;
    if (me) state.myEntity = e.id;
    drawn.push({ id: e.id, x, y, ...d, me });
    lastSeen.set(e.id, { x, y, kindName: d.kind, stealth: d.stealth });
  }
  for (const id of game.entered) {
    bornAt.set(id, now);
    const seen = lastSeen.get(id);
    // A burst of rings when the first frame arrives would say nothing: only
    // entities that enter after the first second get a ring.
    if (seen && state.enteredTotal > 0) effects.push({ ...seen, at: now, kind: "in", id });
  }
  state.enteredTotal += game.entered.length;
  state.leftTotal += game.left.length;
  eventLog.push({ at: now, entered: game.entered.length, left: game.left.length });
  byteLog.push({ at: now, bytes: game.bytesReceived });
  state.drawn = drawn;
}

function followCamera(dt) {
  const mine = state.drawn.find((p) => p.me);
  if (!mine) return;
  if (!state.camera.ready) {
    state.camera = { x: mine.x, y: mine.y, ready: true };
    return;
  }
  // The camera eases after the unit so it never jerks.
  const k = 1 - Math.exp(-dt / 90);
  state.camera.x += (mine.x - state.camera.x) * k;
  state.camera.y += (mine.y - state.camera.y) * k;
  if (state.target && Math.hypot(mine.x - state.target.x, mine.y - state.target.y) < 4) state.target = null;
}

function updateRates(now) {
  while (eventLog.length && now - eventLog[0].at > 1000) eventLog.shift();
  while (byteLog.length > 1 && now - byteLog[0].at > 2000) byteLog.shift();
  let entered = 0;
  let left = 0;
  for (const e of eventLog) (entered += e.entered), (left += e.left);
  const span = byteLog.length > 1 ? byteLog[byteLog.length - 1].at - byteLog[0].at : 0;
  const kbps = span > 0 ? (byteLog[byteLog.length - 1].bytes - byteLog[0].bytes) / 1024 / (span / 1000) : 0;
  state.rates = { entered, left, kbps };
  renderStatusLazy(now);
}

// -- drawing ----------------------------------------------------------------------
function setupCanvas() {
  const dpr = Math.min(window.devicePixelRatio || 1, 2);
  canvas.width = W * dpr;
  canvas.height = H * dpr;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  mini.width = 170 * dpr;
  mini.height = 170 * dpr;
  mctx.setTransform(dpr, 0, 0, dpr, 0, 0);
}

/** World to canvas pixels. */
const sx = (x) => W / 2 + (x - state.camera.x) * SCALE;
const sy = (y) => H / 2 + (y - state.camera.y) * SCALE;

function hue(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0) % 360;
}

function unitStyle(p) {
  if (p.me) return { fill: "#ffffff", r: 10 };
  if (p.stealth) return { fill: "rgba(192, 132, 252, 0.35)", r: 8, dashed: "#c084fc" };
  if (p.name !== undefined || p.kind === "player" || p.kind === "scout") return { fill: "#7aa2ff", r: 9 };
  const h = 30 + (hue(p.kind) % 40); // NPC kinds: warm, distinct
  return { fill: `hsl(${h} 45% 60%)`, r: 6.5 };
}

function draw(now) {
  const { width, height } = state.world;
  ctx.save();
  ctx.fillStyle = "#070b12";
  ctx.fillRect(0, 0, W, H);

  // The world floor and its grid (every 100 units).
  ctx.fillStyle = "#111a29";
  ctx.fillRect(sx(0), sy(0), width * SCALE, height * SCALE);
  ctx.strokeStyle = "rgba(122, 162, 255, 0.06)";
  ctx.lineWidth = 1;
  ctx.beginPath();
  const x0 = Math.max(0, Math.floor((state.camera.x - W / 2 / SCALE) / 100) * 100);
  const x1 = Math.min(width, state.camera.x + W / 2 / SCALE);
  const y0 = Math.max(0, Math.floor((state.camera.y - H / 2 / SCALE) / 100) * 100);
  const y1 = Math.min(height, state.camera.y + H / 2 / SCALE);
  for (let x = x0; x <= x1; x += 100) (ctx.moveTo(Math.round(sx(x)) + 0.5, sy(Math.max(0, y0))), ctx.lineTo(Math.round(sx(x)) + 0.5, sy(y1)));
  for (let y = y0; y <= y1; y += 100) (ctx.moveTo(sx(Math.max(0, x0)), Math.round(sy(y)) + 0.5), ctx.lineTo(sx(x1), Math.round(sy(y)) + 0.5));
  ctx.stroke();
  ctx.strokeStyle = "#3c5a9e";
  ctx.lineWidth = 2;
  ctx.strokeRect(sx(0), sy(0), width * SCALE, height * SCALE);

  // Interest area: everything outside is dimmed (the shard sends nothing from there).
  const mine = state.drawn.find((p) => p.me);
  const cx = mine ? sx(mine.x) : W / 2;
  const cy = mine ? sy(mine.y) : H / 2;
  const R = INTEREST_RADIUS * SCALE;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, 0, W, H);
  ctx.arc(cx, cy, R, 0, Math.PI * 2, true);
  ctx.fillStyle = "rgba(4, 7, 12, 0.55)";
  ctx.fill("evenodd");
  ctx.restore();
  ctx.setLineDash([6, 7]);
  ctx.strokeStyle = "rgba(122, 162, 255, 0.45)";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.arc(cx, cy, R, 0, Math.PI * 2);
  ctx.stroke();
  ctx.strokeStyle = "rgba(192, 132, 252, 0.3)";
  ctx.beginPath();
  ctx.arc(cx, cy, NEAR_RADIUS * SCALE, 0, Math.PI * 2);
  ctx.stroke();
  ctx.setLineDash([]);
  if (mine) {
    ctx.fillStyle = "rgba(248, 113, 113, 0.07)";
    ctx.beginPath();
    ctx.arc(cx, cy, DRAIN_RADIUS * SCALE, 0, Math.PI * 2);
    ctx.fill();
  }

  // My move target.
  if (state.target) {
    const t = (now - state.target.at) / 1000;
    ctx.strokeStyle = "rgba(255, 255, 255, 0.5)";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.arc(sx(state.target.x), sy(state.target.y), 7 + 2 * Math.sin(t * 6), 0, Math.PI * 2);
    ctx.stroke();
    if (mine) {
      ctx.setLineDash([2, 6]);
      ctx.beginPath();
      ctx.moveTo(cx, cy);
      ctx.lineTo(sx(state.target.x), sy(state.target.y));
      ctx.stroke();
      ctx.setLineDash([]);
    }
  }

  // Units: NPCs, then players, me on top.
  const order = (p) => (p.me ? 2 : p.name !== undefined ? 1 : 0);
  const units = [...state.drawn].sort((a, b) => order(a) - order(b));
  for (const p of units) {
    const x = sx(p.x);
    const y = sy(p.y);
    if (x < -20 || y < -20 || x > W + 20 || y > H + 20) continue;
    const born = bornAt.get(p.id);
    const alpha = born === undefined ? 1 : Math.min(1, (now - born) / FADE_MS);
    const s = unitStyle(p);
    ctx.globalAlpha = alpha;
    ctx.fillStyle = "rgba(0, 0, 0, 0.35)";
    ctx.beginPath();
    ctx.ellipse(x, y + s.r * 0.8, s.r * 0.9, s.r * 0.35, 0, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillStyle = s.fill;
    ctx.beginPath();
    ctx.arc(x, y, s.r, 0, Math.PI * 2);
    ctx.fill();
    if (s.dashed) {
      ctx.setLineDash([3, 3]);
      ctx.strokeStyle = s.dashed;
      ctx.lineWidth = 1.5;
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if (p.me) {
      ctx.strokeStyle = "#7aa2ff";
      ctx.lineWidth = 2.5;
      ctx.stroke();
    }
    if (p.hp !== undefined && p.hpMax > 0 && p.hp < p.hpMax) {
      const f = clamp(p.hp / p.hpMax, 0, 1);
      const bw = s.r * 2.2;
      ctx.fillStyle = "rgba(0, 0, 0, 0.55)";
      ctx.fillRect(x - bw / 2, y - s.r - 7, bw, 3);
      ctx.fillStyle = f > 0.5 ? "#4ade80" : f > 0.25 ? "#fbbf24" : "#f87171";
      ctx.fillRect(x - bw / 2, y - s.r - 7, bw * f, 3);
    }
    if (p.name !== undefined) {
      ctx.font = `${p.me ? 700 : 500} 12px system-ui, sans-serif`;
      ctx.textAlign = "center";
      ctx.fillStyle = p.me ? "#ffffff" : "rgba(230, 233, 240, 0.85)";
      ctx.fillText(p.me ? `${p.name} (you)` : p.name, x, y - s.r - 11);
    }
    ctx.globalAlpha = 1;
  }

  // Entered (green) and left (red) rings; what left fades out where it was last drawn.
  for (let i = effects.length - 1; i >= 0; i--) {
    const f = effects[i];
    const t = (now - f.at) / 700;
    if (t >= 1) {
      effects.splice(i, 1);
      continue;
    }
    let x = sx(f.x);
    let y = sy(f.y);
    if (f.kind === "in") {
      const live = state.drawn.find((p) => p.id === f.id);
      if (live) (x = sx(live.x)), (y = sy(live.y));
    } else {
      ctx.globalAlpha = 0.5 * (1 - t);
      ctx.fillStyle = f.stealth ? "#c084fc" : "#c7a56a";
      ctx.beginPath();
      ctx.arc(x, y, 6, 0, Math.PI * 2);
      ctx.fill();
    }
    ctx.globalAlpha = 1 - t;
    ctx.strokeStyle = f.kind === "in" ? "#4ade80" : "#f87171";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(x, y, f.kind === "in" ? 8 + 16 * t : 14 - 8 * t, 0, Math.PI * 2);
    ctx.stroke();
    ctx.globalAlpha = 1;
  }

  if (!mine && game && game.framesReceived > 0) {
    ctx.font = "500 14px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.fillStyle = "rgba(230, 233, 240, 0.7)";
    ctx.fillText("waiting for your unit…", W / 2, H / 2 - 40);
  }
  ctx.restore();
}

function drawMinimap() {
  const size = 170;
  const pad = 8;
  const { width, height } = state.world;
  const k = (size - 2 * pad) / Math.max(width, height);
  const mx = (x) => pad + x * k;
  const my = (y) => pad + y * k;
  mctx.clearRect(0, 0, size, size);
  mctx.fillStyle = "rgba(17, 26, 41, 0.9)";
  mctx.fillRect(mx(0), my(0), width * k, height * k);
  mctx.strokeStyle = "rgba(122, 162, 255, 0.35)";
  mctx.lineWidth = 1;
  mctx.strokeRect(mx(0) + 0.5, my(0) + 0.5, width * k - 1, height * k - 1);
  // The camera's view.
  mctx.strokeStyle = "rgba(255, 255, 255, 0.25)";
  mctx.strokeRect(mx(state.camera.x - W / 2 / SCALE), my(state.camera.y - H / 2 / SCALE), (W / SCALE) * k, (H / SCALE) * k);
  // Everything held: only what is inside the interest area.
  for (const p of state.drawn) {
    mctx.fillStyle = p.me ? "#ffffff" : p.stealth ? "#c084fc" : p.name !== undefined ? "#7aa2ff" : "#c7a56a";
    mctx.fillRect(mx(p.x) - 1, my(p.y) - 1, p.me ? 3 : 2, p.me ? 3 : 2);
  }
  const mine = state.drawn.find((p) => p.me);
  if (mine) {
    mctx.strokeStyle = "rgba(122, 162, 255, 0.8)";
    mctx.beginPath();
    mctx.arc(mx(mine.x), my(mine.y), INTEREST_RADIUS * k, 0, Math.PI * 2);
    mctx.stroke();
  }
  mctx.font = "600 9px system-ui, sans-serif";
  mctx.fillStyle = "rgba(139, 151, 173, 0.9)";
  mctx.fillText(`${width} × ${height}`, pad + 2, size - 3);
}

// -- status, toast, overlay ---------------------------------------------------------------
function renderStatus() {
  const s = state.connection;
  el("state").textContent = s === "open" ? "connected" : s;
  el("dot").className = `dot ${s}`;
  if (!game) return;
  el("held").textContent = String(game.replica.entities.size);
  el("players").textContent = String(state.players);
  el("entered").textContent = String(state.rates.entered);
  el("left").textContent = String(state.rates.left);
  el("kbps").textContent = state.rates.kbps.toFixed(1);
  // Two round trips: the network's (PING to PONG) and the player's (an
  // input to the FRAME showing it, which adds the wait for the next tick).
  const ping = game.connection.rttMs;
  el("ping").textContent = ping === undefined ? "–" : `${Math.round(ping)} ms`;
  el("rtt").textContent = game.rttMs === undefined ? "–" : `${Math.round(game.rttMs)} ms`;
  el("tick").textContent = game.tick === undefined ? "–" : `${game.tick}${game.viewTick !== undefined ? ` (drawn ${game.viewTick.toFixed(2)})` : ""}`;
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
  t.textContent = `The shard refused: ${text}`;
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
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

setupCanvas();
window.addEventListener("resize", setupCanvas);
requestAnimationFrame(frame);
start();
