// The dashboard's script (dashboard_page.h), served at /_dashboard/app.js.
#include "server/dashboard_page.h"

namespace tessera::server {

namespace {

constexpr std::string_view kScript = R"js(
// The tessera dashboard: polls the admin API with the token the admin gave
// (kept in sessionStorage) and draws what it answers.
'use strict';

const TOKEN_KEY = 'tessera.adminToken';
const HISTORY_MS = 120000;  // what the charts show
const RATE_WINDOW_MS = 3000;  // ticks/s over the polls of the last 3 s
const POLL_MS = 1000;

const $ = (id) => document.getElementById(id);
const samples = new Map();  // shard id -> [{t, tick, fuel, subs, queued, ...}]
const latest = new Map();   // shard id -> the last detail, with rate, fuel
let token = null;
let selected = null;
let timer = null;
let slowTick = 0;

// --- the token: from the URL fragment once, then this tab's storage ---

function takeTokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const given = params.get('token');
  if (given === null) return;
  sessionStorage.setItem(TOKEN_KEY, given);
  params.delete('token');
  const rest = params.toString();
  window.history.replaceState(
      null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
}

function showLogin(message) {
  stop();
  token = null;
  $('app').hidden = true;
  $('forget').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message || '';
  $('token').focus();
}

function start(given) {
  token = given;
  $('login').hidden = true;
  $('app').hidden = false;
  $('forget').hidden = false;
  poll();
}

function stop() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

class Unauthorized extends Error {}

async function api(method, path, body) {
  const init = {method, headers: {Authorization: 'Bearer ' + token}};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  if (r.status === 401) throw new Unauthorized();
  const text = await r.text();
  let value = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch (e) {
    value = {message: text};
  }
  return {status: r.status, ok: r.ok, body: value};
}

// --- polling ---

// One poll at a time: asked while one runs, the next starts when it ends.
let polling = false;
let pollAgain = false;

async function poll() {
  if (polling) {
    pollAgain = true;
    return;
  }
  stop();
  polling = true;
  try {
    await pollShards();
    if (slowTick % 5 === 0) await pollOthers();
    slowTick++;
    if (selected !== null) await pollLog(selected);
    $('error').textContent = '';
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    if (e instanceof Unauthorized) {
      sessionStorage.removeItem(TOKEN_KEY);
      showLogin('The server refused this token.');
    } else {
      $('error').textContent = 'Cannot reach the server: ' + e.message;
    }
  } finally {
    polling = false;
  }
  if (token !== null) timer = setTimeout(poll, pollAgain ? 0 : POLL_MS);
  pollAgain = false;
}

async function pollShards() {
  const list = await api('GET', '/api/shards');
  if (!list.ok) throw new Error(errorText(list));
  const now = performance.now();
  const details = await Promise.all(list.body.map(async (summary) => {
    const r = await api('GET', '/api/shards/' + encodeURIComponent(summary.id));
    return r.ok ? r.body : summary;
  }));
  const listed = new Set();
  for (const d of details) {
    listed.add(d.id);
    record(d, now);
  }
  for (const [id, d] of latest) {
    if (listed.has(id)) continue;
    d.gone = true;
    const h = samples.get(id);
    if (!h || now - h[h.length - 1].t > HISTORY_MS) {
      latest.delete(id);
      samples.delete(id);
    }
  }
  renderShards();
  if (selected !== null) renderDetail();
}

function record(d, now) {
  let h = samples.get(d.id);
  if (!h) samples.set(d.id, h = []);
  const sample = {t: now, tick: d.tick, fuel: d.fuel_used,
    subs: d.subscribers, queued: d.queued_inputs, rate: null, perTick: null};
  let base = null;
  for (const s of h) {
    if (now - s.t <= RATE_WINDOW_MS && s.tick <= d.tick) {
      base = s;
      break;
    }
  }
  if (base !== null && now > base.t) {
    sample.rate = (d.tick - base.tick) * 1000 / (now - base.t);
    if (d.tick > base.tick && typeof d.fuel_used === 'number') {
      sample.perTick = (d.fuel_used - base.fuel) / (d.tick - base.tick);
    } else {
      const prev = h[h.length - 1];
      sample.perTick = prev ? prev.perTick : null;
    }
  }
  if (d.status !== 'running') sample.rate = d.status === 'starting' ? null : 0;
  h.push(sample);
  while (h.length && now - h[0].t > HISTORY_MS) h.shift();
  latest.set(d.id, Object.assign({}, d, {rate: sample.rate,
    perTick: sample.perTick, gone: false}));
}

async function pollOthers() {
  const [kinds, realms, compute] = await Promise.all([
    api('GET', '/api/kinds'), api('GET', '/api/realms'),
    api('GET', '/api/compute/modules')]);
  renderKinds(kinds);
  renderRealms(realms);
  renderCompute(compute);
}

async function pollLog(id) {
  const r = await api('GET', '/api/shards/' + encodeURIComponent(id) + '/log');
  const pre = $('log');
  pre.textContent = '';
  if (!r.ok) {
    pre.textContent = '(' + errorText(r) + ')';
    return;
  }
  for (const line of r.body.lines) {
    const span = document.createElement('span');
    span.className = 'l' + line.level;
    span.textContent = line.text + '\n';
    pre.append(span);
  }
  if (!r.body.lines.length) pre.textContent = '(nothing logged yet)';
  pre.scrollTop = pre.scrollHeight;
}

// --- rendering ---

function cell(tr, text, field, numeric) {
  const td = document.createElement('td');
  td.textContent = text;
  if (field) td.dataset.field = field;
  if (numeric) td.className = 'n';
  tr.append(td);
  return td;
}

function fmt(n, digits) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  return n.toLocaleString('en-US', {maximumFractionDigits: digits || 0});
}

function errorText(r) {
  const b = r.body || {};
  return r.status + (b.code ? ' ' + b.code : '') +
      (b.message ? ': ' + b.message : '');
}

function renderShards() {
  const body = document.querySelector('#shards tbody');
  body.textContent = '';
  const ids = [...latest.keys()].sort();
  $('no-shards').hidden = ids.length > 0;
  for (const id of ids) {
    const d = latest.get(id);
    const tr = document.createElement('tr');
    tr.className = 'shard' + (d.gone ? ' gone' : '') +
        (id === selected ? ' selected' : '');
    tr.dataset.shard = id;
    tr.addEventListener('click', () => select(id));
    cell(tr, id, 'id');
    cell(tr, d.kind, 'kind');
    const status = cell(tr, d.gone ? d.status + ' (no longer listed)' :
        d.status, 'status');
    status.classList.add('status-' + d.status);
    cell(tr, fmt(d.subscribers), 'subscribers', true);
    cell(tr, fmt(d.tick), 'tick', true);
    cell(tr, d.gone ? '–' : fmt(d.rate, 1), 'rate', true);
    cell(tr, fmt(d.perTick), 'fuel', true);
    cell(tr, fmt(d.overruns), 'overruns', true);
    cell(tr, fmt(d.queued_inputs), 'queued', true);
    cell(tr, d.module || '–', 'module');
    const why = d.stop_reason ? d.stop_reason +
        (d.stop_message ? ': ' + d.stop_message : '') : '';
    cell(tr, why || (d.last_error || ''), 'stop');
    tr.append(actions(d));
    body.append(tr);
  }
}

function actions(d) {
  const td = document.createElement('td');
  td.addEventListener('click', (e) => e.stopPropagation());
  if (d.gone || (d.status !== 'running' && d.status !== 'failed' &&
                 d.status !== 'starting')) {
    return td;
  }
  const ids = d.subscriber_ids || [];
  if (ids.length) {
    const pick = document.createElement('select');
    pick.setAttribute('aria-label', 'subscriber');
    for (const s of ids) pick.append(new Option(s, s));
    const kick = document.createElement('button');
    kick.textContent = 'Kick';
    kick.dataset.action = 'kick';
    kick.addEventListener('click', () => act(d.id, 'kick',
        {subscriber: pick.value}, 'kick ' + pick.value + ' from ' + d.id));
    td.append(pick, ' ', kick, ' ');
  }
  const stopButton = document.createElement('button');
  stopButton.textContent = 'Stop';
  stopButton.dataset.action = 'stop';
  stopButton.addEventListener('click', () =>
    act(d.id, 'stop', {}, 'stop ' + d.id));
  td.append(stopButton);
  return td;
}

async function act(id, action, body, what) {
  if (!confirm('Really ' + what + '?')) return;
  try {
    const r = await api('POST', '/api/shards/' + encodeURIComponent(id) +
        '/' + action, body);
    if (!r.ok) alert(what + ' failed: ' + errorText(r));
  } catch (e) {
    if (!(e instanceof Unauthorized)) alert(what + ' failed: ' + e.message);
  }
  poll();
}

function select(id) {
  selected = selected === id ? null : id;
  $('detail').hidden = selected === null;
  $('log').textContent = '';
  renderShards();
  if (selected !== null) {
    renderDetail();
    pollLog(selected).catch(() => {});
    $('detail').scrollIntoView({block: 'nearest'});
  }
}

function renderDetail() {
  $('detail-id').textContent = selected;
  const h = samples.get(selected) || [];
  const series = {
    rate: (s) => s.rate, fuel: (s) => s.perTick,
    subscribers: (s) => s.subs, queued: (s) => s.queued,
  };
  for (const canvas of document.querySelectorAll('#detail canvas')) {
    const pick = series[canvas.dataset.chart];
    drawChart(canvas, h.map((s) => ({t: s.t, v: pick(s)})));
  }
}

function drawChart(canvas, points) {
  const ratio = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(canvas.clientWidth * ratio));
  const h = Math.max(1, Math.round(canvas.clientHeight * ratio));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, w, h);
  const values = points.filter((p) => typeof p.v === 'number');
  const max = Math.max(1, ...values.map((p) => p.v)) * 1.3;  // room for labels
  const now = performance.now();
  const pad = 4 * ratio;
  const x = (t) => w - (now - t) / HISTORY_MS * w;
  const y = (v) => h - pad - v / max * (h - 2 * pad);
  g.strokeStyle = '#e0e0e0';
  g.lineWidth = ratio;
  g.beginPath();
  for (const f of [0.25, 0.5, 0.75]) {
    g.moveTo(0, y(max * f));
    g.lineTo(w, y(max * f));
  }
  g.stroke();
  g.fillStyle = '#757575';
  g.font = (10 * ratio) + 'px system-ui, sans-serif';
  g.textBaseline = 'top';
  g.fillText(fmt(max, max < 10 ? 1 : 0), pad, pad);
  g.textBaseline = 'bottom';
  g.fillText('−2 min', pad, h - pad);
  if (!values.length) return;
  g.strokeStyle = '#1565c0';
  g.lineWidth = 1.5 * ratio;
  g.beginPath();
  let drawing = false;
  for (const p of points) {
    if (typeof p.v !== 'number') {
      drawing = false;
      continue;
    }
    if (drawing) g.lineTo(x(p.t), y(p.v));
    else g.moveTo(x(p.t), y(p.v));
    drawing = true;
  }
  g.stroke();
  const last = values[values.length - 1];
  g.textAlign = 'right';
  g.textBaseline = 'top';
  g.fillStyle = '#1565c0';
  g.fillText(fmt(last.v, last.v < 10 ? 1 : 0), w - pad, pad);
  g.textAlign = 'left';
}

