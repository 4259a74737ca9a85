// ShardHost: moves of players between `talk` shards (module-started and
// admin), every refusal path, the journal's rows at each step, concurrent
// moves on real workers, recovery at boot, and the fault points.
#include "shard/talk_host_test.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/fault_point.h"

namespace tessera::shard::talk_testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---- Moves ------------------------------------------------------------------

TEST_F(TalkHostTest, ModuleStartedMoveEndToEnd) {
  StartHost();
  Talk("s");
  Talk("t");
  ASSERT_TRUE(host_->AddSubscriber("s", "p", R"({"party":"red"})").ok());
  Join("s", "p");
  Step();
  ASSERT_TRUE(Input("s", "p", {{"step", json::object()}}).ok());
  ASSERT_TRUE(Input("s", "p", {{"go", {{"to", "t"}}}}).ok());
  Step();
  Pass(4);
  Step();
  EXPECT_FALSE(Players("s").contains("p"));
  ASSERT_TRUE(Players("t").contains("p"));
  EXPECT_EQ(Players("t")["p"]["n"], 1);
  EXPECT_EQ(Players("t")["p"]["from"], "s");

  auto transfers = sink_.transfers();
  ASSERT_EQ(transfers.size(), 1u);
  EXPECT_EQ(transfers[0].first, "s");
  EXPECT_EQ(transfers[0].second.subscriber, "p");
  EXPECT_EQ(transfers[0].second.to, "t");
  EXPECT_EQ(transfers[0].second.claims_json, R"({"party":"red"})");
  std::optional<MovedTo> moved = host_->FindMove("s", "p");
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->to, "t");
  EXPECT_GE(moved->moved_unix_ms, kWallStartUs / 1000);
  EXPECT_FALSE(host_->FindMove("t", "p").has_value());

  ASSERT_EQ(finished_.size(), 1u);
  EXPECT_TRUE(finished_[0].ok());
  EXPECT_EQ(host_->talk_counters().transfers[0], 1u);
  // The player's inputs go to the target now; the source says "not here".
  ASSERT_TRUE(Input("t", "p", {{"step", json::object()}}).ok());
  Step();
  EXPECT_EQ(Players("t")["p"]["n"], 2);
}

TEST_F(TalkHostTest, AdminMoveJournalRowsAtEachStep) {
  StartHost();
  Talk("s");
  Talk("t");
  Join("s", "p");
  Join("s", "q");
  Step();
  TransferResult r = Move({"s", "p", "t", R"({"vip":true})"});
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_TRUE(Players("t").contains("p"));
  EXPECT_FALSE(Players("s").contains("p"));
  EXPECT_TRUE(Players("s").contains("q"));
  EXPECT_EQ(host_->FindMove("s", "p")->claims_json, R"({"vip":true})");

  // kOut with the source's save (without p), then kOut->kIn with the
  // target's save (with p); the kIn row stays as the redirect record.
  EXPECT_THAT(journal_.lines(), ElementsAre("begin s p>t", "advance t out>in"));
  json source_saved = journal_.state(0);
  EXPECT_FALSE(source_saved["state"]["players"].contains("p"));
  EXPECT_TRUE(source_saved["state"]["players"].contains("q"));
  EXPECT_TRUE(journal_.state(1)["state"]["players"].contains("p"));
  auto rows = Rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].step, TransferStep::kIn);
  EXPECT_EQ(rows[0].from_shard, "s");
  EXPECT_EQ(rows[0].to_shard, "t");
  EXPECT_EQ(FromMsgpack(rows[0].state)["n"], 0);

  // FindMove answers for kMovedRecordSecs, then the record and its row go.
  wall_.Advance((kMovedRecordSecs - 2) * 1'000'000);
  EXPECT_TRUE(host_->FindMove("s", "p").has_value());
  wall_.Advance(2 * 1'000'000);
  EXPECT_FALSE(host_->FindMove("s", "p").has_value());
  Step(30);  // the host expires records about once a second
  EXPECT_THAT(Rows(), IsEmpty());
}

