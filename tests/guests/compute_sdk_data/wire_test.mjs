// The C++ compute SDK's data and shards functions on the wire: runs the
// compute_sdk_data module (sdk_data.cc) in Node's WebAssembly with a fake
// tessera_compute_v1 host that records every data / shards request and
// answers with canned replies or errors, and checks the request JSON each
// function builds (escaping, optional members), how replies and
// last_error reach the module, and the requests the SDK refuses itself.
//
//   node wire_test.mjs <compute_sdk_data.wasm>
// Exits 1 with the failed checks listed; prints "ok: N checks" otherwise.
import assert from 'node:assert/strict';
import fs from 'node:fs';

const wasmPath = process.argv[2];
if (!wasmPath) {
  console.error('usage: node wire_test.mjs <compute_sdk_data.wasm>');
  process.exit(2);
}

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', {fatal: true});
let mem = null;
let lastReply = '';
let lastError = '';
let requests = [];
// (fn, op, request object) -> {reply: string} | {code, name, message}
let answer = () => ({reply: '{}'});

const bytes = (p, n) => new Uint8Array(mem.buffer, p, n);
const text = (p, n) => dec.decode(bytes(p, n));
function copyOut(s, p, cap) {
  const b = enc.encode(s);
  if (cap > 0) bytes(p, Math.min(cap, b.length)).set(b.subarray(0, cap));
  return b.length;
}
const hostOp = (fn) => (opPtr, opLen, reqPtr, reqLen) => {
  const op = text(opPtr, opLen);
  const raw = text(reqPtr, reqLen);
  const req = JSON.parse(raw);  // throws (fails the test) on bad JSON
  requests.push({fn, op, req, raw});
  const out = answer(fn, op, req);
  if (out.code) {
    lastError = JSON.stringify({code: out.name, message: out.message});
    return out.code;
  }
  lastReply = out.reply;
  return enc.encode(out.reply).length;
};
const logs = [];
const imports = {
  tessera_compute_v1: {
    log: (level, p, n) => logs.push([level, text(p, n)]),
    data: hostOp('data'),
    shards: hostOp('shards'),
    reply: (p, cap) => copyOut(lastReply, p, cap),
    last_error: (p, cap) => copyOut(lastError, p, cap),
  },
};

