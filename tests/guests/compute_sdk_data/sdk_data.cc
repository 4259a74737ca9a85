// Test compute module: every data and shards function of the C++ compute
// SDK (tessera/compute_data.h), one invoke export each. Params name the
// function's arguments; the *_json arguments are JSON texts passed as
// strings (e.g. {"type":"Item","fields":"{\"name\":\"a\"}"}).
//
// Each op export succeeds (so the entry's transaction commits) and
// returns {"ok":true,"reply":<the reply object>} or {"ok":false,
// "code":<error_code()>,"status":<code()>,"message":...}.
//   data:   get lookup list count insert update remove raw_data
//   shards: create shard_get shard_list ticket send publish transfer stop
//           raw_shards
//   raw_data / raw_shards: params {"op", "request"}: data_call / shards_call
// Others:
//   caller          -> {"user": callerUserId, "shard": callerShardId}
//   grant           -> params {type, fields}: inserts, returns {"id": id}
//                      (decoded with Reply::decode); an error fails the run
//   insert_then_fail -> params {type, fields}: inserts, then fails the run
//                      (its insert must roll back)
//   insert_then_trap -> the same, then traps
//   insert_twice    -> params {type, fields, id}: inserts twice with one id;
//                      the second's error fails the run ("ROW_EXISTS: ...")
// init and tick do nothing.
#include <tessera/compute.h>

#include <cstdint>
#include <string>

namespace {

namespace tc = tessera::compute;

struct Params {
  std::string type;
  std::string id;
  std::string field;
  std::string value;
  std::string where = "{}";
  std::string cursor;
  std::int64_t limit = 100;
  std::string fields = "{}";
  std::string set = "{}";
  std::string kind;
  std::string params = "null";
  std::string machine;
  std::string subscriber;
  std::string claims = "{}";
  std::int64_t ttl = 600;
  std::string input = "null";
  std::string target;
  std::string topic;
  std::string data;
  std::string from;
  std::string to;
  std::string op;
  std::string request;
};
TESSERA_FIELDS(Params, type, id, field, value, where, cursor, limit, fields,
               set, kind, params, machine, subscriber, claims, ttl, input,
               target, topic, data, from, to, op, request);

struct Failure {
  bool ok = false;
  std::string code;
  std::int32_t status = 0;
  std::string message;
};
TESSERA_FIELDS(Failure, ok, code, status, message);

struct Caller {
  std::string user;
  std::string shard;
};
TESSERA_FIELDS(Caller, user, shard);

struct RowId {
  std::string id;
};
TESSERA_FIELDS(RowId, id);
struct Inserted {
  RowId row;
};
TESSERA_FIELDS(Inserted, row);

std::string Outcome(const tc::Reply& r) {
  if (r.ok()) return "{\"ok\":true,\"reply\":" + r.json + "}";
  return tc::to_json(Failure{false, r.status.error_code(), r.status.code(),
                             r.status.message()});
}

// The reply of op export `name`, or false when it is no op export.
bool RunOp(const std::string& name, const Params& p, tc::Reply& out) {
  if (name == "get") {
    out = tc::data::get(p.type, p.id);
  } else if (name == "lookup") {
    out = tc::data::lookup(p.type, p.field, p.value);
  } else if (name == "list") {
    out = tc::data::list(p.type, p.where, p.cursor, p.limit);
  } else if (name == "count") {
    out = tc::data::count(p.type, p.where);
  } else if (name == "insert") {
    out = tc::data::insert(p.type, p.fields, p.id);
  } else if (name == "update") {
    out = tc::data::update(p.type, p.id, p.set);
  } else if (name == "remove") {
    out = tc::data::remove(p.type, p.id);
  } else if (name == "raw_data") {
    out = tc::data_call(p.op, p.request);
  } else if (name == "create") {
    out = tc::shards::create(p.kind, p.id, p.params, p.machine);
  } else if (name == "shard_get") {
    out = tc::shards::get(p.id);
  } else if (name == "shard_list") {
    out = tc::shards::list(p.kind);
  } else if (name == "ticket") {
    out = tc::shards::ticket(p.id, p.subscriber, p.claims, p.ttl);
  } else if (name == "send") {
    out = tc::shards::send(p.id, p.input);
  } else if (name == "publish") {
    out = tc::shards::publish(p.target, p.topic, p.data);
  } else if (name == "transfer") {
    out = tc::shards::transfer(p.from, p.subscriber, p.to, p.claims);
  } else if (name == "stop") {
    out = tc::shards::stop(p.id);
  } else if (name == "raw_shards") {
    out = tc::shards_call(p.op, p.request);
  } else {
    return false;
  }
  return true;
}

void Init() {}
void Tick(std::uint32_t) {}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "caller") {
    return tc::to_json(Caller{call.caller_user_id, call.caller_shard_id});
  }
  tessera::Result<Params> p = call.params<Params>();
  if (!p.ok()) return tessera::Error(p.error());
  tc::Reply reply;
  if (RunOp(call.export_name, *p, reply)) return Outcome(reply);
  if (call.export_name == "grant") {
    tessera::Result<Inserted> row =
        tc::data::insert(p->type, p->fields).decode<Inserted>();
    if (!row.ok()) return tessera::Error(row.error());
    return tc::to_json(row->row);
  }
  if (call.export_name == "insert_then_fail" ||
      call.export_name == "insert_then_trap") {
    tc::Reply r = tc::data::insert(p->type, p->fields, p->id);
    if (!r.ok()) return r.status.status();
    if (call.export_name == "insert_then_trap") tc::panic("trap after insert");
    return tessera::Error("failed after insert");
  }
  if (call.export_name == "insert_twice") {
    for (int i = 0; i < 2; ++i) {
      tc::Reply r = tc::data::insert(p->type, p->fields, p->id);
      if (!r.ok()) return r.status.status();
    }
    return std::string("{}");
  }
  return tessera::Error("no export " + call.export_name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
