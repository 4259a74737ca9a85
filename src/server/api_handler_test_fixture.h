// The fixture of the ApiHandler tests (api_handler_*test.cc): ApiHandler
// over a real ShardHost (workers = 0, FakeClock, StepForTest) running the
// counter test guest, with an in-memory store, a fake Connections and a fake
// onStop receiver, wired as AppServer wires them.
#ifndef TESSERA_SERVER_API_HANDLER_TEST_FIXTURE_H_
#define TESSERA_SERVER_API_HANDLER_TEST_FIXTURE_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "net/ticket.h"
#include "server/api_handler.h"
#include "server/host_metrics.h"
#include "server/shard_directory.h"
#include "server/stop_notices.h"
#include "server/stop_notifier.h"
#include "server/test_fakes.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::server::api_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;
using shard::testing::FromMsgpack;
using shard::testing::Msgpack;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

inline constexpr char kToken[] = "admin-token-123";
inline constexpr char kSecret[] = "ticket-secret-xyz";
inline constexpr int64_t kNowUnix = 1'800'000'000;
inline constexpr char kHook[] = "http://hooks.test/stopped";

// Frames and stops that reach the network layer.
class RecordingSink final : public shard::ShardSink {
 public:
  struct Frame {
    std::string shard;
    uint64_t tick;
    std::string snapshot;
    std::vector<shard::InputResult> inputs;
  };
  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<shard::InputResult>& inputs) override {
    std::lock_guard<std::mutex> lock(mu_);
    frames_.push_back(
        Frame{std::string(shard_id), tick, std::string(snapshot), inputs});
  }
  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view) override {
    std::lock_guard<std::mutex> lock(mu_);
    stops_.emplace_back(std::string(shard_id), reason);
  }
  std::vector<Frame> frames() {
    std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  std::vector<std::pair<std::string, shard::StopReason>> stops() {
    std::lock_guard<std::mutex> lock(mu_);
    return stops_;
  }

 private:
  std::mutex mu_;
  std::vector<Frame> frames_;
  std::vector<std::pair<std::string, shard::StopReason>> stops_;
};

