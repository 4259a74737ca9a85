// Keyed calls survive kill -9 (DATA.md "Keyed calls"): the real `tessera
// serve` on the calls test app (tests/apps/calls-app: the `calls` test
// guest as kind "calls", the app's functions as compute module "fns"),
// started with TESSERA_FAULT_POINT set to a step of the call runner, kills
// itself there when a shard's keyed call to fns.grant (which inserts an
// Item) is about to commit or has just committed; restarted without it on
// the same store, the shard (restored from its save, which lists the call)
// asks again and learns the result, and the Item exists exactly once:
//
//   call_runner_before_commit -> nothing committed: the function runs
//                                again after the restart
//   call_runner_after_commit  -> committed, not delivered: the stored
//                                result answers, the function does not run
//                                again
//
// plus the same call without a fault point. Each case disables the module
// first, so the call waits (retried) until the shard has saved it, then
// enables it. The shard's snapshot is read through a watcher connection;
// the rows straight from the SQLite file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/protocol_v1.h"
#include "tests/e2e/app_template.h"
#include "tests/e2e/serve_helpers.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace tessera::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using net::testing::HttpResult;
using net::testing::TestClient;
using Clock = std::chrono::steady_clock;

constexpr char kAdminToken[] = "calls-admin-token";

struct Case {
  const char* fault_point;  // "" for none
  const char* name;         // the shard id, key and item: unique per case
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << (*c.fault_point == '\0' ? "no fault point" : c.fault_point);
}

