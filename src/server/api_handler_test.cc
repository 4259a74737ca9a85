// ApiHandler over a real ShardHost (workers = 0, FakeClock, StepForTest)
// running the counter test guest, with an in-memory store, a fake
// Connections and a fake onStop receiver: every route, auth failures,
// error shapes, static files (traversal included) and the metrics text.
#include "server/api_handler.h"

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
#include "server/host_metrics.h"
#include "server/shard_directory.h"
#include "server/stop_notices.h"
#include "server/stop_notifier.h"
#include "server/test_fakes.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"

namespace tessera::server {
namespace {

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

constexpr char kToken[] = "admin-token-123";
constexpr char kSecret[] = "ticket-secret-xyz";
constexpr int64_t kNowUnix = 1'800'000'000;
constexpr char kHook[] = "http://hooks.test/stopped";

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

void WriteFile(const fs::path& path, const std::string& text) {
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
    host_options.on_tick = [this](std::string_view, int64_t, int64_t,
                                  int64_t fuel_used) {
      shard_metrics_->OnTick(fuel_used);
    };
    host_ = std::make_unique<shard::ShardHost>(&kinds_, &observers_, &store_,
                                               host_options);
    DirectoryOptions directory_options;
    directory_options.capacity = 3;
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
    options.unix_now = [] { return kNowUnix; };
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

TEST_F(ApiHandlerTest, Healthz) {
  HttpResponse r = Call("GET", "/healthz", "", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Body(r), json({{"status", "ok"}}));
  r = Call("POST", "/healthz", "", nullptr);
  ExpectError(r, 405, "method_not_allowed");
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0],
            std::make_pair(std::string("Allow"), std::string("GET")));
}

TEST_F(ApiHandlerTest, AdminRoutesNeedTheBearerToken) {
  const std::vector<std::pair<std::string, std::string>> routes = {
      {"GET", "/api/shards"},
      {"POST", "/api/shards"},
      {"GET", "/api/shards/c1"},
      {"POST", "/api/shards/c1/kick"},
      {"POST", "/api/shards/c1/stop"},
      {"POST", "/api/shards/c1/tickets"},
      {"POST", "/api/shards/c1/inputs"},
  };
  for (const auto& [method, target] : routes) {
    SCOPED_TRACE(method + " " + target);
    HttpResponse r = Call(method, target, "{}", nullptr);
    ExpectError(r, 401, "unauthorized");
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(r.headers[0].first, "WWW-Authenticate");
    ExpectError(Call(method, target, "{}", "wrong"), 401, "unauthorized");
    // A prefix of the token, and the token with something appended.
    ExpectError(Call(method, target, "{}", "admin-token-12"), 401,
                "unauthorized");
    ExpectError(Call(method, target, "{}", "admin-token-1234"), 401,
                "unauthorized");
  }
  HttpRequest basic;
  basic.method = "GET";
  basic.target = "/api/shards";
  basic.headers["authorization"] = std::string("Basic ") + kToken;
  ExpectError(handler_->Handle(basic), 401, "unauthorized");
  basic.headers["authorization"] = std::string("bearer ") + kToken;
  EXPECT_EQ(handler_->Handle(basic).status, 200);  // scheme is case-blind
}

TEST_F(ApiHandlerTest, AnEmptyAdminTokenAdmitsNobody) {
  ApiOptions options;
  options.ticket_secret = kSecret;
  ApiHandler handler(options, directory_.get(), &metrics_, &connections_);
  HttpRequest request;
  request.method = "GET";
  request.target = "/api/shards";
  request.headers["authorization"] = "Bearer ";
  ExpectError(handler.Handle(request), 401, "unauthorized");
}

TEST_F(ApiHandlerTest, CreateListAndDetail) {
  HttpResponse r = Call("POST", "/api/shards",
                        R"({"kind":"counter","id":"c1","params":{"start":5}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r), json({{"id", "c1"},
                           {"kind", "counter"},
                           {"status", "running"},
                           {"tick", 0},
                           {"subscribers", 0}}));
  // Recorded in the directory with the params in the kind's codec.
  std::optional<store::ShardRecord> record = store_.Record("c1");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->kind, "counter");
  EXPECT_EQ(record->status, "running");
  EXPECT_EQ(FromMsgpack(record->params), json({{"start", 5}}));

  StepTo(50'000);
  StepTo(100'000);
  ASSERT_TRUE(host_->AddSubscriber("c1", "alice").ok());
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "bob");

  r = Call("GET", "/api/shards");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r), json::parse(R"([{"id":"c1","kind":"counter",
      "status":"running","tick":2,"subscribers":1}])"));

  r = Call("GET", "/api/shards/c1");
  ASSERT_EQ(r.status, 200);
  json detail = Body(r);
  EXPECT_EQ(detail["id"], "c1");
  EXPECT_EQ(detail["tick"], 2);
  EXPECT_EQ(detail["subscriber_ids"], json({"alice", "bob"}));
  EXPECT_GT(detail["fuel_used"].get<int64_t>(), 0);
  EXPECT_EQ(detail["overruns"], 0);
  EXPECT_EQ(detail["queued_inputs"], 0);
  EXPECT_EQ(detail["stop_reason"], nullptr);
  EXPECT_EQ(detail["last_error"], nullptr);
  EXPECT_EQ(detail["limits"], json::parse(R"({"codec":"msgpack",
      "tick_rate":20,"tick_budget_ms":100,"memory_mb":64,
      "fuel_per_tick":200000000,"max_run_ms":200,"idle_shutdown_secs":0,
      "on_stop":"http://hooks.test/stopped"})"));

  ExpectError(Call("GET", "/api/shards/nope"), 404, "not_found");
}

