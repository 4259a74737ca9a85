// The `data` and `shards` host calls of a run (include/tessera/compute_abi.h
// kDataOp* / kShardsOp*, docs/compute-abi.md "The app's data" and
// "Shards"): the request JSON checked and turned into DataTxn / ShardsPort
// calls, the reply JSON built (rows in RowJson's shape), errors as
// HostCallResult codes with the structured code of the store's or the
// port's message ("ROW_NOT_FOUND: ...", "SHARD_NOT_FOUND: ...").
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "compute/engine_internal.h"
#include "data/schema.h"
#include "tessera/compute_abi.h"

namespace tessera::compute::engine_internal {
namespace {

namespace abi = compute_abi;
using nlohmann::json;

constexpr char kBadRequest[] = "BAD_REQUEST";
// How deep a request's arrays and objects may nest (the JSON writer and
// the store's checks recurse over them).
constexpr int kMaxRequestDepth = 64;

// Whether `v` nests at most `depth` levels (recursion bounded by depth).
bool DepthAtMost(const json& v, int depth) {
  if (!v.is_structured()) return true;
  if (depth == 0) return false;
  for (const json& child : v) {
    if (!DepthAtMost(child, depth - 1)) return false;
  }
  return true;
}

std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

HostCallResult Refused(int32_t code, std::string_view code_name,
                       std::string message) {
  HostCallResult r = HostCallResult::Error(code, std::move(message));
  r.code_name = std::string(code_name);
  return r;
}

// A failed store or port call: the message's "<CODE>: " when it has one,
// else UNAVAILABLE for I/O and busy stores, BAD_REQUEST otherwise.
HostCallResult FromStatus(int32_t code, std::string_view what,
                          const Status& status) {
  std::string name(data::ErrorCodeOf(status.message()));
  if (name.empty()) {
    name = status.code() == StatusCode::kIo ||
                   status.code() == StatusCode::kUnavailable
               ? data::codes::kUnavailable
               : kBadRequest;
  }
  return Refused(code, name, std::string(what) + ": " + status.message());
}

HostCallResult Reply(const json& j, std::string* reply) {
  *reply = Dump(j);
  return HostCallResult::Ok(static_cast<int32_t>(
      std::min<size_t>(reply->size(), abi::kMaxReplyBytes + 1)));
}

// The request object, or an error naming what is wrong.
class Request {
 public:
  Request(std::string_view api, std::string_view op, std::string_view text)
      : what_(std::string(api) + " " + std::string(op)) {
    value_ = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value_.is_discarded() || !value_.is_object()) {
      error_ = what_ + ": the request must be a JSON object";
    } else if (!DepthAtMost(value_, kMaxRequestDepth)) {
      error_ = what_ + ": the request nests deeper than " +
               std::to_string(kMaxRequestDepth) + " levels";
    }
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& what() const { return what_; }

  // A required (or optional) string member.
  std::string String(const char* key, bool required = true) {
    auto it = value_.find(key);
    if (it == value_.end() || it->is_null()) {
      if (required) Fail(std::string("\"") + key + "\" is missing");
      return "";
    }
    if (!it->is_string()) {
      Fail(std::string("\"") + key + "\" must be a string");
      return "";
    }
    return it->get<std::string>();
  }
  // Any JSON member as compact text ("" when absent).
  std::string Any(const char* key, bool required) {
    auto it = value_.find(key);
    if (it == value_.end()) {
      if (required) Fail(std::string("\"") + key + "\" is missing");
      return "";
    }
    return Dump(*it);
  }
  // An object member as compact text (`fallback` when absent or null).
  std::string Object(const char* key, bool required, const char* fallback) {
    auto it = value_.find(key);
    if (it == value_.end() || it->is_null()) {
      if (required) Fail(std::string("\"") + key + "\" is missing");
      return fallback;
    }
    if (!it->is_object()) {
      Fail(std::string("\"") + key + "\" must be an object");
      return fallback;
    }
    return Dump(*it);
  }
  int64_t Int(const char* key, int64_t fallback) {
    auto it = value_.find(key);
    if (it == value_.end() || it->is_null()) return fallback;
    if (!it->is_number_integer()) {
      Fail(std::string("\"") + key + "\" must be an integer");
      return fallback;
    }
    return it->get<int64_t>();
  }
  void Fail(std::string why) {
    if (error_.empty()) error_ = what_ + ": " + why;
  }

