// `tessera serve` on PostgreSQL (TESSERA_DATABASE_URL=postgres://...): the
// real binary on a scratch copy of examples/zones, with an entity type
// and a durable realm kind added to its tessera.json, against a throwaway
// PostgreSQL cluster this test starts itself (pg_test_cluster.h). A
// player joins over WebSocket and is saved, a data row is written and a
// realm is updated twice; then kill -9 of the server, and a new server on
// the same database has all of it back: the shard (restored from its save,
// the player in it), the row, and the realm at its version (the next
// update is the version after). Nothing is written to SQLite files.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "store/postgres/pg_test_cluster.h"
#include "store/postgres/pg_test_proxy.h"
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

constexpr char kAdminToken[] = "pg-admin-token";
constexpr char kShard[] = "zones-0";
constexpr char kPlayer[] = "alice";

std::string Msgpack(const json& value) {
  const std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

AppTemplate* MakeZonesTemplate() {
  AppTemplateOptions options;
  options.tessera_bin = TESSERA_BIN;
  options.source = fs::path(TESSERA_SOURCE_DIR) / "examples/zones";
  options.kind = "zones";
  options.shard_id = kShard;
  options.scratch = "pg-serve";
  return static_cast<AppTemplate*>(
      ::testing::AddGlobalTestEnvironment(new AppTemplate(std::move(options))));
}

AppTemplate* const kZonesTemplate = MakeZonesTemplate();

class PgServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(kZonesTemplate->path().empty())
        << "the zones app did not build";
    Status error;
    cluster_ = store::pg::SharedPgTestCluster(&error);
    ASSERT_NE(cluster_, nullptr) << error.ToString();
    Result<std::string> url = cluster_->NewDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
    app_ = kZonesTemplate->app_path();
    ASSERT_TRUE(kZonesTemplate->CopyToAppPath());
    // The example's manifest plus an entity type and a durable realm kind.
    json manifest;
    std::ifstream(app_ / "tessera.json") >> manifest;
    manifest["data"] = {
        {"types",
         {{{"name", "Note"},
           {"fields",
            {{{"name", "text"}, {"type", "string"}, {"required", true}},
             {{"name", "stars"}, {"type", "int"}}}}}}}};
    manifest["realms"] = {{{"name", "board"},
                           {"persistence", "durable"},
                           {"initialState", {{"log", json::array()}}}}};
    std::ofstream(app_ / "tessera.json") << manifest.dump(2);
  }
  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      std::cerr << "---- server log ----\n" << server_->Log() << "----\n";
    }
    server_.reset();
    fs::remove_all(app_);
  }

  void Start(const std::string& database_url) {
    server_.reset();
    SpawnOptions options = ServeOptions(
        TESSERA_BIN, app_,
        {{"TESSERA_SHARD_TICKET_SECRET", "pg-ticket-secret"},
         {"TESSERA_ADMIN_TOKEN", kAdminToken},
         {"TESSERA_SHARD_SAVE_SECS", "1"},
         {"TESSERA_DATABASE_URL", database_url}},
        "",
        app_.parent_path() / ("server-" + std::to_string(++spawned_) + ".log"));
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

  json HttpBody(const std::string& method, const std::string& target,
                const json& body, int want_status) {
    HttpResult r = Http(method, target, body);
    EXPECT_EQ(r.status, want_status)
        << method << " " << target << ": " << r.body;
    return json::parse(r.body, nullptr, false);
  }

  std::string Ticket(const std::string& subscriber) {
    json body =
        HttpBody("POST", std::string("/api/shards/") + kShard + "/tickets",
                 {{"subscriber", subscriber}}, 200);
    return body.is_object() ? body.value("ticket", "") : "";
  }

  std::unique_ptr<TestClient> Join(const std::string& subscriber) {
    net::testing::ClientOptions options;
    options.port = server_->port();
    Result<std::unique_ptr<TestClient>> c =
        TestClient::Connect(options, kShard);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return nullptr;
    Result<net::v1::Welcome> welcome = (*c)->Join(Ticket(subscriber), 10000);
    EXPECT_TRUE(welcome.ok()) << welcome.status().ToString();
    return welcome.ok() ? std::move(*c) : nullptr;
  }

  // The shard's players, as a watcher that never plays sees them.
  json Players() {
    std::unique_ptr<TestClient> watcher = Join("watcher");
    if (watcher == nullptr) return nullptr;
    Result<net::v1::Frame> frame = watcher->ReadUntil<net::v1::Frame>(10000);
    EXPECT_TRUE(frame.ok()) << frame.status().ToString();
    if (!frame.ok()) return nullptr;
    json snapshot = json::from_msgpack(frame->snapshot, true, false);
    return snapshot.is_object() ? snapshot.value("players", json::array())
                                : json(nullptr);
  }

  // The first column of the first row of `sql` in the app's database.
  std::string Query(const std::string& sql) {
    Result<std::unique_ptr<store::pg::PgConn>> conn =
        store::pg::PgConn::Connect(url_);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    if (!conn.ok()) return "";
    Result<store::pg::PgResult> rows = (*conn)->Exec(sql, {}, "query");
    EXPECT_TRUE(rows.ok()) << sql << ": " << rows.status().ToString();
    if (!rows.ok() || rows->rows() == 0) return "";
    return std::string(rows->Text(0, 0));
  }

  // Polls until the shard's save in the database mentions `text`.
  bool WaitForSaveMentioning(const std::string& text, int timeout_ms) {
    const std::string sql = "SELECT count(*) FROM saves WHERE shard_id = '" +
                            std::string(kShard) + "'::bytea AND position('" +
                            text + "'::bytea IN state) > 0";
    for (int waited = 0; waited < timeout_ms; waited += 50) {
      if (Query(sql) == "1") return true;
      usleep(50'000);
    }
    return false;
  }

  static json CreateBody(const std::string& id) {
    return {{"kind", "zones"},
            {"id", id},
            {"params", {{"index", 0}, {"zones", 1}}}};
  }

  // Creates the shard and joins the player, who plays until a save of the
  // shard has her in it.
  std::unique_ptr<TestClient> CreateShardWithAlice() {
    HttpBody("POST", "/api/shards", CreateBody(kShard), 201);
    std::unique_ptr<TestClient> alice = Join(kPlayer);
    EXPECT_NE(alice, nullptr);
    if (alice == nullptr) return nullptr;
    EXPECT_TRUE(alice->SendInput(1, Msgpack({{"join", json::object()}})).ok());
    EXPECT_TRUE(WaitForSaveMentioning(kPlayer, 15000))
        << "no save of " << kShard << " with " << kPlayer << " within 15 s";
    return alice;
  }

  // Polls `done` every 50 ms until it holds or `timeout_ms` passes.
  static bool WaitFor(int timeout_ms, const std::function<bool()>& done) {
    for (int waited = 0; waited < timeout_ms; waited += 50) {
      if (done()) return true;
      usleep(50'000);
    }
    return done();
  }

  // Whether the server runs the shard.
  bool ShardRunning() {
    json shard = json::parse(
        Http("GET", std::string("/api/shards/") + kShard).body, nullptr, false);
    return shard.is_object() && shard.value("status", "") == "running";
  }

  // How many times the player is in the shard, as a watcher sees it.
  int TimesPlayerIsIn() {
    json players = Players();
    EXPECT_TRUE(players.is_array()) << players.dump();
    int found = 0;
    if (!players.is_array()) return found;
    for (const json& p : players) found += p.value("id", "") == kPlayer;
    return found;
  }

  // Waits until the machine has joined under an epoch other than `first`
  // and runs the shard again; `machines` gets the last GET /api/machines.
  bool BackUnderANewEpoch(const std::string& first, json* machines) {
    return WaitFor(30'000, [&] {
      HttpResult r = Http("GET", "/api/machines");
      *machines = json::parse(r.body, nullptr, false);
      return r.status == 200 && machines->is_object() &&
             (*machines)["self"].value("epoch", "") != first &&
             (*machines)["self"].value("member", false) && ShardRunning();
    });
  }

  store::pg::PgTestCluster* cluster_ = nullptr;
  std::string url_;
  fs::path app_;
  std::unique_ptr<ServerProcess> server_;
  int spawned_ = 0;
};

TEST_F(PgServeTest, StateComesBackAfterKillNine) {
  ASSERT_NO_FATAL_FAILURE(Start(url_));
  // A player joins and plays; the shard saves her.
  std::unique_ptr<TestClient> alice = CreateShardWithAlice();
  ASSERT_NE(alice, nullptr);
  ASSERT_FALSE(HasFailure());

  // A row of the app's data, and two versions of a realm.
  json row = HttpBody("POST", "/api/data/Note",
                      {{"id", "n1"}, {"fields", {{"text", "hello"}}}}, 201);
  ASSERT_TRUE(row.is_object()) << row.dump();
  HttpBody("PATCH", "/api/data/Note/n1", {{"set", {{"stars", 5}}}}, 200);
  int64_t version = 0;
  for (const char* entry : {"first", "second"}) {
    json done = HttpBody(
        "POST", "/api/realms/board/main/update",
        {{"patch", {{{"op", "append"}, {"path", {"log"}}, {"value", entry}}}}},
        200);
    ASSERT_TRUE(done.is_object() && done.contains("version")) << done.dump();
    EXPECT_GT(done["version"].get<int64_t>(), version);
    version = done["version"];
  }

  // kill -9, and a new server on the same database.
  ASSERT_TRUE(server_->Signal(SIGKILL).ok());
  Result<int> died = server_->WaitExit(10000);
  ASSERT_TRUE(died.ok());
  EXPECT_EQ(*died, 128 + SIGKILL);
  alice.reset();
  ASSERT_NO_FATAL_FAILURE(Start(url_));

  // The shard is back from its save, with the player in it. The new
  // process is a new machine (host:pid): the killed one's shard is taken
  // over once that machine has been silent for the dead time (10 s).
  ASSERT_TRUE(WaitFor(20'000, [&] { return ShardRunning(); }))
      << server_->Log();
  EXPECT_EQ(TimesPlayerIsIn(), 1);

  // The row, as last written.
  json again = HttpBody("GET", "/api/data/Note/n1", nullptr, 200);
  ASSERT_TRUE(again.is_object() && again.contains("row")) << again.dump();
  EXPECT_EQ(again["row"].value("text", ""), "hello") << again.dump();
  EXPECT_EQ(again["row"].value("stars", 0), 5) << again.dump();
  EXPECT_EQ(again["row"].value("version", 0), 2) << again.dump();

  // The realm goes on from its version.
  json next = HttpBody(
      "POST", "/api/realms/board/main/update",
      {{"patch", {{{"op", "append"}, {"path", {"log"}}, {"value", "third"}}}}},
      200);
  ASSERT_TRUE(next.is_object() && next.contains("version")) << next.dump();
  EXPECT_EQ(next["version"].get<int64_t>(), version + 1);
  // (The realms table keys an instance by "<kind>/<key>".)
  EXPECT_EQ(Query("SELECT string_agg(kind || '/' || key || '=' || "
                  "head_version, ',') FROM realms"),
            "board/board/main=" + std::to_string(version + 1));

  // Everything is in PostgreSQL: the app's directory has no store files.
  for (const char* file :
       {"tessera.db", "tessera-data.db", "tessera-realms.db"}) {
    EXPECT_FALSE(fs::exists(app_ / ".tessera" / file)) << file;
  }
}

// The machine's membership: it joins under an epoch before its shards
// start; stopped (SIGSTOP) past the 5 s fence, it stops its shards unsaved
// (the player's connection closed with 1001 so the client reconnects),
// joins again under a new epoch, and the shard comes back from its save.
TEST_F(PgServeTest, AMachineStoppedPastTheFenceComesBackUnderANewEpoch) {
  ASSERT_NO_FATAL_FAILURE(Start(url_));
  json machines = HttpBody("GET", "/api/machines", nullptr, 200);
  ASSERT_TRUE(machines.is_object()) << machines.dump();
  ASSERT_EQ(machines["machines"].size(), 1u) << machines.dump();
  EXPECT_TRUE(machines["machines"][0]["live"].get<bool>());
  EXPECT_TRUE(machines["machines"][0]["self"].get<bool>());
  const std::string first = machines["self"]["epoch"];
  EXPECT_EQ(machines["machines"][0]["epoch"], first);
  EXPECT_EQ(Http("GET", "/api/machines", nullptr).status, 200);
  {
    Result<HttpResult> anonymous =
        HttpJson(server_->port(), "GET", "/api/machines", nullptr, "");
    ASSERT_TRUE(anonymous.ok());
    EXPECT_EQ(anonymous->status, 401);
  }

  std::unique_ptr<TestClient> alice = CreateShardWithAlice();
  ASSERT_NE(alice, nullptr);
  ASSERT_FALSE(HasFailure());

  const auto stopped_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(server_->Signal(SIGSTOP).ok());
  usleep(7'000'000);  // past the fence (5 s), short of the dead time (10 s)
  ASSERT_TRUE(server_->Signal(SIGCONT).ok());

  // The player's connection ends so that the client reconnects.
  Result<net::testing::CloseInfo> closed = alice->WaitClose(10000);
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  EXPECT_EQ(closed->code, 1001) << closed->reason;
  EXPECT_NE(closed->reason.find("lost the database"), std::string::npos)
      << closed->reason;

  // Back under a new epoch, the shard running again from its save.
  ASSERT_TRUE(BackUnderANewEpoch(first, &machines)) << machines.dump();
  const std::string second = machines["self"].value("epoch", "");
  const double back_s = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - stopped_at)
                            .count();
  std::cout << "[ cluster  ] SIGSTOP 7 s -> fenced and back under a new "
               "epoch, shard running, "
            << back_s << " s after the stop\n";
  EXPECT_EQ(machines["self"]["fences"], 1) << machines.dump();
  EXPECT_EQ(machines["self"]["joins"], 2) << machines.dump();
  EXPECT_EQ(Query("SELECT epoch FROM cluster_machines"), second);
  EXPECT_EQ(TimesPlayerIsIn(), 1);
  const std::string log = server_->Log();
  EXPECT_NE(log.find("fenced itself"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped (fenced)"), std::string::npos) << log;
  // The directory still has the shard: the fence forgot nothing.
  EXPECT_EQ(Query("SELECT count(*) FROM shards"), "1");

  // A clean stop marks the epoch as left.
  ASSERT_TRUE(server_->Signal(SIGTERM).ok());
  Result<int> exited = server_->WaitExit(20000);
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(*exited, 0);
  EXPECT_EQ(Query("SELECT left_ms IS NOT NULL FROM cluster_machines"), "t");
}

// A database that hangs for this machine (a proxy that keeps its
// connections open and answers nothing): the fence thread, which waits on
// no database call, stops the shards 3 to 5 s after the hang (5 s after the
// last heartbeat that landed was sent); when the database answers again the
// machine joins under a new epoch and the shard comes back from its save.
TEST_F(PgServeTest, AMachineWhoseDatabaseHangsFencesItselfWithinFiveSeconds) {
  store::pg::HangingProxy proxy(cluster_->port());
  ASSERT_NO_FATAL_FAILURE(Start(proxy.Url(url_.substr(url_.rfind('/') + 1))));
  json machines = HttpBody("GET", "/api/machines", nullptr, 200);
  ASSERT_TRUE(machines.is_object()) << machines.dump();
  const std::string first = machines["self"].value("epoch", "");
  std::unique_ptr<TestClient> alice = CreateShardWithAlice();
  ASSERT_NE(alice, nullptr);
  ASSERT_FALSE(HasFailure());

  proxy.set_hung(true);
  const auto hung_at = std::chrono::steady_clock::now();
  Result<net::testing::CloseInfo> closed = alice->WaitClose(15000);
  const double fenced_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - hung_at)
          .count();
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  EXPECT_EQ(closed->code, 1001) << closed->reason;
  std::cout << "[ cluster  ] database hung -> fenced (player closed) after "
            << fenced_s << " s\n";
  EXPECT_GT(fenced_s, 2.5);
  EXPECT_LT(fenced_s, 6.5);
  // Still running, and refusing new shards while fenced.
  json refused = HttpBody("POST", "/api/shards",
                          {{"kind", "zones"},
                           {"id", "zones-9"},
                           {"params", {{"index", 0}, {"zones", 1}}}},
                          503);
  EXPECT_NE(refused.dump().find("fenced"), std::string::npos) << refused.dump();

  proxy.set_hung(false);
  ASSERT_TRUE(BackUnderANewEpoch(first, &machines)) << machines.dump();
  std::cout << "[ cluster  ] database answering again -> back under a new "
               "epoch with the shard running after "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             hung_at)
                   .count()
            << " s from the hang\n";
  EXPECT_EQ(TimesPlayerIsIn(), 1);
}

// Two machines on one database: a shard runs on the machine that created
// it only (the other boots past it); kill -9 of that machine, and the other
// takes the shard over from its save once the dead one has been silent
// for the dead time (10 s), and the player finds herself there.
TEST_F(PgServeTest, ADeadMachinesShardComesBackOnTheOtherMachine) {
  auto spawn = [this](const std::string& machine) {
    SpawnOptions options =
        ServeOptions(TESSERA_BIN, app_,
                     {{"TESSERA_SHARD_TICKET_SECRET", "pg-ticket-secret"},
                      {"TESSERA_ADMIN_TOKEN", kAdminToken},
                      {"TESSERA_SHARD_SAVE_SECS", "1"},
                      {"TESSERA_MACHINE_ID", machine},
                      {"TESSERA_DATABASE_URL", url_}},
                     "", app_.parent_path() / ("server-" + machine + ".log"));
    Result<std::unique_ptr<ServerProcess>> started =
        ServerProcess::Start(std::move(options));
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    server_ = started.ok() ? std::move(*started) : nullptr;
  };
  spawn("machine-a");
  ASSERT_NE(server_, nullptr);
  std::unique_ptr<TestClient> alice = CreateShardWithAlice();
  ASSERT_NE(alice, nullptr);
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(Query("SELECT machine_id FROM shard_placements"), "machine-a");

  // From here on the fixture's calls go to machine B.
  std::unique_ptr<ServerProcess> a = std::move(server_);
  spawn("machine-b");
  ASSERT_NE(server_, nullptr);
  // B knows both machines and does not run the shard.
  json machines = HttpBody("GET", "/api/machines", nullptr, 200);
  ASSERT_TRUE(machines.is_object()) << machines.dump();
  EXPECT_EQ(machines["machines"].size(), 2u) << machines.dump();
  EXPECT_EQ(Http("GET", std::string("/api/shards/") + kShard).status, 404);
  // Creating it on B is refused: A runs it.
  json twice = HttpBody("POST", "/api/shards",
                        {{"kind", "zones"},
                         {"id", kShard},
                         {"params", {{"index", 0}, {"zones", 1}}}},
                        409);
  EXPECT_NE(twice.dump().find("machine-a"), std::string::npos) << twice.dump();

  ASSERT_TRUE(a->Signal(SIGKILL).ok());
  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(a->WaitExit(10000).ok());
  alice.reset();
  ASSERT_TRUE(WaitFor(30'000, [&] { return ShardRunning(); }))
      << server_->Log();
  const double failover_s = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - killed_at)
                                .count();
  std::cout << "[ cluster  ] kill -9 of machine-a -> its shard running on "
               "machine-b after "
            << failover_s << " s (dead time 10 s)\n";
  EXPECT_GE(failover_s, 8.0);  // not before the dead time (less a beat)
  EXPECT_LT(failover_s, 15.0);
  EXPECT_EQ(Query("SELECT machine_id FROM shard_placements"), "machine-b");
  machines = HttpBody("GET", "/api/machines", nullptr, 200);
  ASSERT_TRUE(machines.is_object()) << machines.dump();
  for (const json& m : machines["machines"]) {
    EXPECT_EQ(m.value("shards", -1), m["id"] == "machine-b" ? 1 : 0)
        << machines.dump();
    EXPECT_EQ(m.value("live", false), m["id"] == "machine-b")
        << machines.dump();
  }
  // The player is there, from the save.
  EXPECT_EQ(TimesPlayerIsIn(), 1);
  EXPECT_NE(server_->Log().find("took over shards of machines that died: 1 "
                                "restored from a save"),
            std::string::npos)
      << server_->Log();
}

// An unreachable database stops the server at boot with a message that
// names it without the password.
TEST_F(PgServeTest, AnUnreachableDatabaseIsAClearErrorAtBoot) {
  SpawnOptions options = ServeOptions(
      TESSERA_BIN, app_,
      {{"TESSERA_SHARD_TICKET_SECRET", "pg-ticket-secret"},
       {"TESSERA_ADMIN_TOKEN", kAdminToken},
       {"TESSERA_DATABASE_URL", "postgres://tessera:s3cret@127.0.0.1:1/app"}},
      "", app_.parent_path() / "server-unreachable.log");
  options.ready_timeout_ms = 20000;
  Result<std::unique_ptr<ServerProcess>> started =
      ServerProcess::Start(std::move(options));
  ASSERT_FALSE(started.ok());
  const std::string log = started.status().message();
  EXPECT_NE(log.find("database postgres://tessera:***@127.0.0.1:1/app"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("s3cret"), std::string::npos) << log;
}

}  // namespace
}  // namespace tessera::e2e