TEST_F(ApiHandlerTest, CreateErrors) {
  CreateCounter("c1");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"counter","id":"c1"})"),
              409, "already_exists");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"nope","id":"c2"})"), 404,
              "unknown_kind");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"counter",)"), 400,
              "bad_json");
  ExpectError(Call("POST", "/api/shards", R"([1,2])"), 400, "bad_json");
  ExpectError(Call("POST", "/api/shards", R"({"id":"c2"})"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards", R"({"kind":7,"id":"c2"})"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards", R"({"kind":"counter"})"), 400,
              "invalid_argument");
  for (const char* bad : {"", "a/b", "a b", "../x", "é"}) {
    ExpectError(Call("POST", "/api/shards",
                     json{{"kind", "counter"}, {"id", bad}}.dump()),
                400, "invalid_argument");
  }
  ExpectError(
      Call("POST", "/api/shards",
           json{{"kind", "counter"}, {"id", std::string(129, 'a')}}.dump()),
      400, "invalid_argument");
  // The module refuses the params: its text comes back.
  HttpResponse r =
      Call("POST", "/api/shards",
           R"({"kind":"counter","id":"c2","params":{"start":"x"}})");
  ExpectError(r, 400, "invalid_argument");
  EXPECT_FALSE(host_->Get("c2").has_value());
  EXPECT_FALSE(store_.Record("c2").has_value());
}

TEST_F(ApiHandlerTest, CapacityIsA503) {
  CreateCounter("a");
  CreateCounter("b");
  CreateCounter("c");
  HttpResponse r =
      Call("POST", "/api/shards", R"({"kind":"counter","id":"d"})");
  ExpectError(r, 503, "capacity");
  EXPECT_THAT(Body(r)["message"].get<std::string>(), HasSubstr("3 shards"));
  // A stopped shard frees its place.
  ASSERT_EQ(Call("POST", "/api/shards/a/stop").status, 200);
  StepTo(1000);
  EXPECT_EQ(
      Call("POST", "/api/shards", R"({"kind":"counter","id":"d"})").status,
      201);
}

TEST_F(ApiHandlerTest, AStoreThatCannotRecordStopsTheShard) {
  store_.set_fail_writes(true);
  HttpResponse r =
      Call("POST", "/api/shards", R"({"kind":"counter","id":"c1"})");
  ExpectError(r, 500, "io");
  EXPECT_THAT(Body(r)["message"].get<std::string>(), HasSubstr("stopped"));
  StepTo(1000);
  EXPECT_EQ(host_->Get("c1")->status, shard::ShardStatus::kStopped);
}

