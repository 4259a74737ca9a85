// The range demo: joins shard "range-1" (lag compensation, 10 ticks of
// history) or "range-off" (?history=0: none) through the dev join endpoint
// and draws the targets with the SDK's game layer (connectShardGame).
//
// - game.frame(now) draws the replicated entities interpolated ~100 ms
//   behind the shard; game.send stamps each input with the tick it drew, and
//   the shard (examples/range/shards/range/range.cc) rewinds the targets to
//   where this screen showed them before it checks the shot.
// - Components: 1 kind ("target", "player", "spear"), 2 name (players),
//   3 hp (targets), MessagePack values. The snapshot holds every player's
//   hits and misses.
// - A shot that hits nothing is refused with "miss" (the connection's
//   "reject" event); one that is applied (its "ack") hit.
// - window.__range exposes, read-only, what is drawn and the score (for
//   tests and the curious): connection, me (the subscriber id), drawn, shots
//   (each with the targets drawn when it was fired), hits, misses, kills and
//   whether the shard compensates lag.
import { connectShardGame, decodePayload } from "/sdk/tessera-client.js";

const params = new URLSearchParams(location.search);
const HISTORY = params.get("history") === "0" ? 0 : 10;
const SHARD = HISTORY === 0 ? "range-off" : "range-1";
const KIND = "range";
const C_KIND = 1;
const C_NAME = 2;
const C_HP = 3;
const TARGET_RADIUS = 20; // as range.cc
const FIRING_LINE_Y = 560; // as range.cc
const WORLD = { width: 1000, height: 600 };
const W = 900;
const H = 540;
const SCALE = W / WORLD.width;
const SHOT_MS = 600;
const KEEP_SHOTS = 50; // the newest shots stay in state.shots

const canvas = document.getElementById("range");
const ctx = canvas.getContext("2d");
const el = (id) => document.getElementById(id);

el("history").textContent = String(HISTORY);
if (HISTORY === 0) {
  el("mode-line").innerHTML = 'This range has <b>no</b> lag compensation: shots are checked against where the targets are now (<a href="?">turn it on</a>).';
}

const name = (params.get("name") || "").trim().slice(0, 40) || `shooter-${Math.floor(Math.random() * 9000 + 1000)}`;
const state = {
  name,
  me: null, // subscriber id: the shard names the player after it
  connection: "connecting",
  viewTick: undefined,
  lagCompensation: undefined, // the snapshot's lag_compensation
  drawn: [], // [{ id, x, y, kind, name, hp, me }]
  // { seq, from, to, at, viewTick, targets: [{ id, x, y }] as drawn, result: "pending" | "hit" | "miss" | "lost", spear }
  shots: [],
  hits: 0,
  misses: 0,
  kills: 0,
};
window.__range = state;

let game;
const decoded = new WeakMap();
function value(bytes) {
  if (bytes === undefined) return undefined;
  if (!decoded.has(bytes)) {
    let v;
    try {
      v = decodePayload("msgpack", bytes);
    } catch {
      v = null;
    }
    decoded.set(bytes, v);
  }
  return decoded.get(bytes);
}

async function join() {
  const res = await fetch("/api/dev/join", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ shard: SHARD, kind: KIND, params: { history: HISTORY }, subscriber: name }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `join failed: HTTP ${res.status}`);
  return body; // { shardId, subscriberId, ticket }
}

let joinedWelcome;

async function start() {
  let first;
  try {
    first = await join();
  } catch (e) {
    showOverlay(`Could not join the range: ${escapeHtml(e.message)}. Is <code>make dev</code> running?`);
    setTimeout(start, 2000);
    return;
  }
  state.me = first.subscriberId;
  el("me").textContent = first.subscriberId;
  let firstTicket = first.ticket;
  game = connectShardGame(first.shardId, {
    subscriberId: first.subscriberId,
    ticket: async () => {
      if (firstTicket) {
        const t = firstTicket;
        firstTicket = undefined;
        return t;
      }
      return (await join()).ticket;
    },
    tickRate: 20,
    interpolationDelayMs: 100,
    onError: (e) => console.warn("range:", e.message),
  });
}

