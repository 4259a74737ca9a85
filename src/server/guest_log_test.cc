// Guest logs between a real ShardHost and guest::LogDrain, wired as
// AppServer wires them: the incident where a stalled stderr reader froze
// every shard (each worker blocked in its guest's log call), reproduced
// with an output that never returns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/metrics.h"
#include "guest/log_drain.h"
#include "shard/guest_shard.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;

// An output stuck until released, as a paused terminal or a blocking log
// driver leaves a write to stderr.
class StuckOutput {
 public:
  void Write(std::string_view) {
    std::unique_lock<std::mutex> lock(mu_);
    ++writes_;
    cv_.wait(lock, [this] { return released_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int writes_ = 0;
};

TEST(GuestLog, AStalledOutputDoesNotStopShardsFromTicking) {
  TESSERA_LOAD_GUEST(logger, "logger", 64);
  shard::KindRegistry kinds;
  shard::KindConfig kind;
  kind.name = "logger";
  kind.idle_shutdown_secs = 0;
  ASSERT_TRUE(kinds.Add(kind, logger).ok());

  StuckOutput output;
  Metrics metrics;
  FakeClock clock(0);
  guest::LogDrainOptions log_options;
  log_options.max_line_bytes = shard::GuestShard::kMaxLogLineBytes;
  log_options.metrics = &metrics;
  log_options.clock = &clock;
  guest::LogDrain drain(
      [&output](std::string_view line) { output.Write(line); }, log_options);

  shard::HostOptions host_options;
  host_options.workers = 0;
  host_options.clock = &clock;
  host_options.save_interval_us = 0;
  host_options.guest_log = [&drain](std::string_view id, int level,
                                    std::string_view text) {
    drain.Push("shard " + std::string(id), level, text);
  };
  shard::ShardHost host(&kinds, nullptr, nullptr, host_options);
  ASSERT_TRUE(host.Create("logger", "a",
                          shard::testing::Msgpack(nlohmann::json::object()))
                  .ok());
  ASSERT_TRUE(host.Create("logger", "b",
                          shard::testing::Msgpack(nlohmann::json::object()))
                  .ok());

  // 200 ticks of 5 lines each per shard (10 s of game time) while the
  // output is stuck on its first line: the shards tick on (this would hang
  // if a worker waited for the output).
  for (int64_t t = 50'000; t <= 10'000'000; t += 50'000) {
    clock.Set(t);
    host.StepForTest(t);
  }
  EXPECT_EQ(host.Get("a")->tick, 200u);
  EXPECT_EQ(host.Get("b")->tick, 200u);
  // Over the rate limit (20 lines/s, burst 80, per shard) lines are
  // dropped and counted; what got through waits in the bounded queue.
  EXPECT_GT(drain.dropped_by_rate(), 0u);
  EXPECT_THAT(metrics.Render(),
              HasSubstr("tessera_guest_log_dropped_total{reason=\"rate\"} "));
  output.Release();
  host.Shutdown();
  drain.Stop();
}

}  // namespace
}  // namespace tessera::server