// The app's rows of `sql` (one integer), read-only beside the server.
int64_t QueryInt(const fs::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  int64_t out = -1;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_busy_timeout(handle, 5000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      out = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(handle);
  return out;
}

// One app for the whole suite (its module compiles once).
class KeyedCallCrashTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    app_ = fs::temp_directory_path() /
           ("tessera-calls-crash-" + std::to_string(getpid()));
    fs::remove_all(app_);
    fs::create_directories(app_ / "compute");
    fs::copy(fs::path(TESSERA_SOURCE_DIR) / "tests/apps/calls-app/compute",
             app_ / "compute", fs::copy_options::recursive);
    json invoke = json::array();
    for (const char* name : {"grant", "refuse", "noop", "onStop", "caller"}) {
      invoke.push_back({{"triggerType", "invoke"}, {"exportName", name}});
    }
    std::ofstream(app_ / "tessera.json") << json{
        {"name", "calls-app"},
        {"shards",
         {{{"name", "calls"},
           {"wasm", TESSERA_GUEST_CALLS},
           {"codec", "json"},
           {"tickRate", 20},
           {"idleShutdownSecs", 0}}}},
        {"data",
         {{"types",
           {{{"name", "Item"},
             {"fields",
              {{{"name", "name"}, {"type", "string"}, {"required", true}},
               {{"name", "owner"}, {"type", "string"}}}}},
            {{"name", "Stop"},
             {"fields",
              {{{"name", "shard"}, {"type", "string"}, {"required", true}},
               {{"name", "kind"}, {"type", "string"}},
               {{"name", "reason"}, {"type", "string"}}}}}}}}},
        {"compute",
         {{{"name", "fns"},
           {"source", "compute/calls-fns"},
           {"alwaysOn", true},
           {"enabled", false},
           {"triggers", invoke}}}}}.dump(2);
  }
  static void TearDownTestSuite() { fs::remove_all(app_); }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      std::cerr << "---- server log ----\n" << server_->Log() << "----\n";
    }
    if (server_ != nullptr && !server_->exited()) {
      (void)server_->Signal(SIGTERM);
      (void)server_->WaitExit(15000);
    }
    server_.reset();
  }

  fs::path Db() const { return app_ / ".tessera/tessera.db"; }
  fs::path DataDb() const { return app_ / ".tessera/tessera-data.db"; }

  void Start(const std::string& fault_point) {
    if (server_ != nullptr && !server_->exited()) {
      ASSERT_TRUE(server_->Signal(SIGTERM).ok());
      ASSERT_TRUE(server_->WaitExit(15000).ok());
    }
    server_.reset();
    SpawnOptions options = ServeOptions(
        TESSERA_BIN, app_,
        {{"TESSERA_SHARD_TICKET_SECRET", "calls-ticket-secret"},
         {"TESSERA_ADMIN_TOKEN", kAdminToken},
         {"TESSERA_SHARD_SAVE_SECS", "1"}},
        fault_point, app_ / ("server-" + std::to_string(++spawned_) + ".log"));
    options.ready_timeout_ms = 120000;
    Result<std::unique_ptr<ServerProcess>> started =
        ServerProcess::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(*started);
  }

  HttpResult Http(const std::string& method, const std::string& target,
                  const json& body = nullptr) {
    Result<HttpResult> r =
        HttpJson(server_->port(), method, target, body, kAdminToken);
    EXPECT_TRUE(r.ok()) << method << " " << target << ": "
                        << r.status().ToString();
    return r.ok() ? *r : HttpResult{};
  }

  // PUT enabled until it answers 200 (the first compile may still run).
  void SetEnabled(bool enabled) {
    const auto deadline = Clock::now() + std::chrono::seconds(180);
    HttpResult r;
    while (Clock::now() < deadline) {
      r = Http("PUT", "/api/compute/modules/fns/enabled",
               {{"enabled", enabled}});
      if (r.status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    FAIL() << "fns enabled=" << enabled << ": " << r.status << " " << r.body;
  }

  // The events of `shard`'s snapshot, read by a watcher.
  json Events(const std::string& shard) {
    HttpResult t = Http("POST", "/api/shards/" + shard + "/tickets",
                        {{"subscriber", "watcher"}});
    EXPECT_EQ(t.status, 200) << t.body;
    const std::string ticket =
        json::parse(t.body, nullptr, false).value("ticket", "");
    net::testing::ClientOptions options;
    options.port = server_->port();
    Result<std::unique_ptr<TestClient>> c = TestClient::Connect(options, shard);
    if (!c.ok()) return nullptr;
    Result<net::v1::Welcome> welcome = (*c)->Join(ticket, 10000);
    if (!welcome.ok()) return nullptr;
    Result<net::v1::Frame> frame = (*c)->ReadUntil<net::v1::Frame>(10000);
    if (!frame.ok()) return nullptr;
    json snapshot = json::parse(frame->snapshot, nullptr, false);
    return snapshot.is_object() ? snapshot.value("events", json::array())
                                : json(nullptr);
  }

  // Waits until `shard` has an event starting with `prefix`.
  bool WaitForEvent(const std::string& shard, const std::string& prefix,
                    int timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (Clock::now() < deadline) {
      json events = Events(shard);
      if (events.is_array()) {
        for (const json& e : events) {
          if (e.is_string() && e.get<std::string>().starts_with(prefix)) {
            return true;
          }
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  int64_t Items(const std::string& item) {
    return QueryInt(
        DataDb(),
        "SELECT COUNT(*) FROM data_Item WHERE f_name = '" + item + "'");
  }

  static fs::path app_;
  std::unique_ptr<ServerProcess> server_;
  static int spawned_;
};

fs::path KeyedCallCrashTest::app_;
int KeyedCallCrashTest::spawned_ = 0;

TEST_P(KeyedCallCrashTest, TheRowExistsOnceAndTheShardLearnsTheResult) {
  const Case& c = GetParam();
  const std::string shard = std::string("c-") + c.name;
  const std::string key = std::string("loot:") + c.name;
  const std::string item = std::string("sword-") + c.name;
  ASSERT_NO_FATAL_FAILURE(Start(c.fault_point));
  // The call waits (the module is off) until the shard saved it.
  ASSERT_NO_FATAL_FAILURE(SetEnabled(false));
  HttpResult created =
      Http("POST", "/api/shards", {{"kind", "calls"}, {"id", shard}});
  ASSERT_EQ(created.status, 201) << created.body;
  HttpResult input = Http("POST", "/api/shards/" + shard + "/inputs",
                          {{"input",
                            {{"call",
                              {{"key", key},
                               {"function", "fns.grant"},
                               {"args", json{{"item", item}}.dump()}}}}}});
  ASSERT_EQ(input.status, 202) << input.body;
  ASSERT_TRUE(WaitForSaveMentioning(Db(), shard, key, 15000))
      << "no save of " << shard << " listing " << key;
  ASSERT_NO_FATAL_FAILURE(SetEnabled(true));

  if (*c.fault_point != '\0') {
    // The runner's retry (backoff up to 10 s) reaches the fault point.
    Result<int> exit = server_->WaitExit(60000);
    ASSERT_TRUE(exit.ok()) << "the server did not die at " << c.fault_point;
    EXPECT_EQ(*exit, 128 + SIGKILL);
    EXPECT_NE(server_->Log().find(std::string("fault point ") + c.fault_point),
              std::string::npos);
    EXPECT_EQ(Items(item),
              std::string(c.fault_point) == "call_runner_after_commit" ? 1 : 0);
    ASSERT_NO_FATAL_FAILURE(Start(""));
  }
  EXPECT_TRUE(WaitForEvent(shard, "result:" + key + ":ok:", 60000))
      << "the shard never learned the result of " << key;
  EXPECT_EQ(Items(item), 1);
  EXPECT_EQ(QueryInt(DataDb(), "SELECT COUNT(*) FROM data_calls WHERE key = '" +
                                   key + "'"),
            1);
  // Done with this shard: the next case's fault point is its own call's.
  HttpResult stopped =
      Http("POST", "/api/shards/" + shard + "/stop", json::object());
  EXPECT_EQ(stopped.status, 200) << stopped.body;
}

INSTANTIATE_TEST_SUITE_P(
    FaultPoints, KeyedCallCrashTest,
    ::testing::Values(Case{"", "plain"},
                      Case{"call_runner_before_commit", "before"},
                      Case{"call_runner_after_commit", "after"}));

}  // namespace
}  // namespace tessera::e2e
