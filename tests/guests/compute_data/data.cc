// Test compute module for the engine's data transactions: a scripted
// module. Invoke "run" takes {"ops": [{"api", "op", "req"}], "end"} and
// performs each op in order:
//   api "data" / "shards": tc::data_call / tc::shards_call(op, req);
//   api "emit": emit_event(op, req).
// then ends as "end" says: "ok" (the default) returns {"results": [...]},
// one {"code": <status code>, "reply": <reply object or null>,
// "error": <last_error code or "">} per op; "error" fails the run
// ("refused on purpose"); "trap" traps; "spin" loops until the host stops
// it (fuel or the watchdog).
// Invoke "caller" returns {"user": callerUserId, "shard": callerShardId}.
// The event export inserts a "Seen" row {"event": <name>, "input": <the
// whole event input JSON text>} with id "seen-<NNNNNN>" (the count of Seen
// rows before it, so ids sort in delivery order; errors ignored) and logs
// "event <name>";
// an event whose payload has "fail": true fails after the insert.
// tick inserts a "Ticked" row {"dtMs": dt_ms} (errors ignored); init does
// nothing.
#include <tessera/compute.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace tc = tessera::compute;

struct Op {
  std::string api;
  std::string op;
  std::string req = "{}";
};
TESSERA_FIELDS(Op, api, op, req);

struct Script {
  std::vector<Op> ops;
  std::string end = "ok";
};
TESSERA_FIELDS(Script, ops, end);

struct Caller {
  std::string user;
  std::string shard;
};
TESSERA_FIELDS(Caller, user, shard);

struct FailFlag {
  bool fail = false;
};
TESSERA_FIELDS(FailFlag, fail);

std::string Quoted(const std::string& text) { return tc::to_json(text); }

volatile std::uint64_t sink = 0;

tessera::Status Init() { return {}; }

tessera::Status Tick(std::uint32_t dt_ms) {
  (void)tc::data_call("insert", "{\"type\":\"Ticked\",\"fields\":{\"dtMs\":" +
                                    std::to_string(dt_ms) + "}}");
  return {};
}

tessera::Result<std::string> Run(const tc::Invocation& call) {
  tessera::Result<Script> script = call.params<Script>();
  if (!script.ok()) return tessera::Error(script.error());
  std::string out = "{\"results\":[";
  bool first = true;
  for (const Op& op : script->ops) {
    tc::Reply r;
    if (op.api == "data") {
      r = tc::data_call(op.op, op.req);
    } else if (op.api == "shards") {
      r = tc::shards_call(op.op, op.req);
    } else {
      r.status = tc::emit_event(op.op, op.req);
    }
    if (!first) out += ",";
    first = false;
    out += "{\"code\":" + std::to_string(r.status.code()) + ",\"reply\":" +
           (r.ok() && !r.json.empty() ? r.json : std::string("null")) +
           ",\"error\":" + Quoted(r.ok() ? "" : r.status.error_code()) + "}";
  }
  out += "]}";
  if (script->end == "error") return tessera::Error("refused on purpose");
  if (script->end == "trap") __builtin_trap();
  if (script->end == "spin") {
    for (;;) sink = sink + 1;
  }
  return out;
}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "run") return Run(call);
  if (call.export_name == "caller") {
    return tc::to_json(Caller{call.caller_user_id, call.caller_shard_id});
  }
  return tessera::Error("no export " + call.export_name);
}

struct Count {
  std::int64_t count = 0;
};
TESSERA_FIELDS(Count, count);

tessera::Status OnEvent(const tc::Event& e) {
  tc::log_info("event " + e.name);
  std::int64_t n = 0;
  tc::Reply counted = tc::data_call("count", "{\"type\":\"Seen\"}");
  if (counted.ok()) {
    tessera::Result<Count> c = counted.decode<Count>();
    if (c.ok()) n = c->count;
  }
  std::string id = std::to_string(n);
  id.insert(0, 6 - std::min<std::size_t>(6, id.size()), '0');
  (void)tc::data_call("insert",
                      "{\"type\":\"Seen\",\"id\":\"seen-" + id +
                          "\",\"fields\":{\"event\":" + Quoted(e.name) +
                          ",\"input\":" + Quoted(std::string(e.input)) + "}}");
  tessera::Result<FailFlag> flag = e.payload<FailFlag>();
  if (flag.ok() && flag->fail) return tessera::Error("event refused: fail");
  return {};
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke, OnEvent);
