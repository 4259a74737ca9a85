// The lobby demo: two realms of examples/lobby/tessera.json with the same
// key (?room=, default "main"), joined as the avatar ?name= (one is made up
// and put in the address when missing, so that a reload keeps it).
//
// - presence/<room> (ephemeral): the server keeps here/<avatar> while an
//   avatar has a connection and, when its last one leaves, deletes it with
//   cursors/<avatar> and names/<avatar> (the kind's "presence" field). The
//   page writes names/<me> after every attach (assertOnAttach: an ephemeral
//   realm forgets it when it restarts, and the server prunes it when this
//   avatar leaves) and its mouse position over the board to cursors/<me>
//   as fractions of the board area, at most every CURSOR_MS and only when
//   it moved. Everyone else's cursor is drawn with their name; "who is
//   here" lists `here`.
// - match/<room> (durable): tic-tac-toe. seats/<avatar> is "X" or "O": a
//   page takes the first free seat when it has none (two pages racing for
//   one seat both see the clash once both writes are committed, and the
//   avatar that sorts last moves to the other seat). A click on a cell
//   sends the intent "move" {cell}; the realm's module (compute/match)
//   checks the turn, the seat and the cell and only then appends {by,
//   cell, mark} to moves (clients cannot write moves themselves). Chat
//   messages are appended to chat.
//
// The board is derived from `moves`; every move there is legal, since only
// the module writes them.
//
// Reload resume: each realm's (epoch, version, confirmed document) is kept
// in sessionStorage (on every commit and when the page goes away) and given
// back to connectRealm's `resume` option on load, so the server answers
// RESUME and replays the commits missed instead of a HYDRATE.
//
// window.__lobby exposes, read-only, for tests and the curious: me, room,
// presence and match ({state, epoch, version, pending (writes not yet
// confirmed), lastAttach: "hydrate" | "resume", attach: {mode, version,
// head} (null between a drop and the next attach), document}; match also has
// board (9 of "X" | "O" | null), moves, seats, turn, winner, chat), here
// (the avatars in presence here/, sorted) and cursors ({avatar: {x, y}},
// fractions of the board area).
import { connectRealm } from "/sdk/tessera-client.js";

const params = new URLSearchParams(location.search);
const NAME_RE = /^[A-Za-z0-9_.-]{1,32}$/;
const ROOM_RE = /^[A-Za-z0-9_.:-]{1,128}$/;
const CURSOR_MS = 50;
const MAX_CHAT = 100;
const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];

const el = (id) => document.getElementById(id);
// A pointer whose tip is at the cursor's position.
const ARROW =
  '<svg width="16" height="22" viewBox="0 0 16 22"><path d="M1 1v17l4.6-4.3 3 6.8 2.9-1.3-3-6.6H15z" ' +
  'style="fill: var(--c)" stroke="#0b1019" stroke-width="1.4" stroke-linejoin="round"/></svg>';

let me = (params.get("name") || "").trim();
if (!NAME_RE.test(me)) {
  me = `guest-${Math.floor(Math.random() * 9000 + 1000)}`;
  params.set("name", me);
  history.replaceState(null, "", `?${params}`);
}
let room = (params.get("room") || "").trim();
if (!ROOM_RE.test(room)) room = "main";

const lobby = {
  me,
  room,
  presence: realmView(),
  match: { ...realmView(), board: Array(9).fill(null), moves: [], seats: {}, turn: "X", winner: null, chat: [] },
  here: [],
  cursors: {},
};
window.__lobby = lobby;

let mouse = null; // {x, y}: the pointer over the board area, fractions of it
let sentCursor = null; // the last one written to cursors/<me>
let cursorTimer;

function realmView() {
  return { state: "connecting", epoch: 0, version: 0, pending: 0, lastAttach: null, attach: null, document: {} };
}

// -- keeping a realm across reloads ------------------------------------------

const storageKey = (kind) => `tessera.lobby.${kind}.${room}.${me}`;