TEST_F(TalkHostTest, InputsOfAMovingPlayerAreRefused) {
  StartHost();
  Talk("s");
  Talk("t");
  Join("s", "p");
  Step();
  // Checked when the target has committed, before the source heard of it.
  std::optional<Status> during;
  sink_.on_transfer = [&](std::string_view, const MovedTo&) {
    during = Input("s", "p", {{"step", json::object()}});
  };
  ASSERT_TRUE(Move({"s", "p", "t"}).ok());
  ASSERT_TRUE(during.has_value());
  EXPECT_EQ(during->code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(during->message(), "moving to shard t");
  // After the move the source takes inputs again (its module decides).
  EXPECT_TRUE(Input("s", "p", {{"step", json::object()}}).ok());
}

TEST_F(TalkHostTest, RefusedByTheTargetReturnsThePlayer) {
  StartHost();
  Talk("s");
  Talk("t", {{"refuse", "zone full"}});
  ASSERT_TRUE(host_->AddSubscriber("s", "p").ok());
  Join("s", "p");
  Step();
  ASSERT_TRUE(Input("s", "p", {{"step", json::object()}}).ok());
  Step();
  TransferResult r = Move({"s", "p", "t"});
  EXPECT_EQ(r.error, TransferError::kRefused);
  EXPECT_EQ(r.message, "zone full");
  ASSERT_TRUE(Players("s").contains("p"));
  EXPECT_EQ(Players("s")["p"]["n"], 1);      // its state came back
  EXPECT_EQ(Players("s")["p"]["from"], "");  // returning: as before
  EXPECT_FALSE(Players("t").contains("p"));
  EXPECT_THAT(journal_.lines(),
              ElementsAre("begin s p>t", "advance s out>back", "delete 1"));
  EXPECT_TRUE(journal_.state(1)["state"]["players"].contains("p"));
  EXPECT_THAT(Rows(), IsEmpty());
  EXPECT_FALSE(host_->FindMove("s", "p").has_value());
  EXPECT_TRUE(Input("s", "p", {{"step", json::object()}}).ok());
  EXPECT_EQ(host_->talk_counters()
                .transfers[static_cast<int>(TransferError::kRefused)],
            1u);
  EXPECT_TRUE(Logged("SHARD_TRANSFER_REFUSED: zone full"));
}

TEST_F(TalkHostTest, RequiredClaim) {
  StartHost();
  Talk("s");
  Talk("t", {{"require_claim", "party"}});
  Join("s", "p");
  Join("s", "q");
  Step();
  TransferResult r = Move({"s", "p", "t"});
  EXPECT_EQ(r.error, TransferError::kRefused);
  EXPECT_EQ(r.message, "missing claim party");
  EXPECT_TRUE(Players("s").contains("p"));
  EXPECT_TRUE(Move({"s", "q", "t", R"({"party":"red"})"}).ok());
  EXPECT_TRUE(Players("t").contains("q"));

  // A module-started move takes the claims of the player's connection.
  ASSERT_TRUE(host_->AddSubscriber("s", "p", R"({"party":"blue"})").ok());
  ASSERT_TRUE(Input("s", "p", {{"go", {{"to", "t"}}}}).ok());
  Step();
  Pass(4);
  Step();
  EXPECT_TRUE(Players("t").contains("p"));
}

TEST_F(TalkHostTest, RefusalsFoundBeforeTransferOut) {
  StartHost();
  Talk("s");
  Talk("t");
  ASSERT_TRUE(host_->Create("counter", "c", Msgpack({{"start", 0}})).ok());
  Join("s", "p");
  Step();
  // At once, on the calling thread.
  for (auto spec :
       std::vector<ShardHost::TransferSpec>{{"s", "p", "s"},
                                            {"", "p", "t"},
                                            {"s", "", "t"},
                                            {"s", "p", ""},
                                            {"s", "p", "t", "[1]"}}) {
    Done done;
    host_->Transfer(spec, done.Callback());
    ASSERT_TRUE(done.result.has_value());
    EXPECT_EQ(done.result->error, TransferError::kInvalid);
  }
  Done gone;
  host_->Transfer({"nope", "p", "t"}, gone.Callback());
  ASSERT_TRUE(gone.result.has_value());
  EXPECT_EQ(gone.result->error, TransferError::kNotFound);

  // On the source's worker; transfer_out is not called (no journal row).
  TransferResult r = Move({"s", "p", "nope"});
  EXPECT_EQ(r.error, TransferError::kNotFound);
  EXPECT_THAT(r.message, HasSubstr("nope"));
  EXPECT_EQ(Move({"s", "p", "c"}).error, TransferError::kUnsupported);
  EXPECT_EQ(Move({"c", "p", "t"}).error, TransferError::kUnsupported);
  EXPECT_EQ(Move({"s", "ghost", "t"}).error, TransferError::kNoPlayer);
  EXPECT_THAT(journal_.lines(), IsEmpty());
  EXPECT_TRUE(Players("s").contains("p"));

  // Two moves of one player at once: the second is busy.
  Done first, second;
  host_->Transfer({"s", "p", "t"}, first.Callback());
  host_->Transfer({"s", "p", "t"}, second.Callback());
  Pass(6);
  ASSERT_TRUE(first.result && second.result);
  EXPECT_TRUE(first.result->ok());
  EXPECT_EQ(second.result->error, TransferError::kBusy);
  EXPECT_EQ(host_->talk_counters()
                .transfers[static_cast<int>(TransferError::kInvalid)],
            5u);
}

TEST_F(TalkHostTest, BusyWhileOnTheWay) {
  StartHost();
  Talk("s");
  Talk("t");
  Talk("u");
  Join("s", "p");
  Step();
  Done first, second;
  // Asked while the target has taken p and the source has not heard yet.
  sink_.on_transfer = [&](std::string_view, const MovedTo&) {
    host_->Transfer({"s", "p", "u"}, second.Callback());
  };
  host_->Transfer({"s", "p", "t"}, first.Callback());
  Pass(6);
  ASSERT_TRUE(first.result && second.result);
  EXPECT_TRUE(first.result->ok());
  EXPECT_EQ(second.result->error, TransferError::kBusy);
}

TEST_F(TalkHostTest, TargetStoppingWithArrivalsQueued) {
  StartHost();
  Talk("s");
  Talk("t");
  Join("s", "p");
  Step();
  Done done;
  host_->Transfer({"s", "p", "t"}, done.Callback());
  Pass();  // p is out of s; its arrival waits in t's mailbox
  ASSERT_TRUE(host_->Stop("t").ok());
  Pass(4);
  ASSERT_TRUE(done.result.has_value());
  EXPECT_EQ(done.result->error, TransferError::kNotFound);
  EXPECT_THAT(done.result->message, HasSubstr("stopped"));
  Step();
  EXPECT_TRUE(Players("s").contains("p"));
  EXPECT_THAT(Rows(), IsEmpty());
}

TEST_F(TalkHostTest, ARefusedReturnIsLoggedAndTheRowStillGoesBack) {
  StartHost();
  Talk("s", {{"refuse_return", true}});
  Talk("t", {{"refuse", "no"}});
  Join("s", "p");
  Step();
  EXPECT_EQ(Move({"s", "p", "t"}).error, TransferError::kRefused);
  EXPECT_TRUE(
      Logged("refused its returning player \"p\" (a module bug): "
             "refusing the return"));
  EXPECT_THAT(journal_.lines(),
              ElementsAre("begin s p>t", "advance s out>back", "delete 1"));
}

TEST_F(TalkHostTest, AJournalErrorPutsThePlayerBack) {
  StartHost();
  Talk("s");
  Talk("t");
  Join("s", "p");
  Step();
  journal_.FailNext();
  TransferResult r = Move({"s", "p", "t"});
  EXPECT_EQ(r.error, TransferError::kFailed);
  EXPECT_THAT(r.message, HasSubstr("disk on fire"));
  EXPECT_TRUE(Players("s").contains("p"));
  EXPECT_FALSE(Players("t").contains("p"));
}

// Real workers: twenty players cross back and forth at once while both
// shards tick; every move ends once, in exactly one shard.
TEST_F(TalkHostTest, ConcurrentMovesOnRealWorkers) {
  HostOptions options;
  options.workers = 2;
  options.journal = &store_;
  options.wall_clock = &wall_;
  ShardHost host(&kinds_, &sink_, &store_, options);
  ASSERT_TRUE(host.Create("talk", "a", Msgpack(json::object())).ok());
  ASSERT_TRUE(host.Create("talk", "b", Msgpack(json::object())).ok());
  constexpr int kPlayers = 20;
  for (int i = 0; i < kPlayers; ++i) {
    ASSERT_TRUE(host.SubmitInput("a", "p" + std::to_string(i), ++seq_,
                                 Msgpack({{"join", json::object()}}))
                    .ok());
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto wait_players = [&](const std::string& id, size_t n) {
    while (Players(id).size() != n &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Players(id).size();
  };
  ASSERT_EQ(wait_players("a", kPlayers), size_t{kPlayers});
  std::mutex mu;
  std::condition_variable cv;
  int answered = 0, moved = 0;
  for (int round = 0; round < 6; ++round) {
    const std::string from = round % 2 == 0 ? "a" : "b";
    const std::string to = round % 2 == 0 ? "b" : "a";
    for (int i = 0; i < kPlayers; ++i) {
      host.Transfer({from, "p" + std::to_string(i), to}, [&](TransferResult r) {
        std::lock_guard<std::mutex> lock(mu);
        ++answered;
        if (r.ok()) ++moved;
        cv.notify_all();
      });
    }
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_until(
        lock, deadline, [&] { return answered == (round + 1) * kPlayers; }));
  }
  EXPECT_EQ(moved, 6 * kPlayers);
  EXPECT_EQ(host.talk_counters().transfers[0], 6u * kPlayers);
  EXPECT_EQ(wait_players("a", kPlayers), size_t{kPlayers});
  EXPECT_EQ(wait_players("b", 0), 0u);
  // One redirect record (a kIn row) per player: from b, where it left last.
  auto rows = Rows();
  EXPECT_EQ(rows.size(), size_t{kPlayers});
  for (const auto& row : rows) {
    EXPECT_EQ(row.step, TransferStep::kIn);
    EXPECT_EQ(row.from_shard, "b");
  }
  host.Shutdown();
}

// ---- Recovery ---------------------------------------------------------------

TEST_F(TalkHostTest, RestoreTakesBackThePlayersOfUnfinishedMoves) {
  StartHost();
  Talk("s");
  Talk("t");
  Join("s", "p");
  Step();
  ASSERT_TRUE(Input("s", "p", {{"step", json::object()}}).ok());
  Step();
  Done done;
  host_->Transfer({"s", "p", "t"}, done.Callback());
  Pass();  // the row is kOut, s saved without p; t never runs again
  host_->Shutdown();
  ASSERT_TRUE(done.result.has_value());
  EXPECT_EQ(done.result->error, TransferError::kFailed);
  ASSERT_EQ(Rows().size(), 1u);
  EXPECT_EQ(Rows()[0].step, TransferStep::kOut);

  // The next boot: s takes p back before anything runs.
  StartHost();
  ASSERT_TRUE(host_->Restore("talk", "s", Msgpack(json::object())).ok());
  ASSERT_TRUE(host_->Restore("talk", "t", Msgpack(json::object())).ok());
  ASSERT_TRUE(host_->RecoverTransfers().ok());
  Step();
  ASSERT_TRUE(Players("s").contains("p"));
  EXPECT_EQ(Players("s")["p"]["n"], 1);
  EXPECT_FALSE(Players("t").contains("p"));
  EXPECT_THAT(Rows(), IsEmpty());
  EXPECT_TRUE(Logged("did not finish; the player is back in \"s\""));
}

TEST_F(TalkHostTest, RecoverTransfersKeepsYoungMovesAndDropsTheRest) {
  auto record = [](std::string id, std::string from, std::string sub) {
    TransferRecord r;
    r.id = std::move(id);
    r.from_shard = std::move(from);
    r.to_shard = "t";
    r.subscriber = std::move(sub);
    r.state = Msgpack({{"n", 0}});
    return r;
  };
  std::vector<TransferRecord> rows = {record("1", "s", "in"),
                                      record("2", "s", "back"),
                                      record("3", "gone", "out")};
  ASSERT_TRUE(store_.BeginTransfers(std::span(rows).first(2), "s", {}).ok());
  ASSERT_TRUE(store_.BeginTransfers(std::span(rows).last(1), "gone", {}).ok());
  std::vector<TransferAdvance> in = {
      {"1", TransferStep::kOut, TransferStep::kIn}};
  std::vector<TransferAdvance> back = {
      {"2", TransferStep::kOut, TransferStep::kBack}};
  ASSERT_TRUE(store_.AdvanceTransfers(in, "t", {}).ok());
  ASSERT_TRUE(store_.AdvanceTransfers(back, "s", {}).ok());

  StartHost();
  Talk("s");
  ASSERT_TRUE(host_->RecoverTransfers().ok());
  ASSERT_TRUE(host_->FindMove("s", "in").has_value());
  EXPECT_EQ(host_->FindMove("s", "in")->to, "t");
  auto left = Rows();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].id, "1");
  EXPECT_TRUE(
      Logged("dropped the unfinished move of \"out\" from shard "
             "\"gone\" to shard \"t\""));

  // A boot after the record time drops the kIn row too.
  host_->Shutdown();
  wall_.Advance(kMovedRecordSecs * 1'000'000);
  StartHost();
  ASSERT_TRUE(host_->RecoverTransfers().ok());
  EXPECT_FALSE(host_->FindMove("s", "in").has_value());
  EXPECT_THAT(Rows(), IsEmpty());
}

