// A kind's onStop function (stop_functions.h): a real shard host stopping
// shards of the `calls` guest, the calls app's onStop function on a real
// compute engine inserting a Stop row into the real SQLite data store.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "server/calls_test_fixture.h"

namespace tessera::server::testing {
namespace {

using ::testing::HasSubstr;

class StopFunctionsTest : public CallsTest {
 protected:
  std::vector<json> StopRows() {
    std::vector<json> out;
    Result<std::unique_ptr<data::DataTxn>> txn =
        data_->Begin(data::TxnMode::kRead);
    EXPECT_TRUE(txn.ok());
    if (!txn.ok()) return out;
    Result<data::Page> page = (*txn)->List("Stop", data::Filter{}, "", 100);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) return out;
    for (const data::Row& r : page->rows) {
      out.push_back(json::parse(r.fields_json));
    }
    return out;
  }
};

TEST_F(StopFunctionsTest, EveryStopCallsTheKindsFunction) {
  Create("s1");
  Create("s2");
  Step();
  ASSERT_TRUE(host_->Stop("s1").ok());
  Input("s2", {{"finish", json::object()}});
  Step();
  Step();
  EXPECT_EQ(stop_functions_->pending(), 2u);
  EXPECT_EQ(stop_functions_->RunDue(), 2u);
  std::vector<json> rows = StopRows();
  ASSERT_EQ(rows.size(), 2u);
  std::set<std::string> seen;
  for (const json& r : rows) {
    EXPECT_EQ(r.value("kind", ""), "calls");
    seen.insert(r.value("shard", "") + " " + r.value("reason", ""));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"s1 stopped", "s2 finished"}));
  EXPECT_EQ(stop_functions_->counts().ok, 2u);
}

TEST_F(StopFunctionsTest, AFailedShardGivesItsReason) {
  Create("s1");
  Input("s1", {{"panic", json::object()}});
  Step();
  Step();
  stop_functions_->RunDue();
  std::vector<json> rows = StopRows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].value("reason", ""), "failed");
}

TEST_F(StopFunctionsTest, AKindWithoutOnStopCallsNothing) {
  Create("s1", "quiet");
  ASSERT_TRUE(host_->Stop("s1").ok());
  Step();
  EXPECT_EQ(stop_functions_->pending(), 0u);
  EXPECT_TRUE(StopRows().empty());
}

TEST_F(StopFunctionsTest, TheHostsShutdownIsNoStop) {
  Create("s1");
  Step();
  host_->Shutdown();
  EXPECT_EQ(stop_functions_->pending(), 0u);
}

TEST_F(StopFunctionsTest, TransientFailuresAreRetriedFiveTimesInAll) {
  ASSERT_TRUE(engine_->SetEnabled("fns", false).ok());
  Create("s1");
  ASSERT_TRUE(host_->Stop("s1").ok());
  Step();
  EXPECT_EQ(stop_functions_->RunDue(), 1u);  // try 1
  EXPECT_EQ(stop_functions_->pending(), 1u);
  EXPECT_EQ(stop_functions_->RunDue(), 0u);  // not due yet
  clock_.Advance(100'000);
  EXPECT_EQ(stop_functions_->RunDue(), 1u);  // try 2
  ASSERT_TRUE(engine_->SetEnabled("fns", true).ok());
  clock_.Advance(200'000);
  EXPECT_EQ(stop_functions_->RunDue(), 1u);  // try 3 works
  EXPECT_EQ(StopRows().size(), 1u);
  EXPECT_EQ(stop_functions_->counts().retried, 2u);

  // Failing every time: given up after the fifth try, logged.
  ASSERT_TRUE(engine_->SetEnabled("fns", false).ok());
  Create("s2");
  ASSERT_TRUE(host_->Stop("s2").ok());
  Step();
  for (int i = 0; i < 10; ++i) {
    stop_functions_->RunDue();
    clock_.Advance(2'000'000);
  }
  EXPECT_EQ(stop_functions_->pending(), 0u);
  EXPECT_EQ(stop_functions_->counts().failed, 1u);
  std::vector<std::string> logs = Logs();
  ASSERT_FALSE(logs.empty());
  EXPECT_THAT(logs.back(), HasSubstr("shard s2 (calls): onStop fns.onStop "
                                     "failed after 5 tries: "));
}

TEST_F(StopFunctionsTest, AnUnknownFunctionIsLoggedOnce) {
  shard::KindConfig kind;
  kind.name = "lost";
  kind.codec = shard::Codec::kJson;
  kind.idle_shutdown_secs = 0;
  kind.on_stop = "fns.nothing";
  TESSERA_LOAD_GUEST(calls, "calls", 64);
  ASSERT_TRUE(kinds_.Add(kind, calls).ok());
  Create("s1", "lost");
  ASSERT_TRUE(host_->Stop("s1").ok());
  Step();
  stop_functions_->RunDue();
  EXPECT_EQ(stop_functions_->pending(), 0u);
  std::vector<std::string> logs = Logs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_THAT(logs[0], HasSubstr("onStop fns.nothing failed: "));
}

TEST_F(StopFunctionsTest, AUrlIsNotAFunction) {
  EXPECT_TRUE(IsStopUrl("http://x/y"));
  EXPECT_TRUE(IsStopUrl("https://x/y"));
  EXPECT_FALSE(IsStopUrl("fns.onStop"));
  EXPECT_FALSE(IsStopUrl("onStop"));
}

}  // namespace
}  // namespace tessera::server::testing
