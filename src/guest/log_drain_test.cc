#include "guest/log_drain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "tessera/abi.h"

namespace tessera::guest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Collects the drain's output; can be made to stall until released.
class Sink {
 public:
  LogDrain::Output Output() {
    return [this](std::string_view line) { Write(line); };
  }
  void Stall() {
    std::lock_guard<std::mutex> lock(mu_);
    stalled_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    stalled_ = false;
    cv_.notify_all();
  }
  // Waits until the output thread is inside a stalled write.
  void WaitUntilBlocked() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return blocked_; });
  }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  void Write(std::string_view line) {
    std::unique_lock<std::mutex> lock(mu_);
    if (stalled_) {
      blocked_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return !stalled_; });
    }
    lines_.emplace_back(line);
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stalled_ = false;
  bool blocked_ = false;
  std::vector<std::string> lines_;
};

LogDrainOptions Unlimited(const Clock* clock) {
  LogDrainOptions options;
  options.lines_per_second = 0;
  options.clock = clock;
  return options;
}

TEST(LogDrain, WritesFormattedLinesInOrder) {
  FakeClock clock;
  Sink sink;
  LogDrain drain(sink.Output(), Unlimited(&clock));
  EXPECT_TRUE(drain.Push("shard a", abi::kLogInfo, "hello"));
  EXPECT_TRUE(drain.Push("shard a", abi::kLogPanic, "boom"));
  EXPECT_TRUE(drain.Push("shard b", 99, "odd level"));
  drain.Stop();
  EXPECT_THAT(sink.lines(),
              ElementsAre("[shard a] info: hello\n", "[shard a] panic: boom\n",
                          "[shard b] log: odd level\n"));
  EXPECT_EQ(drain.dropped(), 0u);
}

// The incident: stderr's reader stalled and every shard worker, blocked in
// its guest's log call, stopped ticking. Pushing must not wait for the
// output; what does not fit in the queue is dropped and counted.
TEST(LogDrain, AStalledOutputDoesNotBlockThePushingThread) {
  FakeClock clock;
  Sink sink;
  Metrics metrics;
  LogDrainOptions options = Unlimited(&clock);
  options.max_queued_lines = 8;
  options.metrics = &metrics;
  LogDrain drain(sink.Output(), options);
  sink.Stall();
  ASSERT_TRUE(drain.Push("shard a", abi::kLogInfo, "line 0"));
  sink.WaitUntilBlocked();  // line 0 is being written, and stuck
  int accepted = 1;
  for (int i = 1; i < 10000; ++i) {
    // Would hang here if Push waited for the output.
    if (drain.Push("shard a", abi::kLogInfo, "line " + std::to_string(i))) {
      ++accepted;
    }
  }
  // The line being written counts within the bound.
  EXPECT_EQ(accepted, 8);
  EXPECT_EQ(drain.dropped_by_queue(), 10000u - 8u);
  EXPECT_EQ(drain.dropped_by_rate(), 0u);
  EXPECT_THAT(metrics.Render(),
              HasSubstr("tessera_guest_log_dropped_total{reason=\"queue\"} "
                        "9992\n"));
  sink.Release();
  drain.Stop();
  const std::vector<std::string> lines = sink.lines();
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[0], "[shard a] info: line 0\n");
  EXPECT_EQ(lines[7], "[shard a] info: line 7\n");
}

TEST(LogDrain, QueuedBytesAreBoundedToo) {
  FakeClock clock;
  Sink sink;
  LogDrainOptions options = Unlimited(&clock);
  options.max_queued_bytes = 10000;
  LogDrain drain(sink.Output(), options);
  sink.Stall();
  ASSERT_TRUE(drain.Push("s", abi::kLogInfo, std::string(4000, 'x')));
  sink.WaitUntilBlocked();
  EXPECT_TRUE(drain.Push("s", abi::kLogInfo, std::string(4000, 'y')));
  EXPECT_FALSE(drain.Push("s", abi::kLogInfo, std::string(4000, 'z')));
  EXPECT_EQ(drain.dropped_by_queue(), 1u);
  sink.Release();
  drain.Stop();
  EXPECT_EQ(sink.lines().size(), 2u);
}