TEST_F(ApiHandlerTest, JsonCodecKindAndServerInputs) {
  HttpResponse r =
      Call("POST", "/api/shards",
           R"({"kind":"counter-json","id":"j1","params":{"start":2}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(store_.Record("j1")->params, R"({"start":2})");

  r = Call("POST", "/api/shards/j1/inputs", R"({"input":{"add":{"n":3}}})");
  ASSERT_EQ(r.status, 202) << r.body;
  const uint64_t seq1 = Body(r)["seq"].get<uint64_t>();
  r = Call("POST", "/api/shards/j1/inputs", R"({"input":{"add":{"n":-1}}})");
  ASSERT_EQ(r.status, 202) << r.body;
  const uint64_t seq2 = Body(r)["seq"].get<uint64_t>();
  EXPECT_GT(seq2, seq1);
  EXPECT_EQ(host_->Get("j1")->queued_inputs, 2u);

  StepTo(50'000);
  std::vector<RecordingSink::Frame> frames = sink_.frames();
  ASSERT_EQ(frames.size(), 1u);
  ASSERT_EQ(frames[0].inputs.size(), 2u);
  EXPECT_EQ(frames[0].inputs[0].subscriber, "");  // the server side
  EXPECT_EQ(frames[0].inputs[0].seq, seq1);
  EXPECT_TRUE(frames[0].inputs[0].accepted);
  EXPECT_EQ(frames[0].inputs[1].seq, seq2);
  EXPECT_FALSE(frames[0].inputs[1].accepted);
  EXPECT_EQ(frames[0].inputs[1].rejection, "n must be positive");
  json snapshot = json::parse(frames[0].snapshot);  // JSON codec
  EXPECT_EQ(snapshot["value"], 5);
  EXPECT_EQ(snapshot["last_sid"], "");

  // Inputs to a msgpack kind are encoded as MessagePack.
  CreateCounter("m1", 1);
  ASSERT_EQ(
      Call("POST", "/api/shards/m1/inputs", R"({"input":{"add":{"n":4}}})")
          .status,
      202);
  StepTo(100'000);
  frames = sink_.frames();
  auto m1 = std::find_if(frames.begin(), frames.end(),
                         [](const auto& f) { return f.shard == "m1"; });
  ASSERT_NE(m1, frames.end());
  EXPECT_EQ(FromMsgpack(m1->snapshot)["value"], 5);
}

TEST_F(ApiHandlerTest, InputErrors) {
  CreateCounter("c1");
  ExpectError(Call("POST", "/api/shards/c1/inputs", "{}"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/inputs", "not json"), 400,
              "bad_json");
  ExpectError(Call("POST", "/api/shards/nope/inputs", R"({"input":1})"), 404,
              "not_found");
  ASSERT_TRUE(host_->Stop("c1").ok());
  StepTo(1000);
  ExpectError(Call("POST", "/api/shards/c1/inputs", R"({"input":1})"), 409,
              "stopped");
}

TEST_F(ApiHandlerTest, KickClosesTheSubscribersConnections) {
  CreateCounter("c1");
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "alice");
  connections_.Connect("c1", "bob");
  HttpResponse r =
      Call("POST", "/api/shards/c1/kick", R"({"subscriber":"alice"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"closed", 2}}));
  auto closes = connections_.closes();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].shard, "c1");
  EXPECT_EQ(closes[0].subscriber, "alice");
  EXPECT_EQ(closes[0].code, net::kCloseKicked);
  EXPECT_EQ(closes[0].reason, "kicked by an operator");
  EXPECT_EQ(connections_.Subscribers("c1"), std::vector<std::string>{"bob"});

  ExpectError(Call("POST", "/api/shards/c1/kick", "{}"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/kick", R"({"subscriber":""})"), 400,
              "invalid_argument");
  ExpectError(
      Call("POST", "/api/shards/nope/kick", R"({"subscriber":"alice"})"), 404,
      "not_found");
}

TEST_F(ApiHandlerTest, StopClosesConnectionsForgetsAndNotifies) {
  CreateCounter("c1");
  connections_.Connect("c1", "alice");
  HttpResponse r = Call("POST", "/api/shards/c1/stop");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), json({{"id", "c1"}, {"stopped", true}, {"closed", 1}}));
  auto closes = connections_.closes();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, net::kCloseShardStopped);
  EXPECT_EQ(closes[0].reason, "stopped: by an operator");
  EXPECT_FALSE(store_.Record("c1").has_value());  // forgotten at once

  StepTo(1000);                         // the worker stops it: OnStopped
  ASSERT_EQ(sink_.stops().size(), 1u);  // forwarded to the network layer
  EXPECT_EQ(sink_.stops()[0].second, shard::StopReason::kStopped);
  json detail = Body(Call("GET", "/api/shards/c1"));
  EXPECT_EQ(detail["status"], "stopped");
  EXPECT_EQ(detail["stop_reason"], "stopped");

  auto posts = WaitForPosts(1);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(posts[0].first, kHook);
  EXPECT_EQ(json::parse(posts[0].second),
            json::parse(R"({"shardId":"c1","kind":"counter",
                "reason":"stopped","error":null})"));

  // Stopping it again: already stopped, nothing recorded.
  ExpectError(Call("POST", "/api/shards/c1/stop"), 409, "failed_precondition");
  ExpectError(Call("POST", "/api/shards/nope/stop"), 404, "not_found");
  // After the retention it is gone entirely.
  StepTo(2'000'000);
  ExpectError(Call("GET", "/api/shards/c1"), 404, "not_found");
}

