// The zones demo: a world of two zones side by side (shards zones-0 and
// zones-1 of kind "zones", examples/zones/shards/zones/zones.cc). The page
// creates both through the dev join, joins zones-0 with a ticket carrying a
// `party` claim (none with ?party=0) and walks its player with the arrow
// keys or WASD. At the zone line the shard moves the player to its
// neighbour; the SDK's connectShard follows the TRANSFER message to the
// other shard at once (onTransfer) and this page keeps drawing.
//
// - Inputs: {"join":{}} on every new connection, {"move":{"dx","dy"}}
//   whenever the pressed direction changes (and again after each move to
//   another shard: the direction travels with the player, but an input sent
//   while it was moving was refused).
// - Drawing: every player of the current zone's snapshot, glided from its
//   previous position to the newest over one tick. The page's own player
//   keeps its last drawn position while it is between two shards and glides
//   from there once the target's first snapshot arrives, so it never leaves
//   the screen.
// - window.__zones exposes, read-only, for tests and the curious: me,
//   party, connection, shard (the connection's), transfers (moves
//   followed), banner (the relic banner shown, or null), bounced (the zone
//   that last turned this player back), player (its latest snapshot entry)
//   and frames: per drawn frame {shard, x, y, t, tick, sx, held}: the shard
//   whose snapshot the dot was drawn from, the drawn position, the frame
//   time (performance.now()), that snapshot's tick and its x for the
//   player, and whether the dot was held between shards (x null: the
//   player was not drawn).
import { connectShard } from "/sdk/tessera-client.js";

const params = new URLSearchParams(location.search);
const PARTY = params.get("party") !== "0";
const KIND = "zones";
const GROUP = "world";
const ZONES = [
  { id: "zones-0", params: { index: 0, zones: 2, group: GROUP } },
  { id: "zones-1", params: { index: 1, zones: 2, group: GROUP, require_claim: "party" } },
];
const TICK_MS = 50; // tessera.json tickRate 20
const W = 900;
const H = 450;
const MAX_FRAMES = 20000;
const MARGIN = 14; // canvas pixels around the world (a dot on its edge stays whole)

const canvas = document.getElementById("world");
const ctx = canvas.getContext("2d");
const el = (id) => document.getElementById(id);

if (!PARTY) {
  el("party-line").innerHTML = '(you are <b>not</b> in a party: <a id="party-link" href="?">join one</a>)';
}

const name = (params.get("name") || "").trim().slice(0, 40) || `walker-${Math.floor(Math.random() * 9000 + 1000)}`;
const state = {
  me: null,
  party: PARTY,
  connection: "connecting",
  shard: null,
  transfers: 0,
  banner: null,
  bounced: "",
  bounces: 0,
  player: null,
  frames: [],
};
window.__zones = state;

// The newest snapshot, and per player id {from: {x, y}, to: {x, y}, at}.
let snap = null;
let snapShard = null;
const glides = new Map();
let lastDrawn = null; // {x, y, shard} of this page's player

async function devJoin(zone) {
  const res = await fetch("/api/dev/join", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      shard: zone.id,
      kind: KIND,
      params: zone.params,
      subscriber: name,
      claims: PARTY ? { party: "wanderers" } : {},
    }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `join failed: HTTP ${res.status}`);
  return body; // { shardId, subscriberId, ticket }
}

let conn;
let joinedWelcome;
let dir = { dx: 0, dy: 0 };
const keys = new Set();

async function start() {
  let first;
  try {
    // Both zones must run before anyone walks over the line.
    await devJoin(ZONES[1]);
    first = await devJoin(ZONES[0]);
  } catch (e) {
    showOverlay(`Could not join the zones: ${escapeHtml(e.message)}. Is <code>make dev</code> running?`);
    setTimeout(start, 2000);
    return;
  }
  state.me = first.subscriberId;
  el("me").textContent = first.subscriberId;
  let firstTicket = first.ticket;
  conn = connectShard(first.shardId, {
    subscriberId: first.subscriberId,
    // A reconnect (not a move: a TRANSFER brings its own ticket) to the
    // shard the player is on now.
    ticket: async (shardId) => {
      if (firstTicket) {
        const t = firstTicket;
        firstTicket = undefined;
        return t;
      }
      const zone = ZONES.find((z) => z.id === shardId) ?? ZONES[0];
      return (await devJoin(zone)).ticket;
    },
    onTransfer: ({ from, to }) => {
      state.transfers += 1;
      toast(`${from} handed you over to ${to}`, true);
    },
  });
  conn.on("snapshot", onSnapshot);
  conn.on("reject", (r) => {
    if (!/^moving to shard /.test(r.error)) toast(r.error, false);
  });
  conn.on("error", (e) => console.warn("zones:", e.message));
}