// A scratch directory removed at the end.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("tessera_server_test_" + std::to_string(getpid()) + "_" +
             std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class ApiHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TESSERA_LOAD_GUEST(counter, "counter", 64);
    shard::KindConfig kind;
    kind.name = "counter";
    kind.on_stop = kHook;
    kind.idle_shutdown_secs = 0;
    ASSERT_TRUE(kinds_.Add(kind, counter).ok());
    kind.name = "counter-json";
    kind.codec = shard::Codec::kJson;
    kind.on_stop = "";
    ASSERT_TRUE(kinds_.Add(kind, counter).ok());

    NotifierOptions notifier_options;
    notifier_options.initial_backoff_ms = 1;
    notifier_options.post = [this](const std::string& url,
                                   const std::string& body) -> Result<int> {
      std::lock_guard<std::mutex> lock(posts_mu_);
      posts_.emplace_back(url, body);
      return 204;
    };
    notifier_options.log = [](const std::string&) {};
    notifier_ = std::make_unique<StopNotifier>(notifier_options);
    notifier_->Start();
    // Wired as AppServer (ShardService) wires them.
    shard_metrics_ = std::make_unique<ShardEventMetrics>(&metrics_);
    observers_.Add(&sink_);

    shard::HostOptions host_options;
    host_options.workers = 0;
    host_options.clock = &clock_;
    host_options.save_interval_us = 0;
    host_options.stopped_retention_us = 1'000'000;
    host_options.failed_retention_us = kFailedRetentionUs;
    host_options.on_tick = [this](std::string_view,
                                  const shard::TickEvent& tick) {
      shard_metrics_->OnTick(tick.fuel_used, tick.overrun);
    };
    host_options.on_transfer = [this](const shard::TransferResult& result,
                                      int64_t duration_us) {
      shard_metrics_->OnTransfer(result, duration_us);
    };
    host_ = std::make_unique<shard::ShardHost>(&kinds_, &observers_, &store_,
                                               host_options);
    DirectoryOptions directory_options;
    directory_options.capacity = 3;
    directory_options.wall_clock = &wall_clock_;
    directory_options.log = [](const std::string&) {};
    directory_ = std::make_unique<ShardDirectory>(host_.get(), &kinds_, &store_,
                                                  directory_options);
    forget_ = std::make_unique<ForgetStopped>(*directory_);
    notices_ = std::make_unique<StopNotices>(*host_, kinds_, *notifier_);
    stop_log_ = std::make_unique<StopLog>(
        *host_,
        [this](const std::string& line) {
          std::lock_guard<std::mutex> lock(log_mu_);
          log_.push_back(line);
        },
        shard_metrics_.get());
    observers_.Add(forget_.get());
    observers_.Add(notices_.get());
    observers_.Add(stop_log_.get());

    const fs::path web = temp_.path() / "web";
    WriteFile(web / "index.html", "<h1>arena</h1>");
    WriteFile(web / "app.js", "console.log(1)");
    WriteFile(web / "sub" / "index.html", "sub index");
    WriteFile(web / "Logo.PNG", "png");
    WriteFile(temp_.path() / "secret.txt", "top secret");
    fs::create_symlink(temp_.path() / "secret.txt", web / "escape.txt");

    handler_ = MakeHandler(/*dev_join=*/true);
  }

  void TearDown() override {
    if (notifier_) notifier_->Stop();
  }

  std::unique_ptr<ApiHandler> MakeHandler(bool dev_join) {
    ApiOptions options;
    options.admin_token = kToken;
    options.ticket_secret = kSecret;
    options.dev_join = dev_join;
    options.web_dir = temp_.path() / "web";
    options.wall_clock = &wall_clock_;
    return std::make_unique<ApiHandler>(options, directory_.get(), &metrics_,
                                        &connections_);
  }

  HttpResponse Call(const std::string& method, const std::string& target,
                    const std::string& body = "", const char* token = kToken) {
    HttpRequest request;
    request.method = method;
    request.target = target;
    request.body = body;
    request.remote_address = "127.0.0.1";
    if (token != nullptr) {
      request.headers["authorization"] = std::string("Bearer ") + token;
    }
    return handler_->Handle(request);
  }

  static json Body(const HttpResponse& response) {
    json value = json::parse(response.body, nullptr, false);
    EXPECT_FALSE(value.is_discarded()) << response.body;
    return value;
  }

  // Asserts a JSON error with this status and code.
  static void ExpectError(const HttpResponse& r, int status,
                          const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    json body = Body(r);
    EXPECT_EQ(body.value("code", ""), code) << r.body;
    EXPECT_TRUE(body.contains("message") && body["message"].is_string() &&
                !body["message"].get<std::string>().empty())
        << r.body;
  }

  void CreateCounter(const std::string& id, int start = 0) {
    HttpResponse r = Call(
        "POST", "/api/shards",
        json{{"kind", "counter"}, {"id", id}, {"params", {{"start", start}}}}
            .dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  void StepTo(int64_t t) {
    clock_.Set(t);
    host_->StepForTest(t);
  }

  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  // The posts once there are `n` (or after 30 s, whatever came).
  std::vector<std::pair<std::string, std::string>> WaitForPosts(size_t n) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(posts_mu_);
        if (posts_.size() >= n) return posts_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::lock_guard<std::mutex> lock(posts_mu_);
    return posts_;
  }

  TempDir temp_;
  FakeClock clock_{0};
  FakeWallClock wall_clock_{kNowUnix * 1'000'000};  // tickets, records
  shard::KindRegistry kinds_;
  testing::MemoryStore store_;
  testing::FakeConnections connections_;
  RecordingSink sink_;
  Metrics metrics_;
  std::unique_ptr<ShardEventMetrics> shard_metrics_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::mutex posts_mu_;
  std::vector<std::pair<std::string, std::string>> posts_;
  std::unique_ptr<StopNotifier> notifier_;
  shard::ShardObservers observers_;
  std::unique_ptr<shard::ShardHost> host_;
  std::unique_ptr<ShardDirectory> directory_;
  std::unique_ptr<ForgetStopped> forget_;
  std::unique_ptr<StopNotices> notices_;
  std::unique_ptr<StopLog> stop_log_;
  std::unique_ptr<ApiHandler> handler_;
};

}  // namespace tessera::server::api_test

#endif  // TESSERA_SERVER_API_HANDLER_TEST_FIXTURE_H_
