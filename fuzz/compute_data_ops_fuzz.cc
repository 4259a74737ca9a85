// libFuzzer target: the requests a compute module sends through the `data`
// and `shards` host calls (src/compute/engine_data.cc: DataOp, ShardsOp).
// The input is "<api>\0<op>\0<request>"; api "data" or anything else for
// shards. The transaction and the shards port below answer every call
// with a fixed row / shard (or a structured error for ids starting with
// "x"), so the fuzzer reaches every branch of request checking and reply
// building. Checks what must hold whatever the bytes: a success has a
// reply that is a JSON object and a code equal to its size; a refusal has a
// negative code and a message; a data refusal names a code; send and
// publish never reach the port (they wait for the commit).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "compute/engine_internal.h"
#include "data/schema.h"
#include "tessera/compute_abi.h"

namespace {

using namespace tessera;
using namespace tessera::compute;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::vector<std::string_view> Split(std::string_view text, size_t parts) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const size_t nul = text.find('\0');
    if (nul == std::string_view::npos) break;
    out.push_back(text.substr(0, nul));
    text.remove_prefix(nul + 1);
  }
  out.push_back(text);
  while (out.size() < parts) out.emplace_back();
  return out;
}

data::Row MakeRow(std::string_view type, std::string_view id) {
  data::Row row;
  row.type = std::string(type);
  row.id = std::string(id);
  row.version = 1;
  row.fields_json = R"({"name":"sword","qty":2})";
  return row;
}

Status Refuse(std::string_view id) {
  return data::DataError(data::codes::kRowNotFound,
                         "no row \"" + std::string(id) + "\"");
}

// Answers every call: ids starting with 'x' are refused.
class FixedTxn final : public data::DataTxn {
 public:
  Result<std::optional<data::Row>> Get(std::string_view type,
                                       std::string_view id) override {
    if (!id.empty() && id[0] == 'x') return std::optional<data::Row>();
    return std::optional<data::Row>(MakeRow(type, id));
  }
  Result<std::optional<data::Row>> Lookup(std::string_view type,
                                          std::string_view field,
                                          std::string_view) override {
    if (field != "name") {
      return data::DataError(data::codes::kNoIndex, "no index");
    }
    return std::optional<data::Row>(MakeRow(type, "a"));
  }
  Result<data::Page> List(std::string_view type, const data::Filter&,
                          std::string_view cursor, int64_t limit) override {
    if (limit < 1 || limit > data::kMaxPageLimit) {
      return data::DataError(data::codes::kBadFilter, "limit");
    }
    data::Page page;
    page.rows.push_back(MakeRow(type, "a"));
    page.next_cursor = std::string(cursor);
    return page;
  }
  Result<int64_t> Count(std::string_view, const data::Filter&) override {
    return 1;
  }
  Result<data::Row> Insert(std::string_view type, std::string_view id,
                           std::string_view, std::string_view) override {
    if (!id.empty() && id[0] == 'x') return Refuse(id);
    return MakeRow(type, id.empty() ? "new" : id);
  }
  Result<data::Row> Update(std::string_view type, std::string_view id,
                           std::string_view, std::string_view) override {
    if (!id.empty() && id[0] == 'x') return Refuse(id);
    return MakeRow(type, id);
  }
  Result<bool> Delete(std::string_view, std::string_view id,
                      std::string_view) override {
    return id.empty() || id[0] != 'x';
  }
  Result<std::optional<data::StoredCall>> GetCall(std::string_view) override {
    return std::optional<data::StoredCall>();
  }
  Status PutCall(const data::StoredCall&) override { return Status::Ok(); }
  Status Savepoint() override { return Status::Ok(); }
  Status Release() override { return Status::Ok(); }
  Status RollbackTo() override { return Status::Ok(); }
  const std::vector<data::ChangeEvent>& changes() const override {
    return changes_;
  }
  Result<std::vector<data::ChangeEvent>> Commit() override { return changes_; }
  int64_t reads() const override { return 0; }
  int64_t writes() const override { return 0; }

 private:
  std::vector<data::ChangeEvent> changes_;
};

class FixedShards final : public ShardsPort {
 public:
  Result<ShardView> Create(std::string_view kind, std::string_view id,
                           std::string_view, std::string_view) override {
    if (!id.empty() && id[0] == 'x') {
      return Status(StatusCode::kAlreadyExists, "SHARD_EXISTS: taken");
    }
    ShardView v;
    v.id = std::string(id);
    v.kind = std::string(kind);
    v.status = "running";
    return v;
  }
  Result<std::optional<ShardView>> Get(std::string_view) override {
    return std::optional<ShardView>();
  }
  Result<std::vector<ShardView>> List(std::string_view) override {
    return std::vector<ShardView>{};
  }
  Result<std::string> Ticket(std::string_view, std::string_view,
                             std::string_view, int64_t) override {
    return std::string("t");
  }
  Status Send(std::string_view, std::string_view) override {
    std::abort();  // only after a commit, never from ShardsOp
  }
  Status Publish(std::string_view, std::string_view,
                 std::string_view) override {
    std::abort();
  }
  Status Transfer(std::string_view, std::string_view, std::string_view,
                  std::string_view) override {
    return Status(StatusCode::kFailedPrecondition,
                  "SHARD_TRANSFER_REFUSED: no");
  }
  Status Stop(std::string_view) override { return Status::Ok(); }
};

const data::DataSchema& Schema() {
  static const auto* schema = [] {
    Result<data::DataSchema> s = data::ParseDataSchema(
        R"({"types": [{"name": "Item", "fields": [
              {"name": "name", "type": "string"},
              {"name": "qty", "type": "int"}],
            "indexes": [{"field": "name"}]}]})",
        "fuzz");
    if (!s.ok()) std::abort();
    return new data::DataSchema(*s);
  }();
  return *schema;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(bytes), size);
  std::vector<std::string_view> parts = Split(input, 3);
  FixedTxn txn;
  FixedShards port;
  Deferred::Effects deferred;
  std::string reply;
  HostCallResult r;
  const bool data = parts[0] == "data";
  if (data) {
    int kind = -1;
    r = engine_internal::DataOp(txn, Schema(), parts[1], parts[2],
                                "module:fuzz", &reply, &kind);
    Check(kind >= 0 && kind <= 2);
  } else {
    r = engine_internal::ShardsOp(port, parts[1], parts[2], &reply, &deferred,
                                  1, "fuzz", "f-1");
  }
  if (r.code >= 0) {
    nlohmann::json j = nlohmann::json::parse(reply, nullptr, false);
    Check(!j.is_discarded() && j.is_object());
    Check(static_cast<size_t>(r.code) == reply.size());
  } else {
    Check(!r.message.empty());
    if (r.code == compute_abi::kErrData || r.code == compute_abi::kErrShards) {
      Check(!r.code_name.empty());
    }
  }
  return 0;
}
