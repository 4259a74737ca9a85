// ShardHost: moves of players between `talk` shards (module-started and
// admin), every refusal path, the journal's rows at each step, recovery at
// boot, fault points, and messages between shards with their limits.
// Manual host (workers = 0) on a FakeClock and a FakeWallClock.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/fault_point.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using json = nlohmann::json;

constexpr int64_t kTickUs = 50'000;
constexpr int64_t kWallStartUs = 1'700'000'000'000'000;

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
    return sink_.Snapshot(id).value("players", json::object());
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

// ---- Messages ---------------------------------------------------------------

json Inbox(const json& snapshot) {
  return snapshot.value("inbox", json::array());
}

TEST_F(TalkHostTest, ShardGroupAndAllRouting) {
  StartHost();
  Talk("a", {{"groups", {"world"}}});
  Talk("b", {{"groups", {"world", "north"}}});
  Talk("c");
  ASSERT_TRUE(host_->Create("counter", "mute", Msgpack({{"start", 0}})).ok());
  auto send = [&](const std::string& from, const std::string& kind,
                  const std::string& to, const std::string& data) {
    ASSERT_TRUE(
        Input(from, "x",
              {{"send",
                {{"kind", kind}, {"to", to}, {"topic", "t"}, {"data", data}}}})
            .ok());
  };
  send("a", "shard", "c", "to-c");
  send("a", "group", "world", "to-world");
  send("c", "all", "", "to-all");
  Step(3);
  EXPECT_EQ(Inbox(sink_.Snapshot("c")), json::parse(R"([["a","t","to-c"]])"));
  EXPECT_EQ(Inbox(sink_.Snapshot("b")),
            json::parse(R"([["a","t","to-world"],["c","t","to-all"]])"));
  // Not its own group message; the All from c.
  EXPECT_EQ(Inbox(sink_.Snapshot("a")), json::parse(R"([["c","t","to-all"]])"));
  auto counters = host_->talk_counters();
  EXPECT_EQ(counters.messages_sent, 3u);
  EXPECT_EQ(counters.messages_delivered, 4u);

  send("a", "shard", "nope", "x");
  send("a", "shard", "mute", "x");
  Step(2);
  counters = host_->talk_counters();
  EXPECT_EQ(
      counters.messages_refused[static_cast<int>(MessageRefusal::kNotFound)],
      1u);
  EXPECT_EQ(
      counters.messages_refused[static_cast<int>(MessageRefusal::kNoHandler)],
      1u);
  EXPECT_TRUE(
      Logged("message from shard \"a\" to \"nope\" topic \"t\" "
             "refused: not_found"));
}

TEST_F(TalkHostTest, OrderPerSenderAndTarget) {
  StartHost();
  Talk("a");
  Talk("b");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        Input("a", "x",
              {{"burst",
                {{"kind", "shard"}, {"to", "b"}, {"count", 20}, {"bytes", 8}}}})
            .ok());
    Step();
  }
  Step(3);
  json inbox = Inbox(sink_.Snapshot("b"));
  ASSERT_EQ(inbox.size(), 60u);
  for (int i = 0; i < 60; ++i) {
    std::string want = "i:" + std::to_string(i % 20);
    want.resize(8, '.');
    EXPECT_EQ(inbox[i][2], want) << i;
  }
}