// ---- Fault points: each is hit at its step of the flow --------------------

class TalkFaultTest : public TalkHostTest,
                      public ::testing::WithParamInterface<const char*> {};

TEST_P(TalkFaultTest, KilledAtThePoint) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string point = GetParam();
  // The journal's calls go to a file the death test's child (which runs
  // this test again from the start) inherits through the environment.
  constexpr char kLogEnv[] = "TESSERA_TALK_FAULT_LOG";
  if (getenv(kLogEnv) == nullptr) {
    char made[] = "/tmp/talk_fault_XXXXXX";
    const int fd = mkstemp(made);
    ASSERT_GE(fd, 0);
    close(fd);
    setenv(kLogEnv, made, 1);
  }
  const std::string path = getenv(kLogEnv);
  setenv(kFaultPointEnv, point.c_str(), 1);
  EXPECT_EXIT(
      {
        journal_.fd = open(path.c_str(), O_WRONLY | O_APPEND);
        StartHost();
        Talk("s");
        Talk("t");
        Join("s", "p");
        Step();
        host_->Transfer({"s", "p", "t"}, [](TransferResult) {});
        Pass(6);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "fault point " + point);
  unsetenv(kFaultPointEnv);
  unsetenv(kLogEnv);
  std::ifstream in(path);
  std::stringstream written;
  written << in.rdbuf();
  unlink(path.c_str());
  const std::map<std::string, std::string> expected = {
      {"transfer.before_out", ""},
      {"transfer.after_out", "begin s p>t\n"},
      {"transfer.after_in_call", "begin s p>t\n"},
      {"transfer.after_in", "begin s p>t\nadvance t out>in\n"}};
  EXPECT_EQ(written.str(), expected.at(point));
}

INSTANTIATE_TEST_SUITE_P(Points, TalkFaultTest,
                         ::testing::Values("transfer.before_out",
                                           "transfer.after_out",
                                           "transfer.after_in_call",
                                           "transfer.after_in"));

}  // namespace
}  // namespace tessera::shard::talk_testing