function onSnapshot(s) {
  if (!s || typeof s !== "object" || !s.zone || !Array.isArray(s.players)) return;
  const now = performance.now();
  const changed = snapShard !== s.zone.id;
  for (const p of s.players) {
    const g = glides.get(p.id);
    let from;
    if (p.id === state.me && lastDrawn && (changed || !g)) from = { x: lastDrawn.x, y: lastDrawn.y };
    else if (!changed && g) from = position(g, now);
    else from = { x: p.x, y: p.y };
    glides.set(p.id, { from, to: { x: p.x, y: p.y }, at: now });
  }
  const here = new Set(s.players.map((p) => p.id));
  for (const id of glides.keys()) if (!here.has(id) && id !== state.me) glides.delete(id);
  snap = s;
  snapShard = s.zone.id;
  const mine = s.players.find((p) => p.id === state.me) ?? null;
  if (mine) {
    if (mine.bounces > state.bounces) {
      toast(`${mine.bounced} turned you back${PARTY ? "" : ": join a party first"}`, false);
    }
    state.bounced = mine.bounced;
    state.bounces = mine.bounces;
    state.player = mine;
  }
  state.banner = s.banner ?? null;
}

function position(g, now) {
  const f = Math.min(1, Math.max(0, (now - g.at) / TICK_MS));
  return { x: g.from.x + (g.to.x - g.from.x) * f, y: g.from.y + (g.to.y - g.from.y) * f };
}

function watchConnection() {
  const s = conn.state;
  state.shard = conn.shardId;
  if (s !== state.connection) {
    state.connection = s;
    if (s === "open") hideOverlay();
    else if (s === "closed") showOverlay(escapeHtml(conn.error?.message ?? "The connection closed."));
  }
  // Every new connection (a reconnect, or the shard the player moved to):
  // join (nothing happens if the player is already there) and say where it
  // is heading.
  if (s === "open" && conn.welcome && conn.welcome !== joinedWelcome) {
    joinedWelcome = conn.welcome;
    conn.send({ join: {} });
    if (dir.dx !== 0 || dir.dy !== 0) conn.send({ move: dir });
  }
}