function loadKept(kind) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(storageKey(kind)) ?? "null");
    if (kept && Number.isInteger(kept.epoch) && Number.isInteger(kept.version) && kept.epoch > 0 && kept.document) return kept;
  } catch {
    /* nothing usable kept */
  }
  return undefined;
}

function keep(conn) {
  if (conn.epoch === 0) return; // never attached
  try {
    sessionStorage.setItem(
      storageKey(conn.kind),
      JSON.stringify({ epoch: conn.epoch, version: conn.version, document: conn.confirmed }),
    );
  } catch {
    /* storage full or off: the next load hydrates */
  }
}

// -- connecting ------------------------------------------------------------

async function ticket({ kind, key }) {
  const res = await fetch(`/api/realms/${kind}/${key}/join`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ subscriber: me }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `join failed: HTTP ${res.status}`);
  return body.ticket;
}

function open(kind, view) {
  const kept = loadKept(kind);
  const conn = connectRealm(location.origin, kind, room, { ticket, ...(kept ? { resume: kept } : {}) });
  conn.on("open", (a) => {
    view.lastAttach = a.mode;
    view.attach = { mode: a.mode, version: a.version, head: a.head ?? a.version };
    hideOverlay();
    update();
  });
  conn.on("change", update);
  conn.on("commit", () => {
    keep(conn);
    update(); // an ACK moves the confirmed version without changing the shown document
  });
  conn.on("state", (state) => {
    if (state !== "open") view.attach = null; // set again by the next attach
    update();
  });
  conn.on("reject", (r) => {
    if (!r.local || r.code !== "invalid_patch") toast(`${kind}: ${r.message}`);
  });
  conn.on("error", (e) => {
    console.warn(`lobby ${kind}:`, e.message);
    if (conn.state === "closed") showOverlay(`The ${kind} realm closed: ${escapeHtml(e.message)}`);
  });
  return conn;
}

const presence = open("presence", lobby.presence);
const match = open("match", lobby.match);

presence.assertOnAttach(() => {
  const ops = [{ op: "set", path: ["names", me], value: me }];
  if (sentCursor) ops.push({ op: "set", path: ["cursors", me], value: sentCursor });
  return ops;
});

addEventListener("pagehide", () => {
  keep(presence);
  keep(match);
});

// -- presence: cursors -------------------------------------------------------

const stage = el("stage");

stage.addEventListener("pointermove", (ev) => {
  const r = stage.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return;
  const f = (v) => Math.round(Math.min(1, Math.max(0, v)) * 1000) / 1000;
  mouse = { x: f((ev.clientX - r.left) / r.width), y: f((ev.clientY - r.top) / r.height) };
  if (cursorTimer === undefined) sendCursor();
});

/** Writes the cursor when it moved, then waits CURSOR_MS before the next. */
function sendCursor() {
  cursorTimer = undefined;
  if (!mouse || (sentCursor && mouse.x === sentCursor.x && mouse.y === sentCursor.y)) return;
  if (presence.state === "closed") return;
  sentCursor = mouse;
  presence.set(["cursors", me], sentCursor);
  cursorTimer = setTimeout(sendCursor, CURSOR_MS);
}

// -- match: seats, moves, chat -----------------------------------------------

/** The board as every client derives it from the moves (see the top of the file). */
function derive(seats, moves) {
  const board = Array(9).fill(null);
  let turn = "X";
  let winner = null;
  let line = null;
  let valid = 0;
  for (const m of moves) {
    if (winner) break;
    if (!m || typeof m !== "object" || typeof m.by !== "string") continue;
    if (seats[m.by] !== turn) continue;
    if (!Number.isInteger(m.cell) || m.cell < 0 || m.cell > 8 || board[m.cell] !== null) continue;
    board[m.cell] = turn;
    valid++;
    line = LINES.find((l) => l.every((c) => board[c] === turn)) ?? null;
    if (line) winner = turn;
    else turn = turn === "X" ? "O" : "X";
  }
  if (!winner && valid === 9) winner = "draw";
  return { board, turn: winner ? null : turn, winner, line };
}

function seatsOf(doc) {
  const seats = {};
  const raw = doc.seats && typeof doc.seats === "object" ? doc.seats : {};
  for (const [who, mark] of Object.entries(raw)) if (mark === "X" || mark === "O") seats[who] = mark;
  return seats;
}

