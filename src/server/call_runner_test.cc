// The keyed-call runner (call_runner.h) between a real shard host running
// the `calls` test guest, a real compute engine running the calls app's
// functions and the real SQLite data store: what the shard learns, which
// rows exist and what is stored, per outcome.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/calls_test_fixture.h"

namespace tessera::server::testing {
namespace {

using ::testing::HasSubstr;

class CallRunnerTest : public CallsTest {
 protected:
  // A tick (the shard lists its calls), the runner's batch, a tick (the
  // shard takes the results).
  void Round() {
    Step();
    runner_->RunBatch();
    Step();
  }
};

TEST_F(CallRunnerTest, RunsTheFunctionOnceAndTheShardLearnsTheResult) {
  Create("s1");
  Call("s1", "loot:1", "fns.grant", {{"item", "sword"}});
  Round();
  std::vector<std::string> results = Results("s1");
  ASSERT_EQ(results.size(), 1u) << ::testing::PrintToString(results);
  EXPECT_THAT(results[0], HasSubstr("result:loot:1:ok:"));
  EXPECT_EQ(Count("Item"), 1);
  EXPECT_EQ(Waiting("s1"), json::array());
  std::optional<data::StoredCall> stored = StoredCall("loot:1");
  ASSERT_TRUE(stored.has_value());
  EXPECT_TRUE(stored->ok);
  EXPECT_EQ(stored->function, "fns.grant");
  // The result is the inserted row's id, the one stored.
  json result = json::parse(stored->result_json);
  ASSERT_TRUE(result.is_object()) << stored->result_json;
  EXPECT_TRUE(GetRow("Item", result.value("id", "")).has_value());
  EXPECT_EQ(Metric("tessera_calls_total{outcome=\"ok\"}"), 1u);
  // More ticks: nothing runs again.
  Round();
  EXPECT_EQ(Count("Item"), 1);
}

TEST_F(CallRunnerTest, ABareExportNameWorksAndCallerIsTheShard) {
  Create("s1");
  Call("s1", "who", "caller", nullptr);
  Round();
  std::vector<std::string> results = Results("s1");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], R"(result:who:ok:{"shard":"s1"})");
}

TEST_F(CallRunnerTest, TheSameKeyAgainReplaysTheStoredResultWithoutRunning) {
  Create("s1");
  Call("s1", "loot:1", "fns.grant", {{"item", "sword"}});
  Round();
  ASSERT_EQ(Count("Item"), 1);
  const std::string first = Results("s1").at(0);
  // Another shard run (a restart would be one) asks with the same key and
  // args: the stored result, no second row.
  Create("s2");
  Call("s2", "loot:1", "fns.grant", {{"item", "sword"}});
  Round();
  ASSERT_EQ(Results("s2").size(), 1u);
  EXPECT_EQ(Results("s2")[0], first);
  EXPECT_EQ(Count("Item"), 1);
  EXPECT_EQ(Metric("tessera_calls_total{outcome=\"replayed\"}"), 1u);
}

TEST_F(CallRunnerTest, TheSameKeyWithOtherArgsIsKeyReused) {
  Create("s1");
  Call("s1", "loot:1", "fns.grant", {{"item", "sword"}});
  Round();
  Call("s1", "loot:1", "fns.grant", {{"item", "shield"}});
  Round();
  std::vector<std::string> results = Results("s1");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_THAT(results[1], HasSubstr("result:loot:1:error:KEY_REUSED: "));
  EXPECT_EQ(Count("Item"), 1);
  // Keys with the same args in another order of keys are the same args.
  Call("s1", "loot:2", "fns.grant", {{"item", "axe"}, {"owner", "p"}});
  Round();
  Create("s2");
  Input("s2", {{"call",
                {{"key", "loot:2"},
                 {"function", "fns.grant"},
                 {"args", R"({ "owner": "p", "item": "axe" })"}}}});
  Round();
  ASSERT_EQ(Results("s2").size(), 1u);
  EXPECT_THAT(Results("s2")[0], HasSubstr("result:loot:2:ok:"));
  EXPECT_EQ(Count("Item"), 2);
}

TEST_F(CallRunnerTest, ARefusalRollsBackAndIsStoredForTheKey) {
  Create("s1");
  Call("s1", "r1", "fns.refuse", {{"item", "gem"}});
  Call("s1", "t1", "fns.trap", {{"item", "gem"}});
  Round();
  std::vector<std::string> results = Results("s1");
  ASSERT_EQ(results.size(), 2u) << ::testing::PrintToString(results);
  EXPECT_THAT(results[0], HasSubstr("result:r1:error:"));
  EXPECT_THAT(results[0], HasSubstr("refused: gem"));
  EXPECT_THAT(results[1], HasSubstr("result:t1:error:FUNCTION_FAILED: "));
  // Both inserted before failing: nothing of it committed.
  EXPECT_EQ(Count("Item"), 0);
  std::optional<data::StoredCall> stored = StoredCall("r1");
  ASSERT_TRUE(stored.has_value());
  EXPECT_FALSE(stored->ok);
  EXPECT_THAT(stored->error, HasSubstr("refused: gem"));
  // Asked again: the same answer, the function not run again.
  Create("s2");
  Call("s2", "r1", "fns.refuse", {{"item", "gem"}});
  Round();
  ASSERT_EQ(Results("s2").size(), 1u);
  EXPECT_EQ(Results("s2")[0], results[0]);
  EXPECT_EQ(Metric("tessera_calls_total{outcome=\"error\"}"), 2u);
  EXPECT_EQ(Metric("tessera_calls_total{outcome=\"replayed\"}"), 1u);
}

