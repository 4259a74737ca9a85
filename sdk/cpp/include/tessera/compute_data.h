// tessera/compute_data.h: the app's data and shards from a compute module
// (the tessera_compute_v1 imports data / shards / reply; ops and JSON
// shapes in include/tessera/compute_abi.h, docs/compute-abi.md "The app's
// data" and "Shards"). Included by tessera/compute.h; do not include it on
// its own.
//
//   namespace tc = tessera::compute;
//   tc::Reply r = tc::data::insert("Item", R"({"owner":"p1","kind":"sword"})");
//   if (!r.ok()) return r.status.status();   // "UNIQUE_VIOLATION: ..."
//   // r.json == {"row":{"id":"...","createdAt":...,"owner":"p1",...}}
//
// Transactions: every entry call (init / tick / event / invoke) of a module
// that uses data runs inside one transaction the host opens for it. All the
// call's data operations commit together when the entry succeeds; a failed
// Status / Result, a trap, running out of fuel or the watchdog roll back
// every one of them. shards::send and shards::publish take effect only
// after that commit (nothing happens on a failed run).
//
// Requests: the functions build the request JSON with tessera::json::Writer
// (strings escaped). The *_json arguments are JSON texts placed in the
// request as they are, after a check: one complete JSON value (an object
// where the ABI wants one: where, fields, set, claims). A malformed one is
// refused here, before the host sees it: status code kErrData / kErrShards,
// error_code() "BAD_REQUEST", the message names the argument.
//
// Errors: a refused operation's Reply has !ok(), status.code() the
// negative compute_abi::ErrorCode (kErrData, kErrShards, kErrDataOps,
// kErrTooLarge, kErrUnavailable), status.error_code() last_error's code
// ("ROW_NOT_FOUND", "UNIQUE_VIOLATION", "SHARD_NOT_FOUND", "data_ops", ...)
// and status.message() the host's reason. Expected failures are values:
// nothing here traps or throws.
//
// Threading: as tessera/compute.h (one entry call at a time). wasm32 only.
#ifndef TESSERA_COMPUTE_DATA_H_
#define TESSERA_COMPUTE_DATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "tessera/compute.h"
#include "tessera/decode.h"
#include "tessera/json_reader.h"
#include "tessera/json_writer.h"

namespace tessera::compute {

// The outcome of one data or shards operation. ok(): `json` is the reply
// object of compute_abi.h for the op (get: {"row": row|null}, insert:
// {"row": row}, list: {"rows": [...], "nextCursor": "..."}, shards::get:
// {"shard": shard|null}, send: {}, ...) and status.count() its byte size.
// Otherwise `json` is empty and `status` says why (see the file comment).
struct Reply {
  HostStatus status;
  std::string json;

  bool ok() const { return status.ok(); }