const module = await WebAssembly.compile(fs.readFileSync(wasmPath));
const wanted = WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`);
for (const name of wanted) {
  const [m, f] = name.split('.');
  assert.ok(imports[m] && imports[m][f], `the module imports ${name}, which this harness lacks`);
}
const instance = await WebAssembly.instantiate(module, imports);
const x = instance.exports;
mem = x.memory;
if (x._initialize) x._initialize();
assert.equal(x.tessera_compute_init(), 0);

function invoke(exportName, params, extra = {}) {
  requests = [];
  const input = enc.encode(JSON.stringify({export: exportName, params, callerUserId: '', ...extra}));
  const ptr = x.tessera_alloc(input.length);
  bytes(ptr, input.length).set(input);
  const code = x.tessera_compute_invoke(ptr, input.length);
  const out = text(x.tessera_output_ptr(), x.tessera_output_len());
  let json = null;
  try {
    if (code === 0) json = JSON.parse(out);
  } catch {
    // left null: the check looks at `out`
  }
  return {code, out, json};
}

const failures = [];
let checks = 0;
function check(name, fn) {
  checks++;
  answer = () => ({reply: '{}'});
  try {
    fn();
  } catch (e) {
    failures.push(`${name}: ${e.message}`);
  }
}
const only = (fn, op) => {
  assert.equal(requests.length, 1, `requests: ${JSON.stringify(requests)}`);
  assert.equal(requests[0].fn, fn);
  assert.equal(requests[0].op, op);
  return requests[0].req;
};

check('data get / lookup / remove: requests and replies', () => {
  answer = () => ({reply: '{"row":{"id":"c1","hp":3}}'});
  let r = invoke('get', {type: 'Character', id: 'c1'});
  assert.deepEqual(only('data', 'get'), {type: 'Character', id: 'c1'});
  assert.deepEqual(r.json, {ok: true, reply: {row: {id: 'c1', hp: 3}}});
  r = invoke('lookup', {type: 'Character', field: 'name', value: '"Ann"'});
  assert.deepEqual(only('data', 'lookup'), {type: 'Character', field: 'name', value: 'Ann'});
  answer = () => ({reply: '{"deleted":true}'});
  r = invoke('remove', {type: 'Character', id: 'c1'});
  assert.deepEqual(only('data', 'delete'), {type: 'Character', id: 'c1'});
  assert.deepEqual(r.json.reply, {deleted: true});
});

check('strings are escaped; *_json values are sent as given', () => {
  const nasty = 'a"b\\c\nd\u0001é';
  answer = () => ({reply: '{"row":{"id":"x"}}'});
  invoke('insert', {type: 'Item', id: nasty, fields: '{"name": "q\\"uote", "n": [1, 2.5, -3e2]}'});
  const req = only('data', 'insert');
  assert.deepEqual(req, {type: 'Item', id: nasty, fields: {name: 'q"uote', n: [1, 2.5, -300]}});
  // Numbers keep their text.
  assert.ok(requests[0].raw.includes('-3e2'), requests[0].raw);
});

check('optional members: insert without id, list without cursor', () => {
  invoke('insert', {type: 'Item', fields: '{}'});
  assert.deepEqual(only('data', 'insert'), {type: 'Item', fields: {}});
  answer = () => ({reply: '{"rows":[],"nextCursor":""}'});
  invoke('list', {type: 'Item'});
  assert.deepEqual(only('data', 'list'), {type: 'Item', where: {}, limit: 100});
  invoke('list', {type: 'Item', where: '{"hp":{"gt":3}}', cursor: 'i9', limit: 5});
  assert.deepEqual(only('data', 'list'), {type: 'Item', where: {hp: {gt: 3}}, cursor: 'i9', limit: 5});
  invoke('count', {type: 'Item', where: '{"x":null}'});
  assert.deepEqual(only('data', 'count'), {type: 'Item', where: {x: null}});
  invoke('update', {type: 'Item', id: 'i1', set: '{"hp":4}'});
  assert.deepEqual(only('data', 'update'), {type: 'Item', id: 'i1', set: {hp: 4}});
});

check('malformed *_json arguments are refused before the host', () => {
  for (const [exp, params, why] of [
    ['insert', {type: 'Item', fields: '{"a":'}, 'fields_json: malformed JSON'],
    ['insert', {type: 'Item', fields: '[1]'}, 'fields_json: expected a JSON object'],
    ['update', {type: 'Item', id: 'i', set: '{} {}'}, 'set_json: malformed JSON'],
    ['list', {type: 'Item', where: '"x"'}, 'where_json: expected a JSON object'],
    ['lookup', {type: 'Item', field: 'f', value: 'nope'}, 'value_json: malformed JSON'],
    ['send', {id: 's', input: '{"a":1},"id":"other"'}, 'input_json: malformed JSON'],
    ['ticket', {id: 's', subscriber: 'p', claims: '[]'}, 'claims_json: expected a JSON object'],
    ['raw_data', {op: 'get', request: '{"type":'}, 'request_json: malformed JSON'],
    ['raw_shards', {op: 'list', request: '[]'}, 'request_json: expected a JSON object'],
  ]) {
    const r = invoke(exp, params);
    assert.equal(requests.length, 0, `${exp}: sent ${JSON.stringify(requests)}`);
    assert.equal(r.json.ok, false, exp);
    assert.equal(r.json.code, 'BAD_REQUEST', exp);
    assert.equal(r.json.status, exp.startsWith('raw_shards') || ['send', 'ticket'].includes(exp) ? -11 : -10, exp);
    assert.ok(r.json.message.startsWith(why), `${exp}: ${r.json.message}`);
  }
});

check("the host's refusal: code, error_code() and message from last_error", () => {
  answer = (fn) => fn === 'data'
    ? {code: -10, name: 'ROW_NOT_FOUND', message: 'no Item "x"'}
    : {code: -11, name: 'SHARD_NOT_FOUND', message: 'no shard z'};
  let r = invoke('update', {type: 'Item', id: 'x', set: '{}'});
  assert.deepEqual(r.json, {ok: false, code: 'ROW_NOT_FOUND', status: -10, message: 'no Item "x"'});
  r = invoke('stop', {id: 'z'});
  assert.deepEqual(r.json, {ok: false, code: 'SHARD_NOT_FOUND', status: -11, message: 'no shard z'});
  answer = () => ({code: -7, name: 'data_ops', message: 'over 50 data ops'});
  r = invoke('count', {type: 'Item'});
  assert.deepEqual(r.json, {ok: false, code: 'data_ops', status: -7, message: 'over 50 data ops'});
});

check('shards requests', () => {
  answer = () => ({reply: '{"id":"a1","kind":"arena","status":"running"}'});
  let r = invoke('create', {kind: 'arena', id: 'a1'});
  assert.deepEqual(only('shards', 'create'), {kind: 'arena', id: 'a1'});
  assert.equal(r.json.reply.status, 'running');
  invoke('create', {kind: 'arena', id: 'a2', params: '{"map":"dunes"}', machine: 'm2'});
  assert.deepEqual(only('shards', 'create'), {kind: 'arena', id: 'a2', params: {map: 'dunes'}, machine: 'm2'});
  invoke('shard_get', {id: 'a1'});
  assert.deepEqual(only('shards', 'get'), {id: 'a1'});
  invoke('shard_list', {});
  assert.deepEqual(only('shards', 'list'), {});
  invoke('shard_list', {kind: 'arena'});
  assert.deepEqual(only('shards', 'list'), {kind: 'arena'});
  answer = () => ({reply: '{"ticket":"t.k"}'});
  r = invoke('ticket', {id: 'a1', subscriber: 'p1', claims: '{"team":"red"}', ttl: 30});
  assert.deepEqual(only('shards', 'ticket'), {id: 'a1', subscriber: 'p1', claims: {team: 'red'}, ttlSecs: 30});
  assert.equal(r.json.reply.ticket, 't.k');
  invoke('ticket', {id: 'a1', subscriber: 'p1'});
  assert.deepEqual(only('shards', 'ticket'), {id: 'a1', subscriber: 'p1', claims: {}, ttlSecs: 600});
  invoke('send', {id: 'a1', input: '{"heal":{"hp":5}}'});
  assert.deepEqual(only('shards', 'send'), {id: 'a1', input: {heal: {hp: 5}}});
  invoke('publish', {target: 'group:north', topic: 'news', data: 'line1\n"quoted"'});
  assert.deepEqual(only('shards', 'publish'), {target: 'group:north', topic: 'news', data: 'line1\n"quoted"'});
  invoke('transfer', {from: 'a1', subscriber: 'p1', to: 'a2'});
  assert.deepEqual(only('shards', 'transfer'), {from: 'a1', subscriber: 'p1', to: 'a2', claims: {}});
  invoke('stop', {id: 'a2'});
  assert.deepEqual(only('shards', 'stop'), {id: 'a2'});
  invoke('raw_shards', {op: 'list', request: '{"kind":"x"}'});
  assert.deepEqual(only('shards', 'list'), {kind: 'x'});
});

check('an empty reply is an empty json, still ok', () => {
  answer = () => ({reply: ''});
  const r = invoke('raw_data', {op: 'get', request: '{"type":"T","id":"i"}'});
  assert.equal(r.code, 0);
  assert.equal(r.out, '{"ok":true,"reply":}');  // the module pastes json as is
});

check('a large reply is read whole', () => {
  const big = 'x'.repeat(300000);
  answer = () => ({reply: JSON.stringify({row: {id: 'b', big}})});
  const r = invoke('get', {type: 'T', id: 'b'});
  assert.equal(r.json.reply.row.big.length, big.length);
});

check('Reply::decode, and a refused insert fails the run with CODE: message', () => {
  answer = () => ({reply: '{"row":{"id":"item-7","createdAt":1,"owner":"p1"}}'});
  let r = invoke('grant', {type: 'Item', fields: '{"owner":"p1"}'});
  assert.deepEqual(r.json, {id: 'item-7'});
  answer = () => ({reply: '{"row":"not an object"}'});
  r = invoke('grant', {type: 'Item', fields: '{}'});
  assert.equal(r.code, 1);
  assert.ok(r.out.startsWith('reply: '), r.out);
  let n = 0;
  answer = () => (n++ === 0 ? {reply: '{"row":{"id":"k"}}'}
                            : {code: -10, name: 'ROW_EXISTS', message: 'Item k exists'});
  r = invoke('insert_twice', {type: 'Item', id: 'k', fields: '{}'});
  assert.equal(requests.length, 2);
  assert.deepEqual([r.code, r.out], [1, 'ROW_EXISTS: Item k exists']);
});

check('Invocation::caller_shard_id', () => {
  let r = invoke('caller', {}, {callerUserId: 'u1', callerShardId: 'zone-1'});
  assert.deepEqual(r.json, {user: 'u1', shard: 'zone-1'});
  r = invoke('caller', {}, {callerShardId: null});
  assert.deepEqual(r.json, {user: '', shard: ''});
  r = invoke('caller', {});
  assert.deepEqual(r.json, {user: '', shard: ''});
});

if (failures.length) {
  console.error(`${failures.length} of ${checks} checks failed:\n` + failures.join('\n'));
  process.exit(1);
}
console.log(`ok: ${checks} checks`);