const KEYS = {
  ArrowLeft: [-1, 0], KeyA: [-1, 0],
  ArrowRight: [1, 0], KeyD: [1, 0],
  ArrowUp: [0, -1], KeyW: [0, -1],
  ArrowDown: [0, 1], KeyS: [0, 1],
};
function steer() {
  let dx = 0;
  let dy = 0;
  for (const k of keys) {
    dx += KEYS[k][0];
    dy += KEYS[k][1];
  }
  dx = Math.sign(dx);
  dy = Math.sign(dy);
  if (dx === dir.dx && dy === dir.dy) return;
  dir = { dx, dy };
  if (conn && conn.state !== "closed") conn.send({ move: dir });
}
window.addEventListener("keydown", (ev) => {
  if (!KEYS[ev.code] || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  ev.preventDefault();
  keys.add(ev.code);
  steer();
});
window.addEventListener("keyup", (ev) => {
  if (!KEYS[ev.code]) return;
  keys.delete(ev.code);
  steer();
});
window.addEventListener("blur", () => {
  keys.clear();
  steer();
});
// Best effort: a closed tab leaves no player behind.
window.addEventListener("pagehide", () => {
  if (conn?.state === "open") conn.send({ leave: {} });
});

function frame(now) {
  if (conn) watchConnection();
  draw(now);
  renderStatus();
  requestAnimationFrame(frame);
}

function worldSize() {
  const z = snap?.zone;
  const width = z ? z.end - z.start : 100;
  return { width: width * (z?.zones ?? 2), height: z?.height ?? 100, zoneWidth: width, zones: z?.zones ?? 2 };
}

function draw(now) {
  const world = worldSize();
  const scale = Math.min((W - 2 * MARGIN) / world.width, (H - 2 * MARGIN) / world.height);
  const ox = (W - world.width * scale) / 2;
  const oy = (H - world.height * scale) / 2;
  const sx = (x) => ox + x * scale;
  const sy = (y) => oy + y * scale;
  ctx.save();
  ctx.fillStyle = "#090e16";
  ctx.fillRect(0, 0, W, H);

  // The zones: the current one lit, the lines between them dashed.
  for (let i = 0; i < world.zones; i++) {
    const x0 = sx(i * world.zoneWidth);
    const here = snap && snap.zone.index === i;
    ctx.fillStyle = here ? "rgba(122, 162, 255, 0.12)" : "rgba(122, 162, 255, 0.04)";
    ctx.fillRect(x0, sy(0), world.zoneWidth * scale, world.height * scale);
    ctx.fillStyle = here ? "#c7d2fe" : "#5b6679";
    ctx.font = "600 13px system-ui, sans-serif";
    ctx.textAlign = "left";
    const zone = ZONES[i];
    const label = `${zone ? zone.id : `zone ${i}`}${zone?.params.require_claim ? " · party only" : ""}`;
    ctx.fillText(label, x0 + 10, sy(0) + 20);
  }
  ctx.strokeStyle = "rgba(251, 191, 36, 0.45)";
  ctx.setLineDash([8, 8]);
  for (let i = 1; i < world.zones; i++) {
    ctx.beginPath();
    ctx.moveTo(Math.round(sx(i * world.zoneWidth)) + 0.5, sy(0));
    ctx.lineTo(Math.round(sx(i * world.zoneWidth)) + 0.5, sy(world.height));
    ctx.stroke();
  }
  ctx.setLineDash([]);

  // The relic (only the zone that holds it knows where it is).
  if (snap?.relic && !snap.relic.taken) {
    ctx.fillStyle = "#fbbf24";
    ctx.beginPath();
    const rx = sx(snap.relic.x);
    const ry = sy(snap.relic.y);
    ctx.moveTo(rx, ry - 9);
    ctx.lineTo(rx + 7, ry);
    ctx.lineTo(rx, ry + 9);
    ctx.lineTo(rx - 7, ry);
    ctx.closePath();
    ctx.fill();
  }

  // The players of the current zone, and this page's own player even
  // between two zones.
  let mine = null;
  if (snap) {
    for (const p of snap.players) {
      const g = glides.get(p.id);
      if (!g) continue;
      const pos = position(g, now);
      if (p.id === state.me) {
        mine = { ...pos, held: false, tick: snap.tick, sx: p.x };
        continue;
      }
      dot(sx(pos.x), sy(pos.y), "#7aa2ff", p.id);
    }
  }
  if (!mine && lastDrawn && state.me) mine = { x: lastDrawn.x, y: lastDrawn.y, held: true, tick: snap?.tick ?? 0, sx: null };
  if (mine) {
    dot(sx(mine.x), sy(mine.y), "#ffffff", "you");
    lastDrawn = { x: mine.x, y: mine.y };
  }
  record(now, mine);
  ctx.restore();
}

function dot(x, y, color, label) {
  ctx.fillStyle = color;
  ctx.beginPath();
  ctx.arc(x, y, 9, 0, Math.PI * 2);
  ctx.fill();
  ctx.fillStyle = "#8b97ad";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.fillText(String(label), x, y + 22 > H - 4 ? y - 14 : y + 22);
}

function record(now, mine) {
  if (!state.me) return;
  state.frames.push(
    mine
      ? { shard: snapShard, x: mine.x, y: mine.y, t: now, tick: mine.tick, sx: mine.sx, held: mine.held }
      : { shard: snapShard, x: null, y: null, t: now, tick: snap?.tick ?? 0, sx: null, held: false },
  );
  if (state.frames.length > MAX_FRAMES) state.frames.splice(0, state.frames.length - MAX_FRAMES);
}

function renderStatus() {
  const s = state.connection;
  el("dot").className = `dot ${s === "open" ? "open" : s === "closed" ? "closed" : ""}`;
  el("state").textContent = s;
  el("shard").textContent = state.shard ?? "…";
  el("x").textContent = lastDrawn ? lastDrawn.x.toFixed(1) : "–";
  el("transfers").textContent = String(state.transfers);
  el("score").textContent = String(state.player?.score ?? 0);
  el("rtt").textContent = conn?.rttMs !== undefined ? `${Math.round(conn.rttMs)} ms` : "–";
  const banner = el("banner");
  if (state.banner) {
    banner.textContent = state.banner;
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }
}

let toastTimer;
function toast(text, good) {
  const t = el("toast");
  t.textContent = text;
  t.classList.toggle("good", good);
  t.classList.add("show");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => t.classList.remove("show"), 1800);
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