/** Takes a free seat when this avatar has none, and gives way when two hold one. */
function claimSeat(seats) {
  // Only on a document that is caught up: after a RESUME, once the replay is in.
  const attach = lobby.match.attach;
  if (match.state !== "open" || !attach || match.version < attach.head) return;
  const holders = (mark) => Object.keys(seats).filter((a) => seats[a] === mark).sort();
  const mine = seats[me];
  if (mine) {
    const others = holders(mine).filter((a) => a !== me);
    if (others.length === 0 || others.every((a) => a > me)) return;
    const other = mine === "X" ? "O" : "X";
    if (holders(other).length === 0) match.set(["seats", me], other);
    else match.delete(["seats", me]);
    return;
  }
  const free = ["X", "O"].find((mark) => holders(mark).length === 0);
  if (free) match.set(["seats", me], free);
}

const boardEl = el("board");
const cells = [];
for (let i = 0; i < 9; i++) {
  const b = document.createElement("button");
  b.type = "button";
  b.dataset.cell = String(i);
  b.setAttribute("aria-label", `cell ${i + 1}`);
  b.addEventListener("click", () => play(i));
  boardEl.append(b);
  cells.push(b);
}

function play(cell) {
  const m = lobby.match;
  if (match.state === "closed" || m.winner || m.board[cell] !== null) return;
  if (!m.seats[me]) return toast("the two seats are taken: you are watching");
  if (m.seats[me] !== m.turn) return toast(`it is ${m.turn}'s turn`);
  // The match module checks the move (examples/lobby/compute/match).
  void match.intent("move", { cell }).then((outcome) => {
    if (outcome.status === "rejected") toast(outcome.message);
  });
}

el("chat-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const input = el("chat-input");
  const text = input.value.trim().slice(0, 200);
  if (!text || match.state === "closed") return;
  match.append(["chat"], { by: me, text, at: Date.now() });
  input.value = "";
});

// -- state and drawing ---------------------------------------------------------

let renderQueued = false;

function update() {
  for (const [conn, view] of [[presence, lobby.presence], [match, lobby.match]]) {
    view.state = conn.state;
    view.epoch = conn.epoch;
    view.version = conn.version;
    view.pending = conn.pendingWrites;
    view.document = conn.document;
  }
  const p = presence.document;
  lobby.here = Object.keys(isObj(p.here) ? p.here : {}).sort();
  const cursors = {};
  for (const [who, c] of Object.entries(isObj(p.cursors) ? p.cursors : {})) {
    if (isObj(c) && Number.isFinite(c.x) && Number.isFinite(c.y)) cursors[who] = { x: c.x, y: c.y };
  }
  lobby.cursors = cursors;

  const d = match.document;
  const seats = seatsOf(d);
  const moves = Array.isArray(d.moves) ? d.moves : [];
  const derived = derive(seats, moves);
  Object.assign(lobby.match, {
    seats,
    moves,
    board: derived.board,
    turn: derived.turn,
    winner: derived.winner,
    line: derived.line,
    chat: Array.isArray(d.chat) ? d.chat.slice(-MAX_CHAT) : [],
  });
  claimSeat(seats);
  if (!renderQueued) {
    renderQueued = true;
    requestAnimationFrame(render);
  }
}

function names() {
  const n = presence.document.names;
  return isObj(n) ? n : {};
}
const label = (who) => (typeof names()[who] === "string" ? names()[who] : who);