// One shard logged 8 MB per tick and the server wrote 2.3 GB in 15 s.
TEST(LogDrain, HugeLinesAreCutToTheDocumentedSize) {
  FakeClock clock;
  Sink sink;
  LogDrain drain(sink.Output(), Unlimited(&clock));
  const std::string huge(8 << 20, 'x');
  EXPECT_TRUE(drain.Push("shard big", abi::kLogInfo, huge));
  drain.Stop();
  const std::vector<std::string> lines = sink.lines();
  ASSERT_EQ(lines.size(), 1u);
  const std::string prefix = "[shard big] info: ";
  ASSERT_TRUE(lines[0].starts_with(prefix));
  EXPECT_EQ(lines[0].size(), prefix.size() + 4096 + 1);
  EXPECT_TRUE(lines[0].ends_with("xxx...\n"));
}

// A guest forging another shard's panic, clearing the screen and setting
// the terminal title.
TEST(LogDrain, ForgedLinesAndTerminalEscapesComeOutEscaped) {
  FakeClock clock;
  Sink sink;
  LogDrain drain(sink.Output(), Unlimited(&clock));
  drain.Push("shard evil", abi::kLogInfo,
             "fine\n[shard other] panic: out of memory");
  drain.Push("shard evil", abi::kLogInfo, "\x1B[2J\x1B]0;owned\x07\r");
  drain.Push("shard evil", abi::kLogInfo, "bad \xFF\xC0\x8A utf-8 \xC2\x9B");
  drain.Stop();
  EXPECT_THAT(
      sink.lines(),
      ElementsAre(
          "[shard evil] info: fine\\n[shard other] panic: out of memory\n",
          "[shard evil] info: \\x1B[2J\\x1B]0;owned\\x07\\r\n",
          "[shard evil] info: bad \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD utf-8 "
          "\\u{9B}\n"));
}