  // Decodes `json` into `T` (a TESSERA_FIELDS struct: unknown keys are
  // skipped, missing ones keep their defaults), e.g.
  //   struct RowId { std::string id; };        TESSERA_FIELDS(RowId, id);
  //   struct Inserted { RowId row; };          TESSERA_FIELDS(Inserted, row);
  //   Result<Inserted> v = reply.decode<Inserted>();
  // A failed reply gives its status as the error ("CODE: message").
  template <class T>
  Result<T> decode() const {
    if (!ok()) return status.status();
    T out{};
    json::Reader r(json);
    if (!::tessera::decode_value(r, out) || !r.finish()) {
      return Error("reply: " + r.error());
    }
    return out;
  }
};

namespace detail {

using HostOp = std::int32_t (*)(const char*, std::int32_t, const char*,
                                std::int32_t);

// Builds one request object with json::Writer. A *_json argument that is
// not one JSON value (or not an object where one is needed) marks the
// request bad; the first such error wins.
class Request {
 public:
  Request() : w_(out_) { w_.begin_object(0); }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  Request& str(std::string_view key, std::string_view value) {
    w_.key(key);
    w_.string(value);
    return *this;
  }
  Request& integer(std::string_view key, std::int64_t value) {
    w_.key(key);
    w_.int64(value);
    return *this;
  }
  // `text` is one JSON value (an object when `object`), written as it is.
  Request& raw(std::string_view key, std::string_view text, bool object) {
    json::Reader r(text);
    if (object && r.peek() != ::tessera::Kind::kObject) {
      return bad(key, "expected a JSON object");
    }
    if (!r.skip() || !r.finish()) return bad(key, r.error());
    // Written as a string first so the writer places the comma, then the
    // placeholder "" is replaced by the value.
    w_.key(key);
    w_.string("");
    out_.resize(out_.size() - 2);
    out_.append(text);
    return *this;
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // The finished request text (call once).
  const std::string& finish() {
    w_.end_object();
    return out_;
  }

 private:
  Request& bad(std::string_view key, std::string_view why) {
    if (error_.empty()) {
      error_ = std::string(key) + "_json: " + std::string(why);
    }
    return *this;
  }

  std::string out_;
  json::Writer w_;
  std::string error_;
};

// Sends request `text` for `op` through the host function `fn` and reads
// its reply.
inline Reply send_request(HostOp fn, std::string_view op,
                          std::string_view text) {
  const std::int32_t size = fn(op.data(), len32(op), text.data(), len32(text));
  if (size < 0) return Reply{host_failure(size), {}};
  std::string reply(static_cast<std::size_t>(size), '\0');
  if (size > 0) {
    const std::int32_t got = tessera_compute_v1_reply(reply.data(), size);
    if (got < 0) return Reply{host_failure(got), {}};
    if (got < size) reply.resize(static_cast<std::size_t>(got));
  }
  return Reply{HostStatus::Ok(static_cast<std::int32_t>(reply.size())),
               std::move(reply)};
}

inline Reply bad_request(std::int32_t refused_code, std::string message) {
  return Reply{
      HostStatus::Failed(refused_code, "BAD_REQUEST", std::move(message)), {}};
}

// A built request (the SDK's functions).
inline Reply host_op(HostOp fn, std::int32_t refused_code, std::string_view op,
                     Request& request) {
  if (!request.ok()) return bad_request(refused_code, request.error());
  return send_request(fn, op, request.finish());
}

// A request whose text is already complete JSON (data_call / shards_call):
// checked to be one JSON object first.
inline Reply host_op_text(HostOp fn, std::int32_t refused_code,
                          std::string_view op, std::string_view request_json) {
  json::Reader r(request_json);
  if (r.peek() != ::tessera::Kind::kObject) {
    return bad_request(refused_code, "request_json: expected a JSON object");
  }
  if (!r.skip() || !r.finish()) {
    return bad_request(refused_code, "request_json: " + r.error());
  }
  return send_request(fn, op, request_json);
}

inline Reply data_op(std::string_view op, Request& request) {
  return host_op(&tessera_compute_v1_data, abi::kErrData, op, request);
}
inline Reply shards_op(std::string_view op, Request& request) {
  return host_op(&tessera_compute_v1_shards, abi::kErrShards, op, request);
}

}  // namespace detail

// One data operation with a request you built yourself: `op` is one of
// compute_abi::kDataOp*, `request_json` its JSON object (checked to be one
// object, then sent as it is).
inline Reply data_call(std::string_view op, std::string_view request_json) {
  return detail::host_op_text(&tessera_compute_v1_data, abi::kErrData, op,
                              request_json);
}

// One shards operation with a request you built yourself (ops:
// compute_abi::kShardsOp*).
inline Reply shards_call(std::string_view op, std::string_view request_json) {
  return detail::host_op_text(&tessera_compute_v1_shards, abi::kErrShards, op,
                              request_json);
}

// The app's data: the entity types of tessera.json's "data". A row is
// {"id", "createdAt", "updatedAt", "version", ...fields}. Errors (last
// error codes): UNKNOWN_TYPE, UNKNOWN_FIELD, BAD_VALUE, BAD_FILTER,
// NO_INDEX, ROW_NOT_FOUND, ROW_EXISTS, UNIQUE_VIOLATION, UNAVAILABLE, and
// data_ops over the call's cap (the policy's maxDbOpsPerTick).
namespace data {

// Row `id` of `type`: {"row": row}, or {"row": null} when there is none.
inline Reply get(std::string_view type, std::string_view id) {
  detail::Request req;
  req.str("type", type).str("id", id);
  return detail::data_op(abi::kDataOpGet, req);
}

// The row of `type` whose indexed `field` equals `value_json` (a JSON
// value, e.g. R"("alice")" or "42"): {"row": row|null}. NO_INDEX when the
// field has no index.
inline Reply lookup(std::string_view type, std::string_view field,
                    std::string_view value_json) {
  detail::Request req;
  req.str("type", type).str("field", field).raw("value", value_json, false);
  return detail::data_op(abi::kDataOpLookup, req);
}

// Up to `limit` rows of `type` matching the filter `where_json` (a JSON
// object, docs/data.md "Filters"; "{}" matches every row), from `cursor`
// (a previous reply's "nextCursor"; "" = the start): {"rows": [...],
// "nextCursor": "..."} ("" when there are no more).
inline Reply list(std::string_view type, std::string_view where_json = "{}",
                  std::string_view cursor = "", std::int64_t limit = 100) {
  detail::Request req;
  req.str("type", type).raw("where", where_json, true);
  if (!cursor.empty()) req.str("cursor", cursor);
  req.integer("limit", limit);
  return detail::data_op(abi::kDataOpList, req);
}

// How many rows of `type` match `where_json`: {"count": n}.
inline Reply count(std::string_view type, std::string_view where_json = "{}") {
  detail::Request req;
  req.str("type", type).raw("where", where_json, true);
  return detail::data_op(abi::kDataOpCount, req);
}

// A new row of `type` with the fields of `fields_json` (a JSON object;
// missing fields take their defaults): {"row": row}. `id` "" lets the
// host pick one; a taken id is ROW_EXISTS.
inline Reply insert(std::string_view type, std::string_view fields_json,
                    std::string_view id = "") {
  detail::Request req;
  req.str("type", type);
  if (!id.empty()) req.str("id", id);
  req.raw("fields", fields_json, true);
  return detail::data_op(abi::kDataOpInsert, req);
}

// Sets the fields of `set_json` (a JSON object) on row `id` of `type`:
// {"row": row} as it is after the update. ROW_NOT_FOUND when there is no
// such row.
inline Reply update(std::string_view type, std::string_view id,
                    std::string_view set_json) {
  detail::Request req;
  req.str("type", type).str("id", id).raw("set", set_json, true);
  return detail::data_op(abi::kDataOpUpdate, req);
}

// Deletes row `id` of `type` (the ABI's "delete" op): {"deleted": true},
// or {"deleted": false} when there was no such row.
inline Reply remove(std::string_view type, std::string_view id) {
  detail::Request req;
  req.str("type", type).str("id", id);
  return detail::data_op(abi::kDataOpDelete, req);
}

}  // namespace data

// The app's shards. A shard is {"id", "kind", "status", "tick",
// "subscribers", "machine", "stopReason"?, "error"?}. Errors (last error
// codes): SHARD_NOT_FOUND, SHARD_EXISTS, SHARD_KIND_UNKNOWN,
// SHARD_BAD_PARAMS, SHARD_MACHINE_UNKNOWN, SHARD_LIMIT,
// SHARD_TRANSFER_REFUSED, SHARD_TRANSFER_BUSY, SHARD_TRANSFER_UNSUPPORTED,
// SHARD_TRANSFER_NO_PLAYER, SHARD_TRANSFER_FAILED, BAD_REQUEST,
// UNAVAILABLE.
namespace shards {

// Starts shard `id` of `kind` with `params_json` (any JSON value, given to
// the kind's init; "null" = none) on `machine` ("" = the host picks):
// the shard object. SHARD_EXISTS when `id` runs already.
inline Reply create(std::string_view kind, std::string_view id,
                    std::string_view params_json = "null",
                    std::string_view machine = "") {
  detail::Request req;
  req.str("kind", kind).str("id", id);
  if (params_json != "null") req.raw("params", params_json, false);
  if (!machine.empty()) req.str("machine", machine);
  return detail::shards_op(abi::kShardsOpCreate, req);
}

// Shard `id`: {"shard": shard}, or {"shard": null} when there is none.
inline Reply get(std::string_view id) {
  detail::Request req;
  req.str("id", id);
  return detail::shards_op(abi::kShardsOpGet, req);
}

// The running shards, of `kind` only unless it is "": {"shards": [...]}.
inline Reply list(std::string_view kind = "") {
  detail::Request req;
  if (!kind.empty()) req.str("kind", kind);
  return detail::shards_op(abi::kShardsOpList, req);
}

// A join ticket for `subscriber` to shard `id`, carrying `claims_json` (a
// JSON object the shard sees on join), valid `ttl_secs`: {"ticket": "..."}.
inline Reply ticket(std::string_view id, std::string_view subscriber,
                    std::string_view claims_json = "{}",
                    std::int64_t ttl_secs = 600) {
  detail::Request req;
  req.str("id", id).str("subscriber", subscriber);
  req.raw("claims", claims_json, true).integer("ttlSecs", ttl_secs);
  return detail::shards_op(abi::kShardsOpTicket, req);
}

// Sends `input_json` (any JSON value, converted to the kind's codec) to
// shard `id` as an input with an empty subscriber id (no connection can
// have one, so the shard can trust it): {}. Delivered after the entry
// call's transaction commits.
inline Reply send(std::string_view id, std::string_view input_json) {
  detail::Request req;
  req.str("id", id).raw("input", input_json, false);
  return detail::shards_op(abi::kShardsOpSend, req);
}

// Publishes message `topic` with `data` (text) to `target`: "shard:<id>",
// "group:<name>" or "all"; the shards get it in on_messages with from "".
// After the transaction commits: {}.
inline Reply publish(std::string_view target, std::string_view topic,
                     std::string_view data) {
  detail::Request req;
  req.str("target", target).str("topic", topic).str("data", data);
  return detail::shards_op(abi::kShardsOpPublish, req);
}

// Moves player `subscriber` from shard `from` to shard `to`, with
// `claims_json` (a JSON object) for the target's transfer_in: {}.
inline Reply transfer(std::string_view from, std::string_view subscriber,
                      std::string_view to,
                      std::string_view claims_json = "{}") {
  detail::Request req;
  req.str("from", from).str("subscriber", subscriber).str("to", to);
  req.raw("claims", claims_json, true);
  return detail::shards_op(abi::kShardsOpTransfer, req);
}

// Stops shard `id`: {}.
inline Reply stop(std::string_view id) {
  detail::Request req;
  req.str("id", id);
  return detail::shards_op(abi::kShardsOpStop, req);
}

}  // namespace shards

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_DATA_H_