TEST_F(CallRunnerTest, AnUnknownFunctionIsAnErrorThatIsNotStored) {
  Create("s1");
  Call("s1", "k", "fns.nothing", nullptr);
  Call("s1", "k2", "nosuch.grant", nullptr);
  Round();
  std::vector<std::string> results = Results("s1");
  ASSERT_EQ(results.size(), 2u) << ::testing::PrintToString(results);
  EXPECT_THAT(results[0], HasSubstr("result:k:error:FUNCTION_NOT_FOUND: "));
  EXPECT_THAT(results[1], HasSubstr("result:k2:error:FUNCTION_NOT_FOUND: "));
  EXPECT_FALSE(StoredCall("k").has_value());
  EXPECT_FALSE(StoredCall("k2").has_value());
}

TEST_F(CallRunnerTest, ATransientFailureIsRetriedWithBackoffUnderTheSameKey) {
  ASSERT_TRUE(engine_->SetEnabled("fns", false).ok());
  Create("s1");
  Call("s1", "loot:1", "fns.grant", {{"item", "sword"}});
  Step();
  EXPECT_EQ(runner_->RunBatch(), 1u);
  Step();
  EXPECT_TRUE(Results("s1").empty());
  EXPECT_FALSE(StoredCall("loot:1").has_value());
  ASSERT_TRUE(runner_->next_retry_us().has_value());
  EXPECT_EQ(*runner_->next_retry_us(), clock_.NowUs() - kTickUs + 100'000);
  EXPECT_EQ(Metric("tessera_calls_total{outcome=\"transient\"}"), 1u);
  // Not due yet: nothing runs.
  EXPECT_EQ(runner_->RunBatch(), 0u);
  // The second try fails too: the wait doubles.
  clock_.Advance(100'000);
  EXPECT_EQ(runner_->RunBatch(), 1u);
  EXPECT_EQ(*runner_->next_retry_us(), clock_.NowUs() + 200'000);
  ASSERT_TRUE(engine_->SetEnabled("fns", true).ok());
  clock_.Advance(200'000);
  EXPECT_EQ(runner_->RunBatch(), 1u);
  Step();
  ASSERT_EQ(Results("s1").size(), 1u);
  EXPECT_THAT(Results("s1")[0], HasSubstr("result:loot:1:ok:"));
  EXPECT_EQ(Count("Item"), 1);
  EXPECT_EQ(runner_->pending(), 0u);
  // The first failure was logged once.
  std::vector<std::string> logs = Logs();
  ASSERT_EQ(logs.size(), 1u) << ::testing::PrintToString(logs);
  EXPECT_THAT(logs[0], HasSubstr("loot:1"));
}

TEST_F(CallRunnerTest, ACallOfAnEndedRunDoesNotRun) {
  Create("s1");
  Call("s1", "loot:1", "fns.grant", {{"item", "sword"}});
  Step();  // submitted
  ASSERT_TRUE(host_->Stop("s1").ok());
  Step();
  runner_->RunBatch();
  EXPECT_EQ(Count("Item"), 0);
  EXPECT_FALSE(StoredCall("loot:1").has_value());
  EXPECT_EQ(runner_->counts().dropped, 1u);
}

TEST_F(CallRunnerTest, ManyCallsCommitInOneTransaction) {
  Create("s1");
  for (int i = 0; i < 50; ++i) {
    Call("s1", "k" + std::to_string(i), "fns.grant",
         {{"item", "i" + std::to_string(i)}});
  }
  // One refusal among them rolls back alone.
  Call("s1", "bad", "fns.refuse", {{"item", "x"}});
  Step();
  EXPECT_EQ(runner_->RunBatch(), 51u);
  Step();
  EXPECT_EQ(runner_->counts().batches, 1u);
  EXPECT_EQ(Count("Item"), 50);
  EXPECT_EQ(Results("s1").size(), 51u);
  EXPECT_EQ(runner_->counts().ok, 50u);
  EXPECT_EQ(runner_->counts().error, 1u);
}

TEST_F(CallRunnerTest, TheRunnerThreadAnswersCalls) {
  runner_->Start();
  Create("s1");
  Call("s1", "loot:1", "fns.grant", {{"item", "sword"}});
  Step();
  // The thread runs it; the next tick after that takes the result.
  for (int i = 0; i < 2000 && Results("s1").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Step();
  }
  ASSERT_EQ(Results("s1").size(), 1u);
  EXPECT_EQ(Count("Item"), 1);
}

}  // namespace
}  // namespace tessera::server::testing