 private:
  std::string what_;
  json value_;
  std::string error_;
};

HostCallResult BadRequest(int32_t code, const Request& req) {
  return Refused(code, kBadRequest, req.error());
}

json RowValue(const data::EntityType& type, const data::Row& row) {
  return json::parse(data::RowJson(type, row), nullptr, false);
}

}  // namespace

HostCallResult DataOp(data::DataTxn& txn, const data::DataSchema& schema,
                      std::string_view op, std::string_view request,
                      const std::string& origin, std::string* reply,
                      int* kind) {
  constexpr int32_t kErr = abi::kErrData;
  *kind = 0;
  const bool read = op == abi::kDataOpGet || op == abi::kDataOpLookup ||
                    op == abi::kDataOpList || op == abi::kDataOpCount;
  const bool write = op == abi::kDataOpInsert || op == abi::kDataOpUpdate ||
                     op == abi::kDataOpDelete;
  if (!read && !write) {
    return HostCallResult::Error(
        abi::kErrInvalid,
        "data: unknown op \"" + std::string(op) +
            "\" (get, lookup, list, count, insert, update or delete)");
  }
  Request req("data", op, request);
  if (!req.ok()) return BadRequest(kErr, req);
  const std::string type_name = req.String("type");
  if (!req.ok()) return BadRequest(kErr, req);
  const data::EntityType* type = schema.Find(type_name);
  if (type == nullptr) {
    return Refused(kErr, data::codes::kUnknownType,
                   req.what() + ": " + data::codes::kUnknownType +
                       ": the app's data has no entity type \"" + type_name +
                       "\"");
  }

  if (op == abi::kDataOpGet || op == abi::kDataOpDelete) {
    const std::string id = req.String("id");
    if (!req.ok()) return BadRequest(kErr, req);
    *kind = read ? 1 : 2;
    if (op == abi::kDataOpGet) {
      Result<std::optional<data::Row>> row = txn.Get(type_name, id);
      if (!row.ok()) return FromStatus(kErr, req.what(), row.status());
      return Reply({{"row", *row ? RowValue(*type, **row) : json(nullptr)}},
                   reply);
    }
    Result<bool> deleted = txn.Delete(type_name, id, origin);
    if (!deleted.ok()) return FromStatus(kErr, req.what(), deleted.status());
    return Reply({{"deleted", *deleted}}, reply);
  }
  if (op == abi::kDataOpLookup) {
    const std::string field = req.String("field");
    const std::string value = req.Any("value", true);
    if (!req.ok()) return BadRequest(kErr, req);
    *kind = 1;
    Result<std::optional<data::Row>> row = txn.Lookup(type_name, field, value);
    if (!row.ok()) return FromStatus(kErr, req.what(), row.status());
    return Reply({{"row", *row ? RowValue(*type, **row) : json(nullptr)}},
                 reply);
  }
  if (op == abi::kDataOpList || op == abi::kDataOpCount) {
    const std::string where = req.Object("where", false, "{}");
    const std::string cursor =
        op == abi::kDataOpList ? req.String("cursor", false) : "";
    const int64_t limit = req.Int("limit", data::kDefaultPageLimit);
    if (!req.ok()) return BadRequest(kErr, req);
    Result<data::Filter> filter = data::ParseFilter(*type, where);
    if (!filter.ok()) return FromStatus(kErr, req.what(), filter.status());
    *kind = 1;
    if (op == abi::kDataOpCount) {
      Result<int64_t> n = txn.Count(type_name, *filter);
      if (!n.ok()) return FromStatus(kErr, req.what(), n.status());
      return Reply({{"count", *n}}, reply);
    }
    Result<data::Page> page = txn.List(type_name, *filter, cursor, limit);
    if (!page.ok()) return FromStatus(kErr, req.what(), page.status());
    json rows = json::array();
    for (const data::Row& row : page->rows) {
      rows.push_back(RowValue(*type, row));
    }
    return Reply({{"rows", std::move(rows)}, {"nextCursor", page->next_cursor}},
                 reply);
  }
  if (op == abi::kDataOpInsert) {
    const std::string id = req.String("id", false);
    const std::string fields = req.Object("fields", false, "{}");
    if (!req.ok()) return BadRequest(kErr, req);
    *kind = 2;
    Result<data::Row> row = txn.Insert(type_name, id, fields, origin);
    if (!row.ok()) return FromStatus(kErr, req.what(), row.status());
    return Reply({{"row", RowValue(*type, *row)}}, reply);
  }
  // update
  const std::string id = req.String("id");
  const std::string set = req.Object("set", true, "{}");
  if (!req.ok()) return BadRequest(kErr, req);
  *kind = 2;
  Result<data::Row> row = txn.Update(type_name, id, set, origin);
  if (!row.ok()) return FromStatus(kErr, req.what(), row.status());
  return Reply({{"row", RowValue(*type, *row)}}, reply);
}

namespace {

json ShardJson(const ShardView& v) {
  json j = {{"id", v.id},
            {"kind", v.kind},
            {"status", v.status},
            {"tick", v.tick},
            {"subscribers", v.subscribers},
            {"machine", v.machine}};
  if (!v.stop_reason.empty()) j["stopReason"] = v.stop_reason;
  if (!v.error.empty()) j["error"] = v.error;
  return j;
}

}  // namespace

HostCallResult ShardsOp(ShardsPort& port, std::string_view op,
                        std::string_view request, std::string* reply,
                        Deferred::Effects* deferred, int64_t module_id,
                        const std::string& module, const std::string& flow_id) {
  constexpr int32_t kErr = abi::kErrShards;
  const std::string_view known[] = {
      abi::kShardsOpCreate,   abi::kShardsOpGet,  abi::kShardsOpList,
      abi::kShardsOpTicket,   abi::kShardsOpSend, abi::kShardsOpPublish,
      abi::kShardsOpTransfer, abi::kShardsOpStop};
  if (std::find(std::begin(known), std::end(known), op) == std::end(known)) {
    return HostCallResult::Error(
        abi::kErrInvalid, "shards: unknown op \"" + std::string(op) +
                              "\" (create, get, list, ticket, send, publish, "
                              "transfer or stop)");
  }
  Request req("shards", op, request);
  if (!req.ok()) return BadRequest(kErr, req);
  const json empty = json::object();

  if (op == abi::kShardsOpCreate) {
    const std::string kind = req.String("kind");
    const std::string id = req.String("id");
    const std::string params = req.Any("params", false);
    const std::string machine = req.String("machine", false);
    if (!req.ok()) return BadRequest(kErr, req);
    Result<ShardView> v = port.Create(kind, id, params, machine);
    if (!v.ok()) return FromStatus(kErr, req.what(), v.status());
    return Reply(ShardJson(*v), reply);
  }
  if (op == abi::kShardsOpGet) {
    const std::string id = req.String("id");
    if (!req.ok()) return BadRequest(kErr, req);
    Result<std::optional<ShardView>> v = port.Get(id);
    if (!v.ok()) return FromStatus(kErr, req.what(), v.status());
    return Reply({{"shard", *v ? ShardJson(**v) : json(nullptr)}}, reply);
  }
  if (op == abi::kShardsOpList) {
    const std::string kind = req.String("kind", false);
    if (!req.ok()) return BadRequest(kErr, req);
    Result<std::vector<ShardView>> all = port.List(kind);
    if (!all.ok()) return FromStatus(kErr, req.what(), all.status());
    json shards = json::array();
    for (const ShardView& v : *all) shards.push_back(ShardJson(v));
    return Reply({{"shards", std::move(shards)}}, reply);
  }
  if (op == abi::kShardsOpTicket) {
    const std::string id = req.String("id");
    const std::string subscriber = req.String("subscriber");
    const std::string claims = req.Object("claims", false, "{}");
    const int64_t ttl = req.Int("ttlSecs", 600);
    if (!req.ok()) return BadRequest(kErr, req);
    Result<std::string> ticket = port.Ticket(id, subscriber, claims, ttl);
    if (!ticket.ok()) return FromStatus(kErr, req.what(), ticket.status());
    return Reply({{"ticket", *ticket}}, reply);
  }
  if (op == abi::kShardsOpSend) {
    const std::string id = req.String("id");
    const std::string input = req.Any("input", true);
    if (!req.ok()) return BadRequest(kErr, req);
    if (id.empty()) {
      req.Fail("\"id\" is empty");
      return BadRequest(kErr, req);
    }
    deferred->sends.push_back({module_id, module, id, input, flow_id});
    return Reply(empty, reply);
  }
  if (op == abi::kShardsOpPublish) {
    const std::string target = req.String("target");
    const std::string topic = req.String("topic");
    const std::string data = req.String("data");
    if (!req.ok()) return BadRequest(kErr, req);
    const bool target_ok =
        target == "all" ||
        (target.rfind("shard:", 0) == 0 && target.size() > 6) ||
        (target.rfind("group:", 0) == 0 && target.size() > 6);
    if (!target_ok) {
      req.Fail(
          "\"target\" must be \"shard:<id>\", \"group:<name>\" or \"all\"");
      return BadRequest(kErr, req);
    }
    deferred->publishes.push_back(
        {module_id, module, target, topic, data, flow_id});
    return Reply(empty, reply);
  }
  if (op == abi::kShardsOpTransfer) {
    const std::string from = req.String("from");
    const std::string subscriber = req.String("subscriber");
    const std::string to = req.String("to");
    const std::string claims = req.Object("claims", false, "{}");
    if (!req.ok()) return BadRequest(kErr, req);
    Status st = port.Transfer(from, subscriber, to, claims);
    if (!st.ok()) return FromStatus(kErr, req.what(), st);
    return Reply(empty, reply);
  }
  // stop
  const std::string id = req.String("id");
  if (!req.ok()) return BadRequest(kErr, req);
  Status st = port.Stop(id);
  if (!st.ok()) return FromStatus(kErr, req.what(), st);
  return Reply(empty, reply);
}

}  // namespace tessera::compute::engine_internal