function renderKinds(r) {
  const body = document.querySelector('#kinds tbody');
  body.textContent = '';
  if (!r.ok) {
    const tr = document.createElement('tr');
    cell(tr, errorText(r)).colSpan = 5;
    body.append(tr);
    return;
  }
  for (const k of r.body) {
    const tr = document.createElement('tr');
    tr.dataset.kind = k.kind;
    cell(tr, k.kind, 'kind');
    cell(tr, k.version || '–', 'version');
    const reload = k.reload;
    let state = 'none yet';
    let shards = '';
    if (reload) {
      state = '#' + reload.id + ' ' + reload.state +
          (reload.version ? ' → ' + reload.version : '') +
          (reload.error ? ': ' + reload.error : '');
      if (reload.finishedUnixMs) {
        state += ' (' + new Date(reload.finishedUnixMs).toLocaleTimeString() +
            ')';
      }
      shards = (reload.shards || []).map((s) => s.id + ': ' +
          (s.reloaded ? 'moved' : 'kept its module' +
              (s.message ? ' (' + s.message + ')' : ''))).join('; ');
    }
    const stateCell = cell(tr, state, 'reload');
    if (reload && reload.state === 'failed') stateCell.className = 'error';
    cell(tr, shards, 'outcomes');
    const td = document.createElement('td');
    const button = document.createElement('button');
    button.textContent = 'Reload';
    button.addEventListener('click', async () => {
      const res = await api('POST', '/api/kinds/' +
          encodeURIComponent(k.kind) + '/reload');
      if (!res.ok) alert('reload ' + k.kind + ' failed: ' + errorText(res));
      slowTick = 0;
      poll();
    });
    td.append(button);
    tr.append(td);
    body.append(tr);
  }
}