// The answers to this page's inputs, per connection (a malformed payload
// makes the game open a new one): "ack" is an applied input, a hit for a
// shot; "reject" a refused one ("miss" for a shot that hit nothing).
let listening;
function listen(conn) {
  listening = conn;
  const find = (seq) => state.shots.find((x) => x.seq === seq && x.result === "pending");
  conn.on("ack", (seq) => {
    const shot = find(seq);
    if (!shot || shot.spear) return;
    shot.result = "hit";
    toast("hit", true);
  });
  conn.on("reject", (r) => {
    const shot = find(r.seq);
    if (shot) shot.result = "miss";
    toast(r.error, false);
  });
  // Inputs in flight on a dropped socket get no answer.
  conn.on("close", () => {
    for (const shot of state.shots) if (shot.result === "pending") shot.result = "lost";
  });
}

function watchConnection() {
  const conn = game.connection;
  if (conn !== listening) listen(conn);
  const s = conn.state;
  if (s !== state.connection) {
    state.connection = s;
    if (s === "open") hideOverlay();
    else if (s === "connecting" && game.framesReceived > 0) showOverlay("Connection lost, reconnecting…");
    else if (s === "closed") showOverlay(escapeHtml(conn.error?.message ?? "The connection closed."));
  }
  // Every new connection puts us on the firing line.
  if (s === "open" && conn.welcome && conn.welcome !== joinedWelcome) {
    joinedWelcome = conn.welcome;
    game.send({ join: {} });
  }
}

canvas.addEventListener("pointerdown", (ev) => {
  if (!game || game.connection.state !== "open") return;
  const me = state.drawn.find((d) => d.me);
  if (!me) return;
  const r = canvas.getBoundingClientRect();
  const x = (((ev.clientX - r.left) / r.width) * W) / SCALE;
  const y = (((ev.clientY - r.top) / r.height) * H) / SCALE;
  const spear = ev.shiftKey;
  const viewTick = game.viewTick;
  const targets = state.drawn.filter((d) => d.kind === "target").map((d) => ({ id: d.id, x: d.x, y: d.y }));
  const seq = spear ? game.send({ throw: { dir: [x - me.x, y - me.y] } }) : game.send({ shoot: { aim: [x, y] } });
  state.shots.push({ seq, from: { x: me.x, y: me.y }, to: { x, y }, at: performance.now(), viewTick, targets, result: "pending", spear });
});

function frame(now) {
  if (game) {
    game.frame(now);
    watchConnection();
    collect();
  }
  draw(now);
  renderStatus();
  requestAnimationFrame(frame);
}

function collect() {
  const drawn = [];
  for (const e of game.entities.values()) {
    const kind = value(e.components.get(C_KIND));
    const who = value(e.components.get(C_NAME));
    drawn.push({ id: e.id, x: e.x, y: e.y, kind, name: who, hp: value(e.components.get(C_HP)), me: state.me !== null && who === state.me });
  }
  state.drawn = drawn;
  state.viewTick = game.viewTick;
  const snap = game.snapshot;
  if (snap && typeof snap === "object" && Array.isArray(snap.players)) {
    const mine = snap.players.find((p) => p.name === state.me);
    if (mine) (state.hits = mine.hits), (state.misses = mine.misses);
    state.kills = snap.kills ?? 0;
    state.lagCompensation = snap.lag_compensation === true;
  }
}

const sx = (x) => x * SCALE;
const sy = (y) => y * SCALE;