TEST_F(TalkHostTest, LimitsTopicSizeRateInboxAndAppliedPerTick) {
  HostOptions options;
  options.max_inbox_messages = 10;
  options.max_messages_applied_per_tick = 4;
  StartHost(options);
  Talk("a");
  Talk("b");
  auto count = [&](MessageRefusal r) {
    return host_->talk_counters().messages_refused[static_cast<int>(r)];
  };
  ASSERT_TRUE(
      Input("a", "x",
            {{"send",
              {{"kind", "shard"}, {"to", "b"}, {"topic", ""}, {"data", "x"}}}})
          .ok());
  ASSERT_TRUE(Input("a", "x",
                    {{"send",
                      {{"kind", "shard"},
                       {"to", "b"},
                       {"topic", std::string(129, 't')},
                       {"data", "x"}}}})
                  .ok());
  ASSERT_TRUE(Input("a", "x",
                    {{"burst",
                      {{"kind", "shard"},
                       {"to", "b"},
                       {"count", 1},
                       {"bytes", abi::kMaxMessageDataBytes + 1}}}})
                  .ok());
  Step(2);
  EXPECT_EQ(count(MessageRefusal::kTopic), 2u);
  EXPECT_EQ(count(MessageRefusal::kTooBig), 1u);
  // 70 in one tick: 64 leave (10 fit b's inbox), 6 over the rate.
  ASSERT_TRUE(
      Input("a", "x",
            {{"burst",
              {{"kind", "shard"}, {"to", "b"}, {"count", 70}, {"bytes", 4}}}})
          .ok());
  std::vector<uint64_t> received;
  sink_.on_frame = [&](std::string_view shard, std::string_view snapshot) {
    if (shard == "b") received.push_back(FromMsgpack(snapshot)["received"]);
  };
  Step(6);
  EXPECT_EQ(count(MessageRefusal::kRate), 6u);
  EXPECT_EQ(count(MessageRefusal::kInboxFull), 54u);
  ASSERT_FALSE(received.empty());
  EXPECT_EQ(received.back(), 10u);
  // At most 4 a tick, the rest kept for the next ticks.
  size_t ticks_with_messages = 0;
  for (size_t i = 1; i < received.size(); ++i) {
    EXPECT_LE(received[i] - received[i - 1], 4u);
    if (received[i] > received[i - 1]) ++ticks_with_messages;
  }
  EXPECT_GE(ticks_with_messages + (received[0] > 0 ? 1 : 0), 3u);
  // One line a second per sender, with the count held back.
  size_t lines = 0;
  for (const auto& line : Log()) {
    if (line.find("refused: ") != std::string::npos) ++lines;
  }
  EXPECT_LT(lines, 10u);
  Step(25);
  ASSERT_TRUE(Input("a", "x",
                    {{"send",
                      {{"kind", "shard"},
                       {"to", "nope"},
                       {"topic", "late"},
                       {"data", "x"}}}})
                  .ok());
  Step(2);
  EXPECT_TRUE(Logged("topic \"late\" refused: not_found ("));
  EXPECT_TRUE(Logged("more refusal lines held back"));
}

TEST_F(TalkHostTest, PublishAndAStoppedShardsInbox) {
  StartHost();
  Talk("a", {{"groups", {"g"}}});
  Talk("b", {{"groups", {"g"}}});
  auto published = host_->Publish({TargetKind::kGroup, "g"}, "news", "hi");
  ASSERT_TRUE(published.ok());
  EXPECT_EQ(published->delivered, 2u);
  EXPECT_EQ(published->refused, 0u);
  published = host_->Publish({TargetKind::kShard, "nope"}, "news", "hi");
  ASSERT_TRUE(published.ok());
  EXPECT_EQ(published->refused, 1u);
  EXPECT_EQ(host_->Publish({TargetKind::kAll, ""}, "", "x").status().code(),
            StatusCode::kInvalidArgument);
  Step();
  EXPECT_EQ(Inbox(sink_.Snapshot("a")), json::parse(R"([["","news","hi"]])"));

  // Queued for b, which stops before its next tick: counted "stopped".
  ASSERT_TRUE(host_->Publish({TargetKind::kShard, "b"}, "n", "1").ok());
  ASSERT_TRUE(host_->Publish({TargetKind::kShard, "b"}, "n", "2").ok());
  ASSERT_TRUE(host_->Stop("b").ok());
  Pass();
  EXPECT_EQ(host_->talk_counters()
                .messages_refused[static_cast<int>(MessageRefusal::kStopped)],
            2u);
  EXPECT_TRUE(Logged("2 messages queued for shard \"b\" refused: stopped"));
  auto after = host_->Publish({TargetKind::kShard, "b"}, "n", "3");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->refused, 1u);  // not running: not_found
  EXPECT_THAT(host_->Publish({TargetKind::kGroup, "g"}, "n", "4")->delivered,
              1u);
}

}  // namespace
}  // namespace tessera::shard
