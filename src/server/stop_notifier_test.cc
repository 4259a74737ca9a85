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

TEST(StopNotifierTest, RetriesWithBackoffUntilA2xx) {
  std::mutex mu;
  std::vector<std::chrono::steady_clock::time_point> attempts;
  std::vector<std::string> logs;
  NotifierOptions options;
  options.initial_backoff_ms = 10;
  options.max_backoff_ms = 1000;
  options.post = [&](const std::string& url,
                     const std::string& body) -> Result<int> {
    EXPECT_EQ(url, "http://x.test/hook");
    EXPECT_EQ(body, "{}");
    std::lock_guard<std::mutex> lock(mu);
    attempts.push_back(std::chrono::steady_clock::now());
    if (attempts.size() == 1) return IoError("connection refused");
    if (attempts.size() == 2) return 503;
    return 200;
  };
  options.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(mu);
    logs.push_back(line);
  };
  Metrics metrics;
  StopNotifier notifier(options, &metrics);
  notifier.Start();
  ASSERT_TRUE(notifier.Enqueue("http://x.test/hook", "{}"));
  ASSERT_TRUE(WaitUntil([&] { return notifier.delivered() == 1; }));
  EXPECT_EQ(notifier.pending(), 0u);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(attempts.size(), 3u);
  // 10 ms, then 20 ms.
  EXPECT_GE(attempts[1] - attempts[0], std::chrono::milliseconds(10));
  EXPECT_GE(attempts[2] - attempts[1], std::chrono::milliseconds(20));
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_THAT(logs[0], HasSubstr("connection refused"));
  EXPECT_THAT(logs[1], HasSubstr("HTTP 503"));
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("tessera_onstop_delivered_total 1\n"));
  EXPECT_THAT(text, HasSubstr("tessera_onstop_failed_attempts_total 2\n"));
}

TEST(StopNotifierTest, AFullQueueDropsAndStopDropsWhatIsLeft) {
  std::atomic<int> calls{0};
  NotifierOptions options;
  options.max_pending = 2;
  options.initial_backoff_ms = 60'000;  // never retried within the test
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