function draw(now) {
  ctx.save();
  ctx.fillStyle = "#0d1420";
  ctx.fillRect(0, 0, W, H);
  // Lanes.
  ctx.strokeStyle = "rgba(122, 162, 255, 0.08)";
  ctx.lineWidth = 1;
  for (const d of state.drawn) {
    if (d.kind !== "target") continue;
    ctx.beginPath();
    ctx.moveTo(sx(50), Math.round(sy(d.y)) + 0.5);
    ctx.lineTo(sx(950), Math.round(sy(d.y)) + 0.5);
    ctx.stroke();
  }
  // The firing line.
  ctx.strokeStyle = "rgba(251, 191, 36, 0.35)";
  ctx.setLineDash([8, 8]);
  ctx.beginPath();
  ctx.moveTo(0, sy(FIRING_LINE_Y));
  ctx.lineTo(W, sy(FIRING_LINE_Y));
  ctx.stroke();
  ctx.setLineDash([]);

  if (state.shots.length > KEEP_SHOTS) state.shots.splice(0, state.shots.length - KEEP_SHOTS);
  for (const s of state.shots) {
    if (now - s.at >= SHOT_MS) continue;
    const fade = Math.max(0, 1 - (now - s.at) / SHOT_MS);
    const color = s.result === "hit" ? `rgba(74, 222, 128, ${fade})` : s.result === "miss" ? `rgba(248, 113, 113, ${fade})` : `rgba(231, 234, 241, ${fade})`;
    ctx.strokeStyle = color;
    ctx.lineWidth = s.spear ? 1 : 2;
    ctx.beginPath();
    ctx.moveTo(sx(s.from.x), sy(s.from.y));
    ctx.lineTo(sx(s.to.x), sy(s.to.y));
    ctx.stroke();
  }

  for (const d of state.drawn) {
    if (d.kind === "target") {
      const hp = typeof d.hp === "number" ? d.hp : 100;
      ctx.fillStyle = "#f87171";
      ctx.beginPath();
      ctx.arc(sx(d.x), sy(d.y), TARGET_RADIUS * SCALE, 0, Math.PI * 2);
      ctx.fill();
      ctx.fillStyle = "#fee2e2";
      ctx.beginPath();
      ctx.arc(sx(d.x), sy(d.y), TARGET_RADIUS * SCALE * 0.45, 0, Math.PI * 2);
      ctx.fill();
      ctx.fillStyle = "#4ade80";
      ctx.fillRect(sx(d.x) - 18, sy(d.y) - 30, (36 * hp) / 100, 4);
    } else if (d.kind === "spear") {
      ctx.fillStyle = "#fbbf24";
      ctx.beginPath();
      ctx.arc(sx(d.x), sy(d.y), 4, 0, Math.PI * 2);
      ctx.fill();
    } else {
      ctx.fillStyle = d.me ? "#ffffff" : "#7aa2ff";
      ctx.beginPath();
      ctx.arc(sx(d.x), sy(d.y), 9, 0, Math.PI * 2);
      ctx.fill();
      ctx.fillStyle = "#8b97ad";
      ctx.font = "11px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.fillText(d.me ? "you" : String(d.name ?? ""), sx(d.x), sy(d.y) + 22);
    }
  }
  ctx.restore();
}

function renderStatus() {
  const s = state.connection;
  el("dot").className = `dot ${s === "open" ? "open" : s === "closed" ? "closed" : ""}`;
  el("state").textContent = s;
  el("hits").textContent = String(state.hits);
  el("misses").textContent = String(state.misses);
  el("kills").textContent = String(state.kills);
  el("rtt").textContent = game?.rttMs !== undefined ? `${Math.round(game.rttMs)} ms` : "–";
  el("view").textContent = game?.viewTick !== undefined ? game.viewTick.toFixed(2) : "–";
}

let toastTimer;
function toast(text, good) {
  const t = el("toast");
  t.textContent = text;
  t.classList.toggle("hit", good);
  t.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove("show"), 1200);
}
function showOverlay(html) {
  const o = el("overlay");
  o.innerHTML = html;
  o.hidden = false;
}
function hideOverlay() {
  el("overlay").hidden = true;
}
function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

requestAnimationFrame(frame);
start();