TEST(LogDrain, RateLimitPerSourceWithABurst) {
  FakeClock clock(1'000'000);
  Sink sink;
  Metrics metrics;
  LogDrainOptions options;  // the reference: 20 lines/s, burst 80
  options.clock = &clock;
  options.metrics = &metrics;
  LogDrain drain(sink.Output(), options);
  ASSERT_EQ(options.lines_per_second, 20);
  ASSERT_EQ(options.burst, 80);

  auto push_many = [&](std::string_view source, int n) {
    int accepted = 0;
    for (int i = 0; i < n; ++i) {
      if (drain.Push(source, abi::kLogInfo, "x")) ++accepted;
    }
    return accepted;
  };
  // A full bucket: the burst, then nothing.
  EXPECT_EQ(push_many("shard a", 100), 80);
  EXPECT_EQ(drain.dropped_by_rate(), 20u);
  // Another shard has its own bucket.
  EXPECT_EQ(push_many("shard b", 10), 10);
  // 50 ms is one line's worth; 49 ms is not.
  clock.Advance(49'000);
  EXPECT_EQ(push_many("shard a", 5), 0);
  clock.Advance(1'000);
  EXPECT_EQ(push_many("shard a", 5), 1);
  // A second refills 20 lines, not more.
  clock.Advance(1'000'000);
  EXPECT_EQ(push_many("shard a", 30), 20);
  // Quiet for long enough, the burst is back (and no more than it).
  clock.Advance(60'000'000);
  EXPECT_EQ(push_many("shard a", 100), 80);
  EXPECT_EQ(drain.dropped_by_rate(), 20u + 5u + 4u + 10u + 20u);
  EXPECT_EQ(drain.dropped_by_queue(), 0u);
  EXPECT_THAT(
      metrics.Render(),
      HasSubstr("tessera_guest_log_dropped_total{reason=\"rate\"} 59\n"));
  drain.Stop();
}

TEST(LogDrain, AfterDropsANoteSaysHowManyLinesWereLost) {
  FakeClock clock;
  Sink sink;
  LogDrainOptions options;
  options.lines_per_second = 1;
  options.burst = 1;
  options.clock = &clock;
  LogDrain drain(sink.Output(), options);
  EXPECT_TRUE(drain.Push("shard a", abi::kLogInfo, "first"));
  EXPECT_FALSE(drain.Push("shard a", abi::kLogInfo, "lost 1"));
  EXPECT_FALSE(drain.Push("shard a", abi::kLogInfo, "lost 2"));
  clock.Advance(1'000'000);
  EXPECT_TRUE(drain.Push("shard a", abi::kLogInfo, "second"));
  // Held at its limit: the next note waits 5 s and sums what was lost.
  for (int s = 0; s < 5; ++s) {
    EXPECT_FALSE(drain.Push("shard a", abi::kLogInfo, "lost"));
    clock.Advance(1'000'000);
    EXPECT_TRUE(drain.Push("shard a", abi::kLogInfo, "kept"));
  }
  drain.Stop();
  EXPECT_THAT(
      sink.lines(),
      ElementsAre("[shard a] info: first\n",
                  "[shard a] warn: 2 log lines dropped (over the rate limit)\n",
                  "[shard a] info: second\n", "[shard a] info: kept\n",
                  "[shard a] info: kept\n", "[shard a] info: kept\n",
                  "[shard a] info: kept\n",
                  "[shard a] warn: 5 log lines dropped (over the rate limit)\n",
                  "[shard a] info: kept\n"));
}

TEST(LogDrain, QuietSourcesAreForgottenBeyondMaxSources) {
  FakeClock clock;
  Sink sink;
  LogDrainOptions options;
  options.lines_per_second = 1;
  options.burst = 2;
  options.max_sources = 4;
  options.clock = &clock;
  LogDrain drain(sink.Output(), options);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(drain.Push("quiet " + std::to_string(i), abi::kLogInfo, "x"));
  }
  clock.Advance(1'000'000);  // the quiet ones are full again
  EXPECT_TRUE(drain.Push("busy", abi::kLogInfo, "1"));
  EXPECT_TRUE(drain.Push("busy", abi::kLogInfo, "2"));
  EXPECT_EQ(drain.tracked_sources(), 4u);
  // A fifth source: the full buckets go, the busy one stays (still empty).
  EXPECT_TRUE(drain.Push("new", abi::kLogInfo, "x"));
  EXPECT_EQ(drain.tracked_sources(), 2u);
  EXPECT_FALSE(drain.Push("busy", abi::kLogInfo, "3"));
  drain.Stop();
}

TEST(LogDrain, HostLinesShareTheQueueButNotTheRateLimit) {
  FakeClock clock;
  Sink sink;
  LogDrainOptions options;
  options.lines_per_second = 1;
  options.burst = 1;
  options.max_queued_lines = 4;
  options.clock = &clock;
  LogDrain drain(sink.Output(), options);
  sink.Stall();
  EXPECT_TRUE(drain.Push("shard a", abi::kLogPanic, "boom"));
  sink.WaitUntilBlocked();
  EXPECT_FALSE(drain.Push("shard a", abi::kLogInfo, "over the rate"));
  EXPECT_TRUE(drain.PushLine("shard a (k) stopped (failed): panic: boom"));
  EXPECT_TRUE(drain.PushLine("two"));
  EXPECT_TRUE(drain.PushLine("three"));
  EXPECT_FALSE(drain.PushLine("four: the queue is full"));
  EXPECT_EQ(drain.dropped_by_rate(), 1u);
  EXPECT_EQ(drain.dropped_by_queue(), 1u);
  sink.Release();
  drain.Stop();
  EXPECT_THAT(sink.lines(),
              ElementsAre("[shard a] panic: boom\n",
                          "shard a (k) stopped (failed): panic: boom\n",
                          "two\n", "three\n"));
}

TEST(LogDrain, PushAfterStopIsDropped) {
  FakeClock clock;
  Sink sink;
  LogDrain drain(sink.Output(), Unlimited(&clock));
  drain.Stop();
  EXPECT_FALSE(drain.Push("shard a", abi::kLogInfo, "late"));
  EXPECT_FALSE(drain.PushLine("late"));
  drain.Stop();  // idempotent
  EXPECT_TRUE(sink.lines().empty());
}

TEST(LogDrain, FormatLineEscapesTheSourceToo) {
  EXPECT_EQ(LogDrain::FormatLine("shard a\nb", abi::kLogWarn, "t", 4096),
            "[shard a\\nb] warn: t\n");
  EXPECT_EQ(LogDrain::FormatLine("s", abi::kLogDebug, "abcdefgh", 7),
            "[s] debug: abcd...\n");
}

}  // namespace
}  // namespace tessera::guest
