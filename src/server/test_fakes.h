// Test doubles for the server tests: an in-memory store::Store with fault
// injection (saved states and the transfer journal are a
// shard::MemoryStateStore's) and a Connections that records what it was
// asked to close.
// Thread-safe like the real ones.
#ifndef TESSERA_SERVER_TEST_FAKES_H_
#define TESSERA_SERVER_TEST_FAKES_H_

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/connections.h"
#include "shard/state_store.h"
#include "store/store.h"

namespace tessera::server::testing {

class MemoryStore final : public store::Store {
 public:
  Status PutShard(const store::ShardRecord& record) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_writes_) return IoError("disk full (injected)");
    store::ShardRecord r = record;
    if (r.created_unix_ms == 0) r.created_unix_ms = ++clock_;
    records_[r.id] = r;
    return Status::Ok();
  }
  Status SetShardStatus(std::string_view id, std::string_view status,
                        std::string_view error) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = records_.find(std::string(id));
    if (it == records_.end()) return NotFound("no record");
    it->second.status = std::string(status);
    it->second.error = std::string(error);
    return Status::Ok();
  }
  Status DeleteShard(std::string_view id) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_writes_) return IoError("disk full (injected)");
    records_.erase(std::string(id));
    return states_.Forget(id);
  }
  Result<std::vector<store::ShardRecord>> ListShards() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<store::ShardRecord> out;
    for (const auto& [id, r] : records_) out.push_back(r);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.created_unix_ms < b.created_unix_ms;
    });
    return out;
  }
  Status Save(std::string_view id, std::string_view bytes) override {
    return states_.Save(id, bytes);
  }
  Result<std::optional<std::string>> Load(std::string_view id) override {
    return states_.Load(id);
  }
  Status Forget(std::string_view id) override { return states_.Forget(id); }
  Status BeginTransfers(std::span<const shard::TransferRecord> records,
                        std::string_view source_shard,
                        std::optional<std::string_view> source_state) override {
    if (fail_writes()) return IoError("disk full (injected)");
    return states_.BeginTransfers(records, source_shard, source_state);
  }
  Status AdvanceTransfers(std::span<const shard::TransferAdvance> steps,
                          std::string_view shard_id,
                          std::optional<std::string_view> state) override {
    if (fail_writes()) return IoError("disk full (injected)");
    return states_.AdvanceTransfers(steps, shard_id, state);
  }
  Result<std::vector<shard::TransferRecord>> ListTransfers() override {
    return states_.ListTransfers();
  }
  Status DeleteTransfers(std::span<const std::string> ids) override {
    if (fail_writes()) return IoError("disk full (injected)");
    return states_.DeleteTransfers(ids);
  }

  std::optional<store::ShardRecord> Record(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = records_.find(id);
    if (it == records_.end()) return std::nullopt;
    return it->second;
  }
  bool HasState(const std::string& id) {
    Result<std::optional<std::string>> state = states_.Load(id);
    return state.ok() && state->has_value();
  }
  void set_fail_writes(bool fail) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_writes_ = fail;
  }

 private:
  bool fail_writes() {
    std::lock_guard<std::mutex> lock(mu_);
    return fail_writes_;
  }

  std::mutex mu_;
  std::map<std::string, store::ShardRecord> records_;
  shard::MemoryStateStore states_;
  int64_t clock_ = 0;
  bool fail_writes_ = false;
};

class FakeConnections final : public net::Connections {
 public:
  struct Close {
    std::string shard, subscriber;  // subscriber empty for CloseShard
    int code;
    std::string reason;
  };

  size_t CloseSubscriber(std::string_view shard_id, std::string_view subscriber,
                         int code, std::string_view reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    closes_.push_back(Close{std::string(shard_id), std::string(subscriber),
                            code, std::string(reason)});
    auto& subs = subscribers_[std::string(shard_id)];
    const size_t n = static_cast<size_t>(
        std::count(subs.begin(), subs.end(), std::string(subscriber)));
    std::erase(subs, std::string(subscriber));
    return n;
  }
  size_t CloseShard(std::string_view shard_id, int code,
                    std::string_view reason) override {
    std::lock_guard<std::mutex> lock(mu_);
    closes_.push_back(
        Close{std::string(shard_id), "", code, std::string(reason)});
    const size_t n = subscribers_[std::string(shard_id)].size();
    subscribers_.erase(std::string(shard_id));
    return n;
  }
  std::vector<std::string> Subscribers(
      std::string_view shard_id) const override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = subscribers_.find(std::string(shard_id));
    if (it == subscribers_.end()) return {};
    std::vector<std::string> out = it->second;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  size_t ConnectionCount() const override {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [shard, subs] : subscribers_) n += subs.size();
    return n;
  }

  // One connection of `subscriber` on `shard`.
  void Connect(const std::string& shard, const std::string& subscriber) {
    std::lock_guard<std::mutex> lock(mu_);
    subscribers_[shard].push_back(subscriber);
  }
  std::vector<Close> closes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closes_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::string>> subscribers_;
  std::vector<Close> closes_;
};

}  // namespace tessera::server::testing

#endif  // TESSERA_SERVER_TEST_FAKES_H_