// A row that says the table is empty.
function noneRow(body, columns, text) {
  const tr = document.createElement('tr');
  const td = cell(tr, text);
  td.colSpan = columns;
  td.className = 'muted';
  body.append(tr);
}

function renderRealms(r) {
  $('realms-section').hidden = r.status === 404;
  if (r.status === 404) return;
  const body = document.querySelector('#realms tbody');
  body.textContent = '';
  if (!r.ok) {
    $('realms-summary').textContent = errorText(r);
    return;
  }
  $('realms-summary').textContent = r.body.instances + ' live instance' +
      (r.body.instances === 1 ? '' : 's');
  if (!r.body.kinds.length) noneRow(body, 3, 'No realm kinds.');
  for (const k of r.body.kinds) {
    const tr = document.createElement('tr');
    cell(tr, k.name);
    cell(tr, k.persistence);
    cell(tr, k.security);
    body.append(tr);
  }
}

function renderCompute(r) {
  $('compute-section').hidden = r.status === 404;
  if (r.status === 404) return;
  const body = document.querySelector('#compute tbody');
  body.textContent = '';
  if (!r.ok) {
    const tr = document.createElement('tr');
    cell(tr, errorText(r)).colSpan = 7;
    body.append(tr);
    return;
  }
  if (!r.body.modules.length) noneRow(body, 7, 'No compute modules.');
  for (const m of r.body.modules) {
    const tr = document.createElement('tr');
    cell(tr, m.name);
    cell(tr, m.enabled ? 'yes' : 'no');
    cell(tr, m.activeVersion === null ? '–' : String(m.activeVersion));
    cell(tr, m.loaded ? 'yes' : 'no');
    cell(tr, m.circuitState);
    cell(tr, fmt(m.triggerCount), null, true);
    cell(tr, m.lastError || '');
    body.append(tr);
  }
}

// --- start ---

$('login').addEventListener('submit', (e) => {
  e.preventDefault();
  const given = $('token').value.trim();
  if (!given) return;
  sessionStorage.setItem(TOKEN_KEY, given);
  $('token').value = '';
  start(given);
});
$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin('');
});
$('detail-close').addEventListener('click', () => select(selected));

takeTokenFromFragment();
const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved) start(saved);
else showLogin('');
)js";

}  // namespace

std::string_view DashboardScript() { return kScript; }

}  // namespace tessera::server
