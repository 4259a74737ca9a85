// Test-only fixture for the host tests of shards that talk
// (talk_host_test.cc: moves; talk_messages_test.cc: messages): a manual
// ShardHost (workers = 0) with the `talk` and `counter` guests as kinds, a
// FakeClock and a FakeWallClock, a MemoryStateStore behind a journal that
// records every call, a sink keeping each shard's last snapshot and the
// OnTransfer calls, and the host's log lines and finished moves.
#ifndef TESSERA_SHARD_TALK_HOST_TEST_H_
#define TESSERA_SHARD_TALK_HOST_TEST_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "shard/shard_host.h"
#include "shard/state_store.h"
#include "shard/test_guests.h"

namespace tessera::shard::talk_testing {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using json = nlohmann::json;

inline constexpr int64_t kTickUs = 50'000;
inline constexpr int64_t kWallStartUs = 1'700'000'000'000'000;

class TalkSink final : public ShardSink {
 public:
  void OnFrame(std::string_view shard_id, uint64_t, std::string_view snapshot,
               const std::vector<InputResult>& inputs) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_[std::string(shard_id)] = std::string(snapshot);
    for (const InputResult& r : inputs) {
      results_.push_back({std::string(shard_id), r});
    }
    if (on_frame) on_frame(shard_id, snapshot);
  }
  void OnStopped(std::string_view, StopReason, std::string_view) override {}
  void OnTransfer(std::string_view from, const MovedTo& moved) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      transfers_.push_back({std::string(from), moved});
    }
    if (on_transfer) on_transfer(from, moved);
  }

  json Snapshot(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_.find(id);
    return it == last_.end() ? json() : FromMsgpack(it->second);
  }
  std::vector<std::pair<std::string, MovedTo>> transfers() {
    std::lock_guard<std::mutex> lock(mu_);
    return transfers_;
  }
  std::vector<std::pair<std::string, InputResult>> results() {
    std::lock_guard<std::mutex> lock(mu_);
    return results_;
  }

  std::function<void(std::string_view, const MovedTo&)> on_transfer;
  std::function<void(std::string_view, std::string_view)> on_frame;

 private:
  std::mutex mu_;
  std::map<std::string, std::string> last_;
  std::vector<std::pair<std::string, InputResult>> results_;
  std::vector<std::pair<std::string, MovedTo>> transfers_;
};

// Passes every journal call to `inner` and records it as a line; with
// `fd` >= 0 also writes the line there (it survives a kill -9).
class RecordingJournal final : public TransferJournal {
 public:
  explicit RecordingJournal(TransferJournal* inner) : inner_(inner) {}

  Status BeginTransfers(std::span<const TransferRecord> records,
                        std::string_view source,
                        std::optional<std::string_view> state) override {
    std::string line = "begin " + std::string(source);
    for (const auto& r : records) line += " " + r.subscriber + ">" + r.to_shard;
    Note(line, state);
    return fail_next_ ? Fail() : inner_->BeginTransfers(records, source, state);
  }
  Status AdvanceTransfers(std::span<const TransferAdvance> steps,
                          std::string_view shard,
                          std::optional<std::string_view> state) override {
    std::string line = "advance " + std::string(shard);
    for (const auto& s : steps) {
      line += std::string(" ") + TransferStepName(s.from) + ">" +
              TransferStepName(s.to);
    }
    Note(line, state);
    return fail_next_ ? Fail() : inner_->AdvanceTransfers(steps, shard, state);
  }
  Result<std::vector<TransferRecord>> ListTransfers() override {
    return inner_->ListTransfers();
  }
  Status DeleteTransfers(std::span<const std::string> ids) override {
    Note("delete " + std::to_string(ids.size()), std::nullopt);
    return inner_->DeleteTransfers(ids);
  }

  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  // The state written with the n-th call (decoded), or null.
  json state(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    return n < states_.size() && states_[n] ? FromMsgpack(*states_[n]) : json();
  }
  void FailNext() { fail_next_ = true; }
  int fd = -1;

