// Helpers of the RealmHost tests (host_test.cc, host_presence_test.cc): a
// peer that records what the host tells it, and a host over a thread-less
// WorkerPool (the test drives passes with a fake clock) and a real SQLite
// realm store.
#ifndef TESSERA_REALM_HOST_TESTING_H_
#define TESSERA_REALM_HOST_TESTING_H_

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "guest/worker_pool.h"
#include "realm/engine_testing.h"
#include "realm/host.h"
#include "store/sqlite_realm_store.h"

namespace tessera::realm::host_testing {

using namespace engine_testing;  // NOLINT

class RecordingPeer final : public RealmPeer {
 public:
  void OnAttached(AttachAnswer answer) override {
    attached.push_back(std::move(answer));
  }
  void OnCommits(std::shared_ptr<const CommitBatch> batch) override {
    ++batches;
    for (const BroadcastCommit& c : *batch) commits.push_back(c);
  }
  void OnRejected(uint64_t seq, std::string code,
                  std::string message) override {
    rejected.push_back({seq, std::move(code), std::move(message)});
  }
  void OnIntentDone(uint64_t seq, int64_t version) override {
    intents.push_back({seq, version});
  }
  void OnClosed(int code, std::string reason) override {
    closed.push_back({code, std::move(reason)});
  }

  // The versions of the commits received, in order.
  std::vector<int64_t> Versions() const {
    std::vector<int64_t> out;
    for (const BroadcastCommit& c : commits) out.push_back(c.version);
    return out;
  }

  struct Rejection {
    uint64_t seq;
    std::string code, message;
  };
  struct Close {
    int code;
    std::string reason;
  };
  std::vector<AttachAnswer> attached;
  std::vector<BroadcastCommit> commits;
  std::vector<Rejection> rejected;
  std::vector<Close> closed;
  std::vector<std::pair<uint64_t, int64_t>> intents;  // (seq, version)
  int batches = 0;
};

class HostFixture : public ::testing::Test {
 protected:
  void Make(std::vector<RealmKindConfig> kinds, RealmHooks* hooks = nullptr,
            RealmStore* store = nullptr) {
    RealmHostOptions options;
    options.pool = &pool_;
    options.store = store != nullptr ? store : store_.get();
    options.hooks = hooks;
    options.unload_after_ms = 1000;
    options.wall_clock = &wall_;
    options.log = [this](const std::string& line) { log_.push_back(line); };
    options.initial_state = [](const RealmKindConfig&, std::string_view) {
      return Initial();
    };
    host_ = std::make_unique<RealmHost>(std::move(kinds), std::move(options));
  }
  // One pass of the pool at the fake clock's time.
  void Pass() { pool_.RunPass(clock_.NowUs()); }
  // Moves both clocks on.
  void Advance(int64_t ms) {
    clock_.Advance(ms * 1000);
    wall_.Advance(ms * 1000);
  }

  // The server's update path (which blocks until the instance ran it),
  // from another thread while this one drives the passes.
  Result<int64_t> Update(const std::string& key, Patch patch) {
    std::future<Result<int64_t>> done =
        std::async(std::launch::async, [&] {
          return host_->Update("match", key, std::move(patch));
        });
    while (done.wait_for(std::chrono::milliseconds(1)) !=
           std::future_status::ready) {
      Pass();
    }
    return done.get();
  }

  std::shared_ptr<RecordingPeer> Join(const std::string& avatar,
                                      const std::string& key = "m1",
                                      int64_t epoch = 0, int64_t version = 0) {
    auto peer = std::make_shared<RecordingPeer>();
    EXPECT_TRUE(host_->Attach("match", key, peer, avatar, epoch, version).ok());
    Pass();
    EXPECT_EQ(peer->attached.size(), 1u);
    return peer;
  }

  FakeClock clock_{1'000'000};
  FakeWallClock wall_{1'800'000'000'000'000};
  guest::WorkerPool pool_{guest::WorkerPoolOptions{0, &clock_, 100'000}};
  std::unique_ptr<store::SqliteRealmStore> store_ = OpenStore(":memory:");
  std::vector<std::string> log_;
  std::unique_ptr<RealmHost> host_;
};

}  // namespace tessera::realm::host_testing

#endif  // TESSERA_REALM_HOST_TESTING_H_