TEST_F(ApiHandlerTest, AModuleThatFinishesIsForgottenAndNotified) {
  CreateCounter("c1");
  ASSERT_EQ(Call("POST", "/api/shards/c1/inputs", R"({"input":{"finish":{}}})")
                .status,
            202);
  StepTo(50'000);
  EXPECT_EQ(host_->Get("c1")->stop_reason, shard::StopReason::kFinished);
  EXPECT_FALSE(store_.Record("c1").has_value());
  auto posts = WaitForPosts(1);
  ASSERT_EQ(posts.size(), 1u);
  EXPECT_EQ(json::parse(posts[0].second)["reason"], "finished");
  // No onStop URL for counter-json: nothing is posted for it.
  ASSERT_EQ(
      Call("POST", "/api/shards", R"({"kind":"counter-json","id":"j"})").status,
      201);
  ASSERT_EQ(Call("POST", "/api/shards/j/stop").status, 200);
  StepTo(60'000);
  // A shard with an onStop URL stopped after j: the notifier delivers in
  // order, so once its notice is in, one for j would have been too.
  CreateCounter("c2");
  ASSERT_EQ(Call("POST", "/api/shards/c2/stop").status, 200);
  StepTo(70'000);
  posts = WaitForPosts(2);
  ASSERT_EQ(posts.size(), 2u);
  EXPECT_EQ(json::parse(posts[0].second)["shardId"], "c1");
  EXPECT_EQ(json::parse(posts[1].second)["shardId"], "c2");
  std::lock_guard<std::mutex> lock(posts_mu_);
  EXPECT_EQ(posts_.size(), 2u);
}

TEST_F(ApiHandlerTest, Tickets) {
  CreateCounter("c1");
  HttpResponse r = Call("POST", "/api/shards/c1/tickets",
                        R"({"subscriber":"alice","ttl_secs":60,
                            "claims":{"team":"red"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  json body = Body(r);
  EXPECT_EQ(body["expires"], kNowUnix + 60);
  net::TicketCheck check = net::VerifyTicket(
      kSecret, body["ticket"].get<std::string>(), "c1", kNowUnix);
  ASSERT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "alice");
  EXPECT_EQ(json::parse(check.ticket.claims_json), json({{"team", "red"}}));
  EXPECT_EQ(net::VerifyTicket(kSecret, body["ticket"].get<std::string>(), "c1",
                              kNowUnix + 60)
                .error,
            net::TicketError::kExpired);
  EXPECT_EQ(net::VerifyTicket("other", body["ticket"].get<std::string>(), "c1",
                              kNowUnix)
                .error,
            net::TicketError::kInvalid);

  // The default lifetime is ten minutes.
  r = Call("POST", "/api/shards/c1/tickets", R"({"subscriber":"bob"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["expires"], kNowUnix + 600);

  ExpectError(Call("POST", "/api/shards/c1/tickets", "{}"), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/tickets",
                   R"({"subscriber":"a","ttl_secs":0})"),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/tickets",
                   R"({"subscriber":"a","ttl_secs":"60"})"),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/shards/c1/tickets",
                   R"({"subscriber":"a","claims":[1]})"),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/shards/nope/tickets", R"({"subscriber":"a"})"),
              404, "not_found");
}

TEST_F(ApiHandlerTest, DevJoinCreatesOnceAndMintsGuestTickets) {
  const std::string join =
      R"({"shard":"arena-1","kind":"counter","params":{"start":7}})";
  HttpResponse r = Call("POST", "/api/dev/join", join, nullptr);  // no token
  ASSERT_EQ(r.status, 200) << r.body;
  json body = Body(r);
  EXPECT_EQ(body["shardId"], "arena-1");
  const std::string guest = body["subscriberId"].get<std::string>();
  EXPECT_THAT(guest, MatchesRegex("guest-[0-9a-f]{8}"));
  net::TicketCheck check = net::VerifyTicket(
      kSecret, body["ticket"].get<std::string>(), "arena-1", kNowUnix);
  ASSERT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, guest);
  EXPECT_EQ(check.ticket.expires_unix, kNowUnix + 600);
  ASSERT_TRUE(store_.Record("arena-1").has_value());

  // Joining again joins the same shard (its state is kept) as a new guest.
  StepTo(50'000);
  r = Call("POST", "/api/dev/join", join, nullptr);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(Body(r)["subscriberId"], guest);
  EXPECT_EQ(host_->Get("arena-1")->tick, 1u);
  EXPECT_EQ(host_->List().size(), 1u);

  // A chosen subscriber id; the kind may be left out for an existing shard.
  r = Call("POST", "/api/dev/join",
           R"({"shard":"arena-1","subscriber":"carol"})", nullptr);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["subscriberId"], "carol");

  ExpectError(Call("POST", "/api/dev/join",
                   R"({"shard":"arena-1","kind":"counter-json"})", nullptr),
              409, "kind_mismatch");
  ExpectError(Call("POST", "/api/dev/join", R"({"shard":"new"})", nullptr), 400,
              "invalid_argument");
  ExpectError(Call("POST", "/api/dev/join", R"({"shard":"new","kind":"nope"})",
                   nullptr),
              404, "unknown_kind");
  ExpectError(Call("POST", "/api/dev/join", R"({"kind":"counter"})", nullptr),
              400, "invalid_argument");
  ExpectError(Call("POST", "/api/dev/join", "{", nullptr), 400, "bad_json");
  ExpectError(Call("GET", "/api/dev/join", "", nullptr), 405,
              "method_not_allowed");

  // A stopped shard is created again by the next join.
  ASSERT_EQ(Call("POST", "/api/shards/arena-1/stop").status, 200);
  StepTo(60'000);
  r = Call("POST", "/api/dev/join", join, nullptr);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(host_->Get("arena-1")->status, shard::ShardStatus::kRunning);
  EXPECT_EQ(host_->Get("arena-1")->tick, 0u);
  EXPECT_TRUE(store_.Record("arena-1").has_value());
}

TEST_F(ApiHandlerTest, DevJoinIsOffOutsideDevMode) {
  handler_ = MakeHandler(/*dev_join=*/false);
  ExpectError(Call("POST", "/api/dev/join", R"({"shard":"a","kind":"counter"})",
                   nullptr),
              404, "not_found");
  EXPECT_TRUE(host_->List().empty());
}

TEST_F(ApiHandlerTest, StaticFiles) {
  HttpResponse r = Call("GET", "/", "", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body, "<h1>arena</h1>");
  r = Call("GET", "/index.html", "", nullptr);
  EXPECT_EQ(r.body, "<h1>arena</h1>");
  r = Call("GET", "/app.js?v=3", "", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(r.body, "console.log(1)");
  r = Call("GET", "/sub/", "", nullptr);
  EXPECT_EQ(r.body, "sub index");
  r = Call("GET", "/sub", "", nullptr);
  EXPECT_EQ(r.body, "sub index");
  r = Call("GET", "/Logo.PNG", "", nullptr);
  EXPECT_EQ(r.content_type, "image/png");
  r = Call("GET", "/%61pp.js", "", nullptr);  // percent-decoded
  EXPECT_EQ(r.body, "console.log(1)");

  ExpectError(Call("GET", "/missing.html", "", nullptr), 404, "not_found");
  ExpectError(Call("POST", "/", "", nullptr), 405, "method_not_allowed");
}

TEST_F(ApiHandlerTest, StaticFilesNeverLeaveTheWebFolder) {
  for (const char* target :
       {"/../secret.txt", "/sub/../../secret.txt", "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt", "/sub/..%2f..%2fsecret.txt", "/..%5csecret.txt",
        "/escape.txt", "/./index.html", "/%00", "/%zz", "/%2"}) {
    SCOPED_TRACE(target);
    HttpResponse r = Call("GET", target, "", nullptr);
    EXPECT_NE(r.status, 200);
    EXPECT_THAT(r.body, ::testing::Not(HasSubstr("top secret")));
  }
}

TEST_F(ApiHandlerTest, NoWebFolderMeansNotFound) {
  ApiOptions options;
  options.web_dir = temp_.path() / "absent";
  ApiHandler handler(options, directory_.get(), &metrics_, &connections_);
  HttpRequest request;
  request.method = "GET";
  request.target = "/";
  ExpectError(handler.Handle(request), 404, "not_found");
}

TEST_F(ApiHandlerTest, UnknownRoutesAndWrongMethods) {
  ExpectError(Call("GET", "/api/nope"), 404, "not_found");
  ExpectError(Call("GET", "/api"), 404, "not_found");
  ExpectError(Call("POST", "/api/shards/c1/frob"), 404, "not_found");
  ExpectError(Call("GET", "/api/shards/c1/stop/now"), 404, "not_found");
  ExpectError(Call("DELETE", "/api/shards"), 405, "method_not_allowed");
  ExpectError(Call("POST", "/api/shards/c1"), 405, "method_not_allowed");
  ExpectError(Call("GET", "/api/shards/c1/stop"), 405, "method_not_allowed");
  ExpectError(Call("PUT", "/metrics"), 405, "method_not_allowed");
  ExpectError(Call("GET", "no-slash"), 400, "bad_target");
  // A wrong method is reported even without a token; a missing token before
  // anything about the shard.
  ExpectError(Call("GET", "/api/shards/c1/stop", "", nullptr), 405,
              "method_not_allowed");
  ExpectError(Call("POST", "/api/shards/nope/stop", "", nullptr), 401,
              "unauthorized");
}

TEST_F(ApiHandlerTest, MetricsText) {
  CreateCounter("a");
  CreateCounter("b");
  ASSERT_TRUE(host_->AddSubscriber("a", "alice").ok());
  ASSERT_TRUE(host_->AddSubscriber("b", "bob").ok());
  for (int64_t t = 50'000; t <= 150'000; t += 50'000) StepTo(t);
  ASSERT_EQ(Call("POST", "/api/shards/b/stop").status, 200);
  StepTo(160'000);

  HttpResponse r = Call("GET", "/metrics", "", nullptr);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_THAT(r.body, HasSubstr("# TYPE tessera_shards gauge"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"running\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"stopped\"} 1\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"failed\"} 0\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_subscribers 1\n"));
  EXPECT_THAT(r.body, HasSubstr("# TYPE tessera_shard_ticks_total counter"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_ticks_total 6\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_overruns_total 0\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_fuel_used_total "));

  // Counters only grow, by what happened since the last scrape.
  StepTo(200'000);
  r = Call("GET", "/metrics", "", nullptr);
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_ticks_total 7\n"));
  StepTo(2'000'000);  // b is removed after its retention; a ticks on
  r = Call("GET", "/metrics", "", nullptr);
  EXPECT_THAT(r.body, HasSubstr("tessera_shards{status=\"stopped\"} 0\n"));
  EXPECT_THAT(r.body, HasSubstr("tessera_shard_ticks_total 8\n"));
}

// Counts are taken when ticks and stops happen: a shard that stopped and
// was forgotten before any scrape still counts (they were read from the
// shards still listed, so these ticks were lost).
TEST_F(ApiHandlerTest, CountsOutliveForgottenShards) {
  CreateCounter("a");
  for (int64_t t = 50'000; t <= 150'000; t += 50'000) StepTo(t);
  ASSERT_EQ(Call("POST", "/api/shards/a/stop").status, 200);
  StepTo(160'000);
  StepTo(2'000'000);  // past the retention: forgotten
  ExpectError(Call("GET", "/api/shards/a"), 404, "not_found");

  const std::string body = Call("GET", "/metrics", "", nullptr).body;
  EXPECT_THAT(body, HasSubstr("tessera_shard_ticks_total 3\n"));
  EXPECT_THAT(body, MatchesRegex("(.|\n)*tessera_shard_fuel_used_total "
                                 "[1-9][0-9]*\n(.|\n)*"));
  EXPECT_THAT(body,
              HasSubstr("tessera_shard_stops_total{reason=\"stopped\"} 1\n"));
  EXPECT_THAT(body, Not(HasSubstr("tessera_shard_failures_total")));
  // One server log line for the stop, with its reason.
  EXPECT_THAT(log(), ElementsAre("shard a (counter) stopped (stopped): "
                                 "stopped by request"));
}

// A failed shard: one log line with its failure, counted by the kind of
// failure, and its reason readable through the API for minutes, not 5 s.
TEST_F(ApiHandlerTest, AFailedShardIsLoggedCountedAndReadableForMinutes) {
  TESSERA_LOAD_GUEST(panicker, "panicker", 64);
  shard::KindConfig kind;
  kind.name = "panicker";
  kind.idle_shutdown_secs = 0;
  ASSERT_TRUE(kinds_.Add(kind, panicker).ok());
  ASSERT_EQ(
      Call("POST", "/api/shards",
           json{{"kind", "panicker"}, {"id", "p"}, {"params", {{"at", 2}}}}
               .dump())
          .status,
      201);
  StepTo(50'000);
  StepTo(100'000);  // tick 2 panics
  ASSERT_EQ(host_->Get("p")->stop_reason, shard::StopReason::kFailed);
  EXPECT_THAT(log(), ElementsAre("shard p (panicker) stopped (failed): "
                                 "panic: boom at tick 2"));

  for (int64_t t : {1'100'000, 6'000'000, 299'000'000}) {
    SCOPED_TRACE(t);
    StepTo(t);  // past the 1 s retention of other stops
    HttpResponse r = Call("GET", "/api/shards/p");
    ASSERT_EQ(r.status, 200) << r.body;
    json detail = Body(r);
    EXPECT_EQ(detail["status"], "stopped");
    EXPECT_EQ(detail["stop_reason"], "failed");
    EXPECT_THAT(detail["last_error"].get<std::string>(),
                HasSubstr("boom at tick 2"));
  }
  StepTo(100'000 + kFailedRetentionUs);
  ExpectError(Call("GET", "/api/shards/p"), 404, "not_found");

  const std::string body = Call("GET", "/metrics", "", nullptr).body;
  EXPECT_THAT(body, HasSubstr("tessera_shard_ticks_total 2\n"));
  EXPECT_THAT(body,
              HasSubstr("tessera_shard_stops_total{reason=\"failed\"} 1\n"));
  EXPECT_THAT(body,
              HasSubstr("tessera_shard_failures_total{reason=\"panic\"} 1\n"));
}

TEST(StopLogLine, OneEscapedLineWithTheReason) {
  EXPECT_EQ(StopLogLine("c1", "arena", shard::StopReason::kIdle,
                        "no subscribers for 30 s"),
            "shard c1 (arena) stopped (idle): no subscribers for 30 s");
  EXPECT_EQ(StopLogLine("c1", "", shard::StopReason::kFinished, ""),
            "shard c1 stopped (finished)");
  // A guest's failure text cannot forge a second line or drive the
  // terminal.
  EXPECT_EQ(StopLogLine("c1", "arena", shard::StopReason::kFailed,
                        "panic: x\n[shard other] panic: \x1B[2J"),
            "shard c1 (arena) stopped (failed): panic: x\\n[shard other] "
            "panic: \\x1B[2J");
  const std::string huge = StopLogLine("c1", "k", shard::StopReason::kFailed,
                                       std::string(1 << 20, 'x'));
  EXPECT_LT(huge.size(), 4096u + 64u);
}

TEST(ShardEventMetrics, FailureKinds) {
  using K = ShardEventMetrics;
  EXPECT_STREQ(K::FailureKind("fuel exhausted: tessera_tick used more"),
               "fuel");
  EXPECT_STREQ(K::FailureKind("watchdog: call ran longer"), "watchdog");
  EXPECT_STREQ(K::FailureKind("tick budget: tick used 9 ms"), "tick_budget");
  EXPECT_STREQ(K::FailureKind("memory: the module asked"), "memory");
  EXPECT_STREQ(K::FailureKind("panic: boom"), "panic");
  EXPECT_STREQ(K::FailureKind("trap: out of bounds memory access in tick"),
               "trap");
  EXPECT_STREQ(K::FailureKind("abi: bad pointer"), "abi");
  EXPECT_STREQ(K::FailureKind("error: the tick failed: x"), "error");
  EXPECT_STREQ(K::FailureKind("host: calling tessera_tick"), "host");
  EXPECT_STREQ(K::FailureKind("panicked"), "other");
  EXPECT_STREQ(K::FailureKind(""), "other");
}

}  // namespace
}  // namespace tessera::server