 private:
  Status Fail() {
    fail_next_ = false;
    return IoError("disk on fire");
  }
  void Note(const std::string& line, std::optional<std::string_view> state) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(line);
    states_.push_back(state ? std::optional<std::string>(*state)
                            : std::nullopt);
    if (fd >= 0) {
      std::string out = line + "\n";
      (void)!write(fd, out.data(), out.size());
    }
  }

  TransferJournal* const inner_;
  bool fail_next_ = false;
  std::mutex mu_;
  std::vector<std::string> lines_;
  std::vector<std::optional<std::string>> states_;
};

struct Done {
  std::optional<TransferResult> result;
  std::function<void(TransferResult)> Callback() {
    return [this](TransferResult r) {
      EXPECT_FALSE(result.has_value()) << "done called twice";
      result = std::move(r);
    };
  }
};

class TalkHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"talk", "counter"}) {
      KindConfig kind;
      kind.name = name;
      auto module = testing::LoadGuest(name, kind.memory_mb);
      ASSERT_TRUE(module.ok()) << module.status().ToString();
      ASSERT_TRUE(kinds_.Add(kind, *module).ok());
    }
  }
  void StartHost(HostOptions options = {}) {
    options.workers = 0;
    options.clock = &clock_;
    options.wall_clock = &wall_;
    options.save_interval_us = 0;
    options.journal = &journal_;
    options.host_log = [this](std::string_view shard, std::string_view line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.push_back(std::string(shard) + ": " + std::string(line));
    };
    options.on_transfer = [this](const TransferResult& r, int64_t) {
      std::lock_guard<std::mutex> lock(log_mu_);
      finished_.push_back(r);
    };
    host_ = std::make_unique<ShardHost>(&kinds_, &sink_, &store_, options);
  }
  void Talk(const std::string& id, json params = json::object()) {
    ASSERT_TRUE(host_->Create("talk", id, Msgpack(params)).ok());
  }
  Status Input(const std::string& id, const std::string& sid, json input) {
    return host_->SubmitInput(id, sid, ++seq_, Msgpack(input));
  }
  void Join(const std::string& id, const std::string& sid) {
    ASSERT_TRUE(Input(id, sid, {{"join", json::object()}}).ok());
  }
  // Ticks (the clocks advance one tick before each).
  void Step(int ticks = 1) {
    for (int i = 0; i < ticks; ++i) {
      now_ += kTickUs;
      clock_.Set(now_);
      wall_.Advance(kTickUs);
      host_->StepForTest(now_);
    }
  }
  // Passes without time moving: poked shards run.
  void Pass(int passes = 1) {
    for (int i = 0; i < passes; ++i) host_->StepForTest(now_);
  }
  json Players(const std::string& id) {
    json snapshot = sink_.Snapshot(id);
    return snapshot.is_object() ? snapshot.value("players", json::object())
                                : json::object();
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }
  bool Logged(const std::string& part) {
    for (const auto& line : Log()) {
      if (line.find(part) != std::string::npos) return true;
    }
    return false;
  }
  TransferResult Move(ShardHost::TransferSpec spec) {
    Done done;
    host_->Transfer(std::move(spec), done.Callback());
    for (int i = 0; i < 6 && !done.result; ++i) Pass();
    EXPECT_TRUE(done.result.has_value()) << "done was not called";
    Step();  // the snapshots after it
    return done.result.value_or(TransferResult{TransferError::kFailed, "?"});
  }
  std::vector<TransferRecord> Rows() {
    auto rows = store_.ListTransfers();
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<TransferRecord>();
  }

  FakeClock clock_{0};
  FakeWallClock wall_{kWallStartUs};
  KindRegistry kinds_;
  TalkSink sink_;
  MemoryStateStore store_{&wall_};
  RecordingJournal journal_{&store_};
  std::unique_ptr<ShardHost> host_;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::vector<TransferResult> finished_;
};

}  // namespace tessera::shard::talk_testing

#endif  // TESSERA_SHARD_TALK_HOST_TEST_H_
