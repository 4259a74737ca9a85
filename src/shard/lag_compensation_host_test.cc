// Lag compensation through the whole host: a manual ShardHost with the
// lagcomp test guests (tests/guests/lagcomp*), whose apply_input_at refuses
// each input with a report of its Rewind: what the history recorded as sent
// becomes the Rewind an input with a view tick is applied with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "replication/decoder.h"
#include "shard/manual_host_test.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::Msgpack;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;

class RejectionSink final : public ShardSink {
 public:
  void OnFrame(std::string_view, uint64_t, std::string_view,
               const std::vector<InputResult>& inputs) override {
    Record(inputs);
  }
  void OnViews(std::string_view,
               std::shared_ptr<const ViewFrame> frame) override {
    Record(frame->inputs);
    std::lock_guard<std::mutex> lock(mu);
    frames.push_back(std::move(frame));
  }
  void OnStopped(std::string_view, StopReason, std::string_view) override {}
  void Record(const std::vector<InputResult>& inputs) {
    std::lock_guard<std::mutex> lock(mu);
    for (const InputResult& r : inputs) {
      results.push_back(r.accepted ? "accepted" : r.rejection);
    }
  }
  // The results since the last call.
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(results, {});
  }

  std::mutex mu;
  std::vector<std::string> results;
  std::vector<std::shared_ptr<const ViewFrame>> frames;
};

class LagCompensationHostTest : public testing::ManualHostTest<RejectionSink> {
 protected:
  void SetUp() override {
    StartHost({{"lagcomp", "lagcomp"}, {"lagcomp_raw", "lagcomp_raw"}});
  }

  Status Start(const char* kind, const json& params) {
    return host_->Create(kind, "s", Msgpack(params));
  }
  void Submit(const std::string& sub, const json& input,
              InputTiming timing = {}) {
    ASSERT_TRUE(
        host_->SubmitInput("s", sub, ++seq_, Msgpack(input), timing).ok());
  }
  static json Probe(uint64_t id) { return {{"probe", {{"id", id}}}}; }
  static InputTiming At(double view_tick,
                        std::optional<int64_t> rtt_us = std::nullopt) {
    return InputTiming{view_tick, rtt_us};
  }
};

// Mover 10 is at x = k after tick k. A subscriber's first tick is its own
// BASELINE stream (RecordSent); from the second it shares the group's
// (RecordShared): both paths record.
TEST_F(LagCompensationHostTest, AViewTickTwoTicksBackGetsWhatWasSentThen) {
  ASSERT_TRUE(Start("lagcomp", json::object()).ok());
  ASSERT_TRUE(host_->AddSubscriber("s", "alice").ok());
  Step(2);
  ASSERT_TRUE(host_->AddSubscriber("s", "bob").ok());
  Step(3);
  sink_.Take();
  Submit("alice", Probe(10), At(3));
  Submit("alice", Probe(11), At(3.5));
  Submit("alice", Probe(99), At(4));
  Submit("alice", {{"near", {{"x", 3}, {"y", 20}, {"z", 1}, {"radius", 0.5}}}},
         At(3));
  Submit("alice", {{"near", {{"x", 3}, {"y", 30}, {"z", 1}, {"radius", 10}}}},
         At(3));
  Submit("alice", Probe(10), At(1));  // her BASELINE tick
  Submit("bob", Probe(10), At(1));    // before bob's first tick (3)
  Submit("bob", Probe(10), At(4.25));
  Step();
  EXPECT_THAT(sink_.Take(),
              ElementsAre("at 3 now 5 behind 2: 10 at (3, 20, 1)",
                          "at 3.5 now 5 behind 1.5: 11 at (3.5, 40, 1)",
                          "at 4 now 5 behind 1: 99 not drawn",
                          "at 3 now 5 behind 2: near [10]",
                          "at 3 now 5 behind 2: near [10 11]",
                          "at 1 now 5 behind 4: 10 at (1, 20, 1)",
                          "at 3 now 5 behind 2: 10 at (3, 20, 1)",
                          "at 4.25 now 5 behind 0.75: 10 at (4.25, 20, 1)"));
}

// Under a byte budget some updates wait: the client keeps drawing the old
// position, and so does the rewind. At each whole view tick the rewind
// holds exactly what a client decoding alice's payloads held then.
TEST_F(LagCompensationHostTest, DeferredUpdatesRewindToTheOldPosition) {
  ASSERT_TRUE(Start("lagcomp", {{"movers", 4}, {"budget", 12}}).ok());
  ASSERT_TRUE(host_->AddSubscriber("s", "alice").ok());
  Step(6);
  replication::Decoder client;
  std::vector<std::string> expected;
  int deferred = 0;
  for (const auto& frame : sink_.frames) {
    for (const SubscriberView& view : frame->views) {
      if (view.subscriber != "alice") continue;
      ASSERT_NE(view.entities, nullptr);
      ASSERT_TRUE(client.Apply(*view.entities).ok());
    }
    if (frame->tick < 2) continue;  // the history keeps ticks 2..6 below
    for (uint64_t id = 10; id < 14; ++id) {
      const replication::DecodedEntity* e = client.Find(id);
      ASSERT_NE(e, nullptr);
      char text[160];
      std::snprintf(
          text, sizeof text, "at %g now 6 behind %g: %llu at (%g, %g, %g)",
          static_cast<double>(frame->tick),
          static_cast<double>(6 - frame->tick),
          static_cast<unsigned long long>(id), client.Coordinate(*e, 0),
          client.Coordinate(*e, 1), client.Coordinate(*e, 2));
      expected.push_back(text);
      if (client.Coordinate(*e, 0) != static_cast<double>(frame->tick)) {
        ++deferred;
      }
    }
  }
  ASSERT_GT(deferred, 0) << "the budget deferred nothing: no test";
  sink_.Take();
  for (uint64_t tick = 2; tick <= 6; ++tick) {
    for (uint64_t id = 10; id < 14; ++id) {
      Submit("alice", Probe(id), At(static_cast<double>(tick)));
    }
  }
  Step();
  EXPECT_EQ(sink_.Take(), expected);
}

