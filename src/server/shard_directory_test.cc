// ShardDirectory: recording, forgetting and restoring shards against a
// real ShardHost (workers = 0) and an in-memory store.
#include "server/shard_directory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "server/api_handler.h"
#include "server/stop_notices.h"
#include "server/test_fakes.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::server {
namespace {

using json = nlohmann::json;
using shard::testing::FromMsgpack;
using shard::testing::Msgpack;
using ::testing::HasSubstr;

// Keeps the last snapshot of every shard.
class SnapshotSink final : public shard::ShardSink {
 public:
  void OnFrame(std::string_view shard_id, uint64_t, std::string_view snapshot,
               const std::vector<shard::InputResult>&) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_[std::string(shard_id)] = std::string(snapshot);
  }
  void OnStopped(std::string_view, shard::StopReason,
                 std::string_view) override {}
  json Last(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    return FromMsgpack(last_[id]);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> last_;
};

class ShardDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TESSERA_LOAD_GUEST(counter, "counter", 64);
    shard::KindConfig kind;
    kind.name = "counter";
    kind.idle_shutdown_secs = 1;
    ASSERT_TRUE(kinds_.Add(kind, counter).ok());
    TESSERA_LOAD_GUEST(bad, "badrestore", 64);
    kind.name = "badrestore";
    ASSERT_TRUE(kinds_.Add(kind, bad).ok());
    Start();
  }

  // A fresh host and directory over the same store (a restart).
  void Start() {
    directory_.reset();
    host_.reset();
    forget_.reset();
    sink_ = std::make_unique<shard::ShardObservers>();
    sink_->Add(&snapshots_);
    shard::HostOptions options;
    options.workers = 0;
    options.clock = &clock_;
    options.save_interval_us = 0;
    host_ = std::make_unique<shard::ShardHost>(&kinds_, sink_.get(), &store_,
                                               options);
    DirectoryOptions directory_options;
    directory_options.log = [](const std::string&) {};
    directory_ = std::make_unique<ShardDirectory>(host_.get(), &kinds_, &store_,
                                                  directory_options);
    forget_ = std::make_unique<ForgetStopped>(*directory_);
    sink_->Add(forget_.get());
  }

  void StepTo(int64_t t) {
    clock_.Set(t);
    host_->StepForTest(t);
  }

  void Record(const std::string& id, const std::string& kind,
              const std::string& params) {
    store::ShardRecord r;
    r.id = id;
    r.kind = kind;
    r.params = params;
    r.status = kRecordRunning;
    ASSERT_TRUE(store_.PutShard(r).ok());
  }

  FakeClock clock_{0};
  shard::KindRegistry kinds_;
  testing::MemoryStore store_;
  SnapshotSink snapshots_;
  std::unique_ptr<shard::ShardObservers> sink_;
  std::unique_ptr<shard::ShardHost> host_;
  std::unique_ptr<ShardDirectory> directory_;
  std::unique_ptr<ForgetStopped> forget_;
};

