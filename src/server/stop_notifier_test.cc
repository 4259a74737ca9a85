// StopNotifier: at-least-once delivery with backoff, a bounded queue, and
// dropping what is left at Stop. The poster is a fake; no sockets.
#include "server/stop_notifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "server/stop_notices.h"

namespace tessera::server {
namespace {

using ::testing::HasSubstr;

// Polls `done` until it holds, for up to 30 s (generous: only a condition
// that never comes fails).
bool WaitUntil(const std::function<bool()>& done) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

// A FakeClock that counts its readings, so a test can tell that the
// notifier has looked at the time since the test last moved it.
class CountingClock final : public Clock {
 public:
  explicit CountingClock(int64_t start_us) : fake_(start_us) {}
  int64_t NowUs() const override {
    reads_.fetch_add(1);
    return fake_.NowUs();
  }
  void Advance(int64_t delta_us) { fake_.Advance(delta_us); }
  // True once the clock was read twice more (the notifier re-reads it at
  // least every kRecheckMs while a notice is not due).
  bool ReadTwiceMore() const {
    const int64_t from = reads_.load();
    return WaitUntil([&] { return reads_.load() >= from + 2; });
  }

 private:
  FakeClock fake_;
  mutable std::atomic<int64_t> reads_{0};
};

TEST(StopNotifierTest, RetriesWithBackoffUntilA2xx) {
  // The retries are due on a clock that moves only here: each attempt's
  // time on it is exact, however the threads are scheduled.
  CountingClock clock(1'000'000);
  std::mutex mu;
  std::vector<int64_t> attempts;  // clock time of each post
  std::vector<std::string> logs;
  NotifierOptions options;
  options.initial_backoff_ms = 10;
  options.max_backoff_ms = 1000;
  options.clock = &clock;
  options.post = [&](const std::string& url,
                     const std::string& body) -> Result<int> {
    EXPECT_EQ(url, "http://x.test/hook");
    EXPECT_EQ(body, "{}");
    std::lock_guard<std::mutex> lock(mu);
    attempts.push_back(clock.NowUs());
    if (attempts.size() == 1) return IoError("connection refused");
    if (attempts.size() == 2) return 503;
    return 200;
  };
  options.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    logs.push_back(line);
  };
  auto attempts_made = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return attempts.size();
  };
  Metrics metrics;
  StopNotifier notifier(options, &metrics);
  notifier.Start();
  ASSERT_TRUE(notifier.Enqueue("http://x.test/hook", "{}"));
  // Failed once and queued again (its due time read): not due before
  // 10 ms have passed on the clock (a notifier that posted early would
  // have done so by its second look at the time).
  ASSERT_TRUE(WaitUntil(
      [&] { return attempts_made() == 1 && notifier.pending() == 1; }));
  clock.Advance(9'999);
  ASSERT_TRUE(clock.ReadTwiceMore());
  EXPECT_EQ(attempts_made(), 1u);
  clock.Advance(1);
  ASSERT_TRUE(WaitUntil(
      [&] { return attempts_made() == 2 && notifier.pending() == 1; }));
  // Then 20 ms.
  clock.Advance(19'999);
  ASSERT_TRUE(clock.ReadTwiceMore());
  EXPECT_EQ(attempts_made(), 2u);
  clock.Advance(1);
  ASSERT_TRUE(WaitUntil([&] { return notifier.delivered() == 1; }));
  EXPECT_EQ(notifier.pending(), 0u);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_EQ(attempts[0], 1'000'000);
  EXPECT_EQ(attempts[1], 1'010'000);
  EXPECT_EQ(attempts[2], 1'030'000);
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_THAT(logs[0], HasSubstr("connection refused"));
  EXPECT_THAT(logs[0], HasSubstr("retrying in 10 ms"));
  EXPECT_THAT(logs[1], HasSubstr("HTTP 503"));
  EXPECT_THAT(logs[1], HasSubstr("retrying in 20 ms"));
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("tessera_onstop_delivered_total 1\n"));
  EXPECT_THAT(text, HasSubstr("tessera_onstop_failed_attempts_total 2\n"));
}

TEST(StopNotifierTest, AFullQueueDropsAndStopDropsWhatIsLeft) {
  std::atomic<int> calls{0};
  NotifierOptions options;
  options.max_pending = 2;
  options.initial_backoff_ms = 10;
  FakeClock clock;  // does not move: never retried within the test
  options.clock = &clock;
  options.post = [&](const std::string&, const std::string&) -> Result<int> {
    ++calls;
    return 500;
  };
  std::vector<std::string> logs;
  std::mutex mu;
  options.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    logs.push_back(line);
  };
  Metrics metrics;
  StopNotifier notifier(options, &metrics);
  // Not started yet: notices queue up.
  EXPECT_TRUE(notifier.Enqueue("http://a/", "1"));
  EXPECT_TRUE(notifier.Enqueue("http://a/", "2"));
  EXPECT_FALSE(notifier.Enqueue("http://a/", "3"));
  notifier.Start();
  ASSERT_TRUE(WaitUntil([&] { return calls.load() == 2; }));
  EXPECT_EQ(notifier.pending(), 2u);  // waiting for their retry
  notifier.Stop();
  EXPECT_EQ(notifier.pending(), 0u);
  EXPECT_FALSE(notifier.Enqueue("http://a/", "4"));
  EXPECT_THAT(metrics.Render(), HasSubstr("tessera_onstop_dropped_total 4\n"));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_THAT(logs.back(), HasSubstr("dropped"));
}

TEST(StopNotifierTest, StopNoticeBody) {
  EXPECT_EQ(StopNoticeBody("s1", "arena", shard::StopReason::kIdle, "idle"),
            R"({"error":null,"kind":"arena","reason":"idle","shardId":"s1"})");
  EXPECT_EQ(StopNoticeBody("s1", "arena", shard::StopReason::kFailed,
                           "trap: out of fuel"),
            R"({"error":"trap: out of fuel","kind":"arena","reason":"failed",)"
            R"("shardId":"s1"})");
}

}  // namespace
}  // namespace tessera::server