TEST_F(LagCompensationHostTest, InputsWithoutAViewTickGoToApplyInput) {
  ASSERT_TRUE(Start("lagcomp", json::object()).ok());
  ASSERT_TRUE(host_->AddSubscriber("s", "alice").ok());
  Step(3);
  sink_.Take();
  Submit("alice", Probe(10));
  Submit("alice", Probe(10), InputTiming{std::nullopt, 40'000});
  Submit("alice", {{"noop", json::object()}}, At(2));
  Step();
  EXPECT_THAT(sink_.Take(), ElementsAre("apply_input: probe 10",
                                        "apply_input: probe 10", "accepted"));
}

TEST_F(LagCompensationHostTest, WithoutLagCompensationEveryInputIsPlain) {
  ASSERT_TRUE(Start("lagcomp", {{"lag", false}}).ok());
  ASSERT_TRUE(host_->AddSubscriber("s", "alice").ok());
  Step(3);
  sink_.Take();
  Submit("alice", Probe(10), At(2));
  Submit("alice", Probe(11), At(1.5, 50'000));
  Submit("alice", Probe(11));
  Step();
  EXPECT_THAT(sink_.Take(),
              ElementsAre("apply_input: probe 10", "apply_input: probe 11",
                          "apply_input: probe 11"));
}

TEST_F(LagCompensationHostTest, ViewTicksAreClamped) {
  ASSERT_TRUE(Start("lagcomp", {{"history", 3}, {"delay", 50}}).ok());
  ASSERT_TRUE(host_->AddSubscriber("s", "alice").ok());
  Step(6);
  sink_.Take();
  Submit("alice", Probe(10), At(9));   // the future: the newest tick
  Submit("alice", Probe(10), At(1));   // before the history: 6 - 3
  Submit("alice", Probe(10), At(-7));  // (a forged negative view tick)
  // RTT 25 ms + 50 ms of view delay = 1.5 ticks of 50 ms.
  Submit("alice", Probe(10), At(1, 25'000));
  Submit("alice", Probe(10), At(5, 25'000));  // inside both bounds
  Step();
  EXPECT_THAT(sink_.Take(),
              ElementsAre("at 6 now 6 behind 0: 10 at (6, 20, 1)",
                          "at 3 now 6 behind 3: 10 at (3, 20, 1)",
                          "at 3 now 6 behind 3: 10 at (3, 20, 1)",
                          "at 4.5 now 6 behind 1.5: 10 at (4.5, 20, 1)",
                          "at 5 now 6 behind 1: 10 at (5, 20, 1)"));
}

TEST_F(LagCompensationHostTest, NoHistoryMeansTheCurrentTickAndNobody) {
  ASSERT_TRUE(Start("lagcomp", json::object()).ok());
  ASSERT_TRUE(host_->AddSubscriber("s", "alice").ok());
  Step(4);
  sink_.Take();
  // Bob was never sent anything.
  Submit("bob", Probe(10), At(2));
  // Alice starts again from a BASELINE at tick 5: her older ticks are gone.
  ASSERT_TRUE(host_->RequestBaseline("s", "alice").ok());
  Step();
  Submit("alice", Probe(10), At(2));
  Step();
  // Once she has left, nothing of hers is kept.
  ASSERT_TRUE(host_->RemoveSubscriber("s", "alice").ok());
  Step();
  Submit("alice", Probe(10), At(6));
  Step();
  EXPECT_THAT(sink_.Take(), ElementsAre("at 4 now 4 behind 0: 10 not drawn",
                                        "at 5 now 5 behind 0: 10 at (5, 20, 1)",
                                        "at 7 now 7 behind 0: 10 not drawn"));
}

TEST_F(LagCompensationHostTest, ClearStartFailures) {
  EXPECT_THAT(Start("lagcomp", {{"replicate", false}}).message(),
              StartsWith("abi: lag compensation needs replication: "));
  EXPECT_THAT(
      Start("lagcomp_raw", json::object()).message(),
      StartsWith("abi: lag compensation needs tessera_apply_input_at: "));
  EXPECT_EQ(Start("lagcomp_raw", {{"history", 0}}).message(),
            "abi: tessera_lag_compensation output: lag compensation config: "
            "history_ticks must be 1..256, got 0");
  EXPECT_THAT(Start("lagcomp_raw", {{"history", 257}}).message(),
              HasSubstr("history_ticks must be 1..256, got 257"));
  EXPECT_THAT(Start("lagcomp_raw", {{"size", 4}}).message(),
              HasSubstr("must be 8 bytes (u32 history_ticks, u32 "
                        "max_view_delay_ms), got 4"));
  // The SDK refuses an out-of-range history itself, naming the hook.
  EXPECT_THAT(Start("lagcomp", {{"history", 300}}).message(),
              HasSubstr("lag_compensation(): history_ticks must be 1..256 "
                        "(got 300)"));
  EXPECT_FALSE(host_->Get("s").has_value());
  EXPECT_TRUE(Start("lagcomp", {{"history", 256}}).ok());
}

}  // namespace
}  // namespace tessera::shard