TEST_F(ShardDirectoryTest, ARestartResumesFromTheSave) {
  ASSERT_TRUE(
      directory_->Create("counter", "c1", Msgpack({{"start", 1}})).ok());
  ASSERT_TRUE(host_->AddSubscriber("c1", "alice").ok());
  ASSERT_TRUE(
      host_->SubmitInput("c1", "alice", 1, Msgpack({{"add", {{"n", 4}}}}))
          .ok());
  StepTo(50'000);
  EXPECT_EQ(snapshots_.Last("c1")["value"], 5);
  host_->Shutdown();  // SIGTERM: saves, does not stop
  EXPECT_TRUE(store_.HasState("c1"));
  ASSERT_TRUE(store_.Record("c1").has_value());

  Start();
  std::vector<std::string> lines;
  Result<RestoreReport> report = directory_->RestoreAll(
      [&](const std::string& line) { lines.push_back(line); });
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->restored, 1u);
  EXPECT_EQ(report->created, 0u);
  EXPECT_EQ(report->failed, 0u);
  EXPECT_TRUE(lines.empty());
  StepTo(100'000);
  EXPECT_EQ(snapshots_.Last("c1")["value"], 5);
  EXPECT_EQ(snapshots_.Last("c1")["ticks"], 2);
}

TEST_F(ShardDirectoryTest, WithoutASaveARecordStartsFromInitWithItsParams) {
  Record("fresh", "counter", Msgpack({{"start", 9}}));
  Result<RestoreReport> report = directory_->RestoreAll(nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->created, 1u);
  StepTo(50'000);
  EXPECT_EQ(snapshots_.Last("fresh")["value"], 9);
  EXPECT_EQ(snapshots_.Last("fresh")["ticks"], 1);
}

TEST_F(ShardDirectoryTest, ARefusedRestoreKeepsTheStateUntilStopped) {
  ASSERT_NE(kinds_.Find("badrestore"), nullptr);
  Record("bad", "badrestore", "");
  ASSERT_TRUE(store_.Save("bad", "ticks=3").ok());
  Record("gone", "removed-kind", "");
  std::vector<std::string> lines;
  Result<RestoreReport> report = directory_->RestoreAll(
      [&](const std::string& line) { lines.push_back(line); });
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->failed, 2u);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("state is corrupt"));
  EXPECT_THAT(lines[1], HasSubstr("unknown shard kind \"removed-kind\""));

  std::optional<store::ShardRecord> bad = store_.Record("bad");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, kRecordFailed);
  EXPECT_THAT(bad->error, HasSubstr("state is corrupt"));
  EXPECT_TRUE(store_.HasState("bad"));  // kept
  EXPECT_EQ(directory_->FailedRecords().size(), 2u);

  // The admin API says why, also after the host forgot it.
  Metrics metrics;
  ApiOptions options;
  options.admin_token = "t";
  ApiHandler api(options, directory_.get(), &metrics, nullptr);
  net::HttpRequest get;
  get.method = "GET";
  get.target = "/api/shards/bad";
  get.headers["authorization"] = "Bearer t";
  for (int64_t t : {int64_t{0}, int64_t{60'000'000}}) {
    StepTo(t);
    net::HttpResponse r = api.Handle(get);
    ASSERT_EQ(r.status, 200) << r.body;
    json detail = json::parse(r.body);
    EXPECT_EQ(detail["status"], "failed");
    EXPECT_EQ(detail["stop_reason"], "failed");
    EXPECT_THAT(detail["last_error"].get<std::string>(),
                HasSubstr("state is corrupt"));
  }
  get.target = "/api/shards";
  json list = json::parse(api.Handle(get).body);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["status"], "failed");
  EXPECT_EQ(list[1]["status"], "failed");

  // Creating over it is refused; stopping it forgets it, state included.
  EXPECT_EQ(directory_->Create("badrestore", "bad", "").code(),
            StatusCode::kAlreadyExists);
  ASSERT_TRUE(directory_->Stop("bad").ok());
  EXPECT_FALSE(store_.Record("bad").has_value());
  EXPECT_FALSE(store_.HasState("bad"));
  EXPECT_FALSE(directory_->FailedRecord("bad").has_value());
  EXPECT_TRUE(directory_->Create("badrestore", "bad", "").ok());
  ASSERT_TRUE(directory_->Stop("gone").ok());
  EXPECT_EQ(directory_->Stop("gone").code(), StatusCode::kNotFound);
  EXPECT_TRUE(directory_->FailedRecords().empty());
}

TEST_F(ShardDirectoryTest, AFailedRecordIsRetriedAtTheNextStart) {
  store::ShardRecord r;
  r.id = "c1";
  r.kind = "counter";
  r.status = kRecordFailed;
  r.error = "an old failure";
  ASSERT_TRUE(store_.PutShard(r).ok());
  Result<RestoreReport> report = directory_->RestoreAll(nullptr);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->created, 1u);
  EXPECT_EQ(store_.Record("c1")->status, kRecordRunning);
  EXPECT_EQ(store_.Record("c1")->error, "");
}

TEST_F(ShardDirectoryTest, IdleShardsAreForgotten) {
  ASSERT_TRUE(directory_->Create("counter", "c1", "").ok());
  StepTo(500'000);
  EXPECT_TRUE(store_.Record("c1").has_value());
  StepTo(1'000'000);
  EXPECT_EQ(host_->Get("c1")->stop_reason, shard::StopReason::kIdle);
  EXPECT_FALSE(store_.Record("c1").has_value());
}

TEST_F(ShardDirectoryTest, ALateStopNoticeKeepsANewerShardsRecord) {
  ASSERT_TRUE(directory_->Create("counter", "c1", "").ok());
  ASSERT_TRUE(host_->Stop("c1").ok());
  StepTo(10'000);
  EXPECT_FALSE(store_.Record("c1").has_value());
  ASSERT_TRUE(directory_->Create("counter", "c1", "").ok());
  directory_->OnStopped("c1");  // the old shard's notice, late
  EXPECT_TRUE(store_.Record("c1").has_value());
}

TEST_F(ShardDirectoryTest, CapacityCountsLiveShardsOnly) {
  DirectoryOptions options;
  options.capacity = 1;
  ShardDirectory directory(host_.get(), &kinds_, &store_, options);
  ASSERT_TRUE(directory.Create("counter", "a", "").ok());
  EXPECT_EQ(directory.Create("counter", "b", "").code(),
            StatusCode::kResourceExhausted);
  ASSERT_TRUE(directory.Stop("a").ok());
  StepTo(10'000);
  EXPECT_TRUE(directory.Create("counter", "b", "").ok());
  EXPECT_EQ(directory.ActiveCount(), 1u);
}

}  // namespace
}  // namespace tessera::server