function render() {
  renderQueued = false;
  const m = lobby.match;
  el("room").textContent = room;
  el("me").textContent = me;

  // The board.
  const myMark = m.seats[me];
  for (let i = 0; i < 9; i++) {
    const v = m.board[i];
    const b = cells[i];
    b.textContent = v ?? "";
    b.className = `${v ? v.toLowerCase() : ""}${m.line?.includes(i) ? " win" : ""}`;
    b.disabled = v !== null || !!m.winner || !myMark || myMark !== m.turn || match.state !== "open";
  }
  const holder = (mark) => Object.keys(m.seats).filter((a) => m.seats[a] === mark).sort()[0];
  let status;
  // The server's rematch alarm clears a finished board (settings.rematchAfterMs).
  const rematchS = Math.round((match.document?.settings?.rematchAfterMs ?? 10000) / 1000);
  const again = ` A new game starts in ${rematchS} s.`;
  if (m.winner === "draw") status = "A draw." + again;
  else if (m.winner) status = `${label(holder(m.winner)) ?? m.winner} (${m.winner}) wins.` + again;
  else if (!holder("X") || !holder("O")) status = "Waiting for a second player.";
  else status = m.turn === myMark ? `Your turn (${myMark}).` : `${label(holder(m.turn))} (${m.turn}) to move.`;
  el("match-status").textContent = status;
  el("seats").replaceChildren(
    ...["X", "O"].map((mark) => {
      const li = document.createElement("li");
      li.dataset.mark = mark;
      const who = holder(mark);
      li.append(markEl(mark), text(who ? label(who) : "free"));
      if (who === me) li.append(you());
      return li;
    }),
  );

  // Who is here.
  el("here-count").textContent = String(lobby.here.length);
  el("here").replaceChildren(
    ...lobby.here.map((who) => {
      const li = document.createElement("li");
      li.dataset.avatar = who;
      const sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.setProperty("--c", colorOf(who));
      li.append(sw, text(label(who)));
      if (m.seats[who]) li.append(markEl(m.seats[who]));
      if (who === me) li.append(you());
      return li;
    }),
  );

  // Everyone else's cursor.
  const layer = el("cursors");
  const shown = new Set();
  for (const [who, c] of Object.entries(lobby.cursors)) {
    if (who === me) continue;
    shown.add(who);
    let div = layer.querySelector(`.cursor[data-avatar="${CSS.escape(who)}"]`);
    if (!div) {
      div = document.createElement("div");
      div.className = "cursor";
      div.dataset.avatar = who;
      div.style.setProperty("--c", colorOf(who));
      div.innerHTML = ARROW;
      div.append(document.createElement("span"));
      layer.append(div);
    }
    div.lastChild.textContent = label(who);
    div.style.left = `${c.x * 100}%`;
    div.style.top = `${c.y * 100}%`;
  }
  for (const div of [...layer.children]) if (!shown.has(div.dataset.avatar)) div.remove();

  // Chat.
  const chat = el("chat");
  const atBottom = chat.scrollTop + chat.clientHeight >= chat.scrollHeight - 4;
  chat.replaceChildren(
    ...m.chat.map((c) => {
      const li = document.createElement("li");
      const who = document.createElement("b");
      who.textContent = typeof c?.by === "string" ? label(c.by) : "?";
      who.style.color = colorOf(String(c?.by));
      li.append(who, text(typeof c?.text === "string" ? c.text : ""));
      return li;
    }),
  );
  if (atBottom) chat.scrollTop = chat.scrollHeight;

  // The status line.
  for (const [kind, conn, view] of [["presence", presence, lobby.presence], ["match", match, lobby.match]]) {
    el(`${kind}-dot`).className = `dot ${conn.state === "open" ? "open" : conn.state === "closed" ? "closed" : ""}`;
    el(`${kind}-state`).textContent = conn.state;
    el(`${kind}-version`).textContent = `v${conn.version}`;
    el(`${kind}-attach`).textContent = view.lastAttach ?? "–";
  }
}

function markEl(mark) {
  const s = document.createElement("span");
  s.className = `mark ${mark.toLowerCase()}`;
  s.textContent = mark;
  return s;
}
function you() {
  const s = document.createElement("span");
  s.className = "you";
  s.textContent = "(you)";
  return s;
}
const text = (s) => document.createTextNode(s);

function colorOf(who) {
  let h = 0;
  for (const ch of who) h = (h * 31 + ch.codePointAt(0)) % 360;
  return `hsl(${h} 80% 65%)`;
}
function isObj(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

let toastTimer;
function toast(msg) {
  const t = el("toast");
  t.textContent = msg;
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

update();
