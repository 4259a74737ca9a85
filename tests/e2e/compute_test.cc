// Compute modules end to end (docs/compute.md): the seed's worked example
// "zero to a ticking module" against the real `tessera dev`, the state blob
// across a restart, scoped tokens, invoke contracts and policies with a
// player's ticket, and the `tessera compute` CLI.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/subprocess.h"
#include "tests/e2e/app_template.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace tessera::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kManageToken[] = "e2e-manage-token";
constexpr char kViewToken[] = "e2e-view-token";
// A cold Rust compile of the starter takes a while on a loaded machine.
constexpr int kCompileTimeoutMs = 300'000;

AppTemplate* MakeTemplate() {
  AppTemplateOptions options;
  options.tessera_bin = TESSERA_BIN;
  options.source = fs::path(TESSERA_SOURCE_DIR) / "examples/arena";
  options.kind = "arena";
  options.scratch = "compute";
  return static_cast<AppTemplate*>(
      ::testing::AddGlobalTestEnvironment(new AppTemplate(std::move(options))));
}
AppTemplate* const kTemplate = MakeTemplate();

// The seed's starter module: the counter template's files.
json StarterFiles() {
  json files = json::object();
  const fs::path dir =
      fs::path(TESSERA_SOURCE_DIR) / "sdk/compute-templates/counter";
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel =
        entry.path().lexically_relative(dir).generic_string();
    if (rel == "template.json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files[rel] = std::string((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  }
  return files;
}

// The counter module's persisted count (8 bytes little-endian) and the
// blob's revision, read from the app's store ({-1, 0} when none yet).
struct Count {
  int64_t value = -1;
  int64_t revision = 0;
};
Count ReadCount(const fs::path& db, const std::string& module) {
  Count count;
  sqlite3* conn = nullptr;
  if (sqlite3_open_v2(db.c_str(), &conn, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(conn);
    return count;
  }
  sqlite3_busy_timeout(conn, 2000);
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(conn,
                         "SELECT s.bytes, s.revision FROM compute_state s "
                         "JOIN compute_modules m ON m.id = s.module_id "
                         "WHERE m.name = ?",
                         -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(stmt, 1, module.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(stmt) == SQLITE_ROW &&
        sqlite3_column_bytes(stmt, 0) == 8) {
      const auto* b =
          static_cast<const unsigned char*>(sqlite3_column_blob(stmt, 0));
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
      count.value = static_cast<int64_t>(v);
      count.revision = sqlite3_column_int64(stmt, 1);
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(conn);
  return count;
}

struct Reply {
  int status = 0;
  json body;
};

class ComputeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kTemplate->CopyToAppPath());
    app_ = kTemplate->app_path();
  }

  // `tessera dev APP --port 0` with the scoped tokens.
  void StartDev() { StartDevOn(app_); }
  void StartDevOn(const fs::path& app) {
    server_.reset();
    SpawnOptions options;
    options.argv = {TESSERA_BIN, "dev", app.string(), "--port", "0"};
    options.env = {
        {"TESSERA_API_TOKENS", std::string("manage_compute=") + kManageToken +
                                   ",view_compute_diagnostics=" + kViewToken}};
    options.log_path =
        app_.parent_path() /
        ("compute-server-" + std::to_string(++spawned_) + ".log");
    Result<std::unique_ptr<ServerProcess>> s =
        ServerProcess::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    std::ifstream in(app / ".tessera/dev-secrets.json");
    json secrets = json::parse(in, nullptr, false);
    ASSERT_TRUE(secrets.is_object());
    admin_ = secrets.value("adminToken", "");
  }

  // SIGTERM and wait for the clean exit.
  void StopServer() {
    ASSERT_TRUE(server_->Signal(SIGTERM).ok());
    Result<int> code = server_->WaitExit(60'000);
    ASSERT_TRUE(code.ok()) << code.status().ToString();
    EXPECT_EQ(*code, 0) << server_->Log();
  }

  Reply Call(const std::string& method, const std::string& target,
             const json& body = nullptr, const std::string& token = "") {
    std::vector<std::pair<std::string, std::string>> headers;
    if (!token.empty())
      headers.emplace_back("Authorization", "Bearer " + token);
    Result<net::testing::HttpResult> r =
        net::testing::HttpCall("127.0.0.1", server_->port(), method, target,
                               body.is_null() ? "" : body.dump(), headers);
    EXPECT_TRUE(r.ok()) << method << " " << target;
    if (!r.ok()) return {};
    Reply reply{r->status, json::parse(r->body, nullptr, false)};
    return reply;
  }
  Reply Admin(const std::string& method, const std::string& target,
              const json& body = nullptr) {
    return Call(method, target, body, admin_);
  }

  // Polls `done` every 100 ms (the API is the only way to see progress);
  // false after `timeout_ms`.
  static bool PollUntil(const std::function<bool()>& done, int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
  }

  // Deploys the starter as `module` (alwaysOn) and waits for the compile.
  void DeployStarter(const std::string& module) {
    Reply created =
        Admin("PUT", "/api/compute/modules/" + module, {{"alwaysOn", true}});
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(created.body["enabled"], false);  // modules start disabled
    EXPECT_EQ(created.body["alwaysOn"], true);
    Reply deployed =
        Admin("POST", "/api/compute/modules/" + module + "/versions",
              {{"files", StarterFiles()},
               {"sdkVersion", "0.1.0"},
               {"abiVersion", 1}});
    ASSERT_EQ(deployed.status, 202) << deployed.body;
    EXPECT_EQ(deployed.body["versionNo"], 1);
    json version;
    ASSERT_TRUE(PollUntil(
        [&] {
          Reply v = Admin(
              "GET", "/api/compute/modules/" + module + "/versions?limit=1");
          if (v.status != 200 || v.body["versions"].empty()) return false;
          version = v.body["versions"][0];
          const std::string s = version.value("compileStatus", "");
          return s == "succeeded" || s == "failed";
        },
        kCompileTimeoutMs))
        << "no compile outcome; last " << version;
    ASSERT_EQ(version["compileStatus"], "succeeded") << version["compileLog"];
    EXPECT_GT(version.value("compiledSizeBytes", 0), 0);
  }

  // Sums `field` over the module's usage rows.
  int64_t UsageSum(const std::string& module, const char* field) {
    Reply u = Call("GET", "/api/compute/usage?module=" + module + "&minutes=60",
                   nullptr, kViewToken);
    int64_t sum = 0;
    if (u.status == 200) {
      for (const json& row : u.body["usage"]) sum += row.value(field, 0);
    }
    return sum;
  }

  fs::path app_;
  std::unique_ptr<ServerProcess> server_;
  std::string admin_;
  int spawned_ = 0;
};

// The seed's "zero to a ticking module", step by step, then a restart.
TEST_F(ComputeTest, ZeroToATickingModule) {
  StartDev();
  // 1-3: create (alwaysOn), deploy the starter, wait for the compile.
  DeployStarter("counter");
  if (HasFatalFailure()) return;
  // 4: trigger.
  Reply trigger = Admin("PUT", "/api/compute/modules/counter/triggers",
                        {{"triggerType", "tick"}, {"tickHz", 2}});
  ASSERT_EQ(trigger.status, 200) << trigger.body;
  EXPECT_EQ(trigger.body["triggerType"], "tick");
  EXPECT_EQ(trigger.body["tickHz"], 2);
  // 5: enable.
  Reply enabled =
      Admin("PUT", "/api/compute/modules/counter/enabled", {{"enabled", true}});
  ASSERT_EQ(enabled.status, 200) << enabled.body;
  EXPECT_EQ(enabled.body["enabled"], true);
  EXPECT_EQ(enabled.body["circuitState"], "closed");
  EXPECT_EQ(enabled.body["activeVersion"], 1);

  // 6: observe the init run, the log line, stats and diagnostics.
  json init_run;
  ASSERT_TRUE(PollUntil(
      [&] {
        Reply runs = Call("GET", "/api/compute/runs?module=counter", nullptr,
                          kViewToken);
        for (const json& r : runs.body["runs"]) {
          if (r["triggerSource"] == "init") init_run = r;
        }
        return !init_run.is_null();
      },
      60'000));
  EXPECT_EQ(init_run["success"], true) << init_run;
  EXPECT_EQ(init_run["module"], "counter");
  EXPECT_EQ(init_run["versionNo"], 1);
  EXPECT_FALSE(init_run.value("flowId", "").empty());
  Reply logs =
      Call("GET", "/api/compute/logs?module=counter", nullptr, kViewToken);
  ASSERT_EQ(logs.status, 200);
  bool init_line = false;
  for (const json& l : logs.body["logs"]) {
    init_line = init_line ||
                (l["message"] == "module init" && l["triggerSource"] == "init");
  }
  EXPECT_TRUE(init_line) << logs.body;
  Reply stats =
      Call("GET", "/api/compute/stats?windowMinutes=60", nullptr, kViewToken);
  ASSERT_EQ(stats.status, 200);
  EXPECT_GE(stats.body.value("totalRuns", 0), 1) << stats.body;
  ASSERT_FALSE(stats.body["byModule"].empty());
  EXPECT_EQ(stats.body["byModule"][0]["moduleName"], "counter");
  Reply diag = Call("GET", "/api/compute/diagnostics", nullptr, kViewToken);
  ASSERT_EQ(diag.status, 200);
  EXPECT_EQ(diag.body["moduleCount"], 1);
  EXPECT_EQ(diag.body["enabledModuleCount"], 1);
  EXPECT_EQ(diag.body["loadedModuleCount"], 1);
  EXPECT_GE(diag.body.value("runs24h", 0), 1);
  Reply modules = Call("GET", "/api/compute/modules", nullptr, kViewToken);
  ASSERT_EQ(modules.body["modules"].size(), 1u);
  EXPECT_EQ(modules.body["modules"][0]["loaded"], true);
  EXPECT_EQ(modules.body["modules"][0]["triggerCount"], 1);

  // The ticks go to usage, not run rows; they keep growing.
  ASSERT_TRUE(
      PollUntil([&] { return UsageSum("counter", "ticks") >= 4; }, 60'000));
  const int64_t ticks = UsageSum("counter", "ticks");
  ASSERT_TRUE(
      PollUntil([&] { return UsageSum("counter", "ticks") > ticks; }, 60'000));
  Reply runs = Call("GET", "/api/compute/runs?module=counter&success=false",
                    nullptr, kViewToken);
  EXPECT_TRUE(runs.body["runs"].empty()) << runs.body;
  Result<net::testing::HttpResult> metrics =
      net::testing::HttpCall("127.0.0.1", server_->port(), "GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("tessera_compute_ticks_total"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("tessera_compute_loaded_modules 1"),
            std::string::npos);

  // The state blob survives a restart: the counter continues.
  const fs::path db = app_ / ".tessera/tessera.db";
  ASSERT_TRUE(
      PollUntil([&] { return ReadCount(db, "counter").value >= 4; }, 60'000));
  StopServer();
  const Count stopped = ReadCount(db, "counter");
  ASSERT_GE(stopped.value, 4);
  StartDev();
  Count resumed;
  ASSERT_TRUE(PollUntil(
      [&] {
        resumed = ReadCount(db, "counter");
        return resumed.revision > stopped.revision;
      },
      60'000));
  // A fresh instance ran init, read the blob and counted on from it (one
  // that started from 0 would have written 1).
  EXPECT_GT(resumed.value, stopped.value);
  Reply again = Call("GET", "/api/compute/modules", nullptr, kViewToken);
  ASSERT_EQ(again.body["modules"].size(), 1u);
  EXPECT_EQ(again.body["modules"][0]["enabled"], true);
  EXPECT_EQ(again.body["modules"][0]["activeVersion"], 1);
  int inits = 0;
  ASSERT_TRUE(PollUntil(
      [&] {
        inits = 0;
        Reply r = Call("GET", "/api/compute/runs?module=counter", nullptr,
                       kViewToken);
        for (const json& run : r.body["runs"]) {
          inits += run["triggerSource"] == "init" ? 1 : 0;
        }
        return inits >= 2;
      },
      30'000));
}

// Scoped tokens, the CLI (deploy, trigger, enable, invoke, types) on the
// example's C++ shop, an invoke contract's BAD_REQUEST and invoke policies
// deciding with a player's ticket.
TEST_F(ComputeTest, ScopesInvokePoliciesAndTheCli) {
  StartDev();
  // Scopes: the view token reads, cannot write; no token is 401.
  EXPECT_EQ(Call("GET", "/api/compute/modules", nullptr, kViewToken).status,
            200);
  Reply view_write =
      Call("PUT", "/api/compute/modules/shop", json::object(), kViewToken);
  EXPECT_EQ(view_write.status, 403);
  EXPECT_EQ(view_write.body,
            (json{{"code", "forbidden"},
                  {"message", "this token lacks the manage_compute scope"}}));
  Reply anonymous = Call("GET", "/api/compute/runs");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.body["code"], "unauthorized");
  EXPECT_EQ(Call("GET", "/api/compute/runs", nullptr, "not-a-token").status,
            401);

  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  auto cli = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TESSERA_BIN, "compute"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--url", url, "--token", kManageToken});
    Result<ProcessResult> r = RunProcess(argv);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : ProcessResult{};
  };
  // The view token cannot deploy through the CLI either.
  {
    Result<ProcessResult> r = RunProcess(
        {TESSERA_BIN, "compute", "deploy",
         std::string(TESSERA_SOURCE_DIR) + "/examples/compute/compute/shop",
         "--url", url, "--token", kViewToken});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 1) << r->output;
    EXPECT_NE(r->output.find("403 forbidden"), std::string::npos) << r->output;
  }
  ProcessResult deployed =
      cli({"deploy",
           std::string(TESSERA_SOURCE_DIR) + "/examples/compute/compute/shop"});
  ASSERT_EQ(deployed.exit_code, 0) << deployed.output;
  EXPECT_NE(deployed.output.find("shop: version 1: succeeded (cpp"),
            std::string::npos)
      << deployed.output;
  const std::string contract =
      R"({"description":"Buy items","params":{"amount":{"type":"int",)"
      R"("required":true},"item":{"type":"string"}},)"
      R"("result":{"gold":{"type":"int"}}})";
  ProcessResult trigger =
      cli({"trigger", "shop", "--invoke", "buy", "--contract", contract});
  ASSERT_EQ(trigger.exit_code, 0) << trigger.output;
  ProcessResult enabled = cli({"enable", "shop"});
  ASSERT_EQ(enabled.exit_code, 0) << enabled.output;
  EXPECT_NE(enabled.output.find("shop: enabled"), std::string::npos);

  // The contract is checked before the module runs.
  const std::string buy = "/api/compute/modules/shop/invoke/buy";
  Reply bad = Admin("POST", buy, {{"params", {{"amount", "3"}}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, (json{{"code", "BAD_REQUEST"},
                            {"message",
                             "params.amount: expected int, got "
                             "string"}}));
  ProcessResult bought =
      cli({"invoke", "shop", "buy", R"({"amount": 3, "item": "plank"})"});
  ASSERT_EQ(bought.exit_code, 0) << bought.output;
  EXPECT_NE(bought.output.find("\"gold\": 85"), std::string::npos)
      << bought.output;
  ProcessResult refused = cli({"invoke", "shop", "buy", R"({"item": "x"})"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("400 BAD_REQUEST: params.amount: required"),
            std::string::npos)
      << refused.output;

  // A player: no policy means management tokens only.
  Reply minted = Call("POST", "/api/dev/player-token", {{"userId", "alice"}});
  ASSERT_EQ(minted.status, 200) << minted.body;
  const std::string alice = minted.body["ticket"];
  const std::string bob =
      Call("POST", "/api/dev/player-token", {{"userId", "bob"}}).body["ticket"];
  const json one = {{"params", {{"amount", 1}}}};
  Reply denied = Call("POST", buy, one, alice);
  EXPECT_EQ(denied.status, 403) << denied.body;
  EXPECT_EQ(denied.body["code"], "forbidden");
  Reply policy =
      Admin("PUT", "/api/compute/modules/shop/triggers",
            {{"triggerType", "invoke"},
             {"exportName", "buy"},
             {"invokePolicy", {{"type", "user_in_list"}, {"users", {"alice"}}}},
             {"contract", json::parse(contract)}});
  ASSERT_EQ(policy.status, 200) << policy.body;
  Reply allowed = Call("POST", buy, one, alice);
  ASSERT_EQ(allowed.status, 200) << allowed.body;
  EXPECT_EQ(allowed.body["resultJson"]["gold"], 83);
  EXPECT_EQ(Call("POST", buy, one, bob).status, 403);
  Admin("PUT", "/api/compute/modules/shop/triggers",
        {{"triggerType", "invoke"},
         {"exportName", "buy"},
         {"invokePolicy", {{"type", "anyone"}}},
         {"contract", json::parse(contract)}});
  EXPECT_EQ(Call("POST", buy, one, bob).status, 200);

  // TypeScript from the contracts.
  ProcessResult types = cli({"types"});
  ASSERT_EQ(types.exit_code, 0) << types.output;
  EXPECT_NE(types.output.find("export interface ShopBuyParams"),
            std::string::npos)
      << types.output;
  EXPECT_NE(types.output.find("amount: number;"), std::string::npos);
  EXPECT_NE(types.output.find("item?: string;"), std::string::npos);

  // Every invoke run is a row; the refused ones never ran.
  Reply runs =
      Call("GET", "/api/compute/runs?module=shop", nullptr, kViewToken);
  int invokes = 0;
  for (const json& r : runs.body["runs"]) {
    invokes += r["triggerSource"] == "invoke" ? 1 : 0;
  }
  EXPECT_EQ(invokes, 3);
}

// examples/compute as `tessera dev examples/compute` runs it: both modules
// deployed from the manifest at boot, compiled, enabled, their triggers
// bound; world-sim (alwaysOn) loaded; the shop callable by a player.
TEST_F(ComputeTest, TheExampleAppBootsFromItsManifest) {
  // The example refers to the arena kind of examples/arena: copy both.
  const fs::path root = app_.parent_path() / "examples";
  fs::remove_all(root);
  fs::create_directories(root);
  for (const char* name : {"arena", "compute"}) {
    fs::copy(fs::path(TESSERA_SOURCE_DIR) / "examples" / name, root / name,
             fs::copy_options::recursive);
    fs::remove_all(root / name / ".tessera");
  }
  StartDevOn(root / "compute");
  EXPECT_NE(server_->Log().find("compute: world-sim: deployed version 1"),
            std::string::npos)
      << server_->Log();
  json modules;
  ASSERT_TRUE(PollUntil(
      [&] {
        modules = Admin("GET", "/api/compute/modules").body["modules"];
        int ready = 0;
        for (const json& m : modules) {
          ready += m["enabled"] == true && m["activeVersion"] == 1 ? 1 : 0;
        }
        return ready == 2;
      },
      kCompileTimeoutMs))
      << modules;
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules[0]["name"], "shop");  // by name
  EXPECT_EQ(modules[0]["triggerCount"], 2);
  EXPECT_EQ(modules[1]["name"], "world-sim");
  EXPECT_EQ(modules[1]["alwaysOn"], true);
  EXPECT_EQ(modules[1]["triggerCount"], 3);
  ASSERT_TRUE(PollUntil(
      [&] {
        Reply r = Admin("GET", "/api/compute/runs?module=world-sim");
        for (const json& run : r.body["runs"]) {
          if (run["triggerSource"] == "init" && run["success"] == true) {
            return true;
          }
        }
        return false;
      },
      60'000));
  const std::string ticket =
      Call("POST", "/api/dev/player-token", {{"userId", "carol"}})
          .body["ticket"];
  Reply bought =
      Call("POST", "/api/compute/modules/shop/invoke/buy",
           {{"params", {{"amount", 2}, {"item", "lantern"}}}}, ticket);
  ASSERT_EQ(bought.status, 200) << bought.body;
  EXPECT_EQ(bought.body["resultJson"]["cost"], 40);
  EXPECT_EQ(bought.body["resultJson"]["gold"], 60);
  Reply bad = Call("POST", "/api/compute/modules/shop/invoke/buy",
                   {{"params", {{"item", "lantern"}}}}, ticket);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["message"], "params.amount: required");
  Reply forecast =
      Call("POST", "/api/compute/modules/world-sim/invoke/forecast",
           json::object(), ticket);
  ASSERT_EQ(forecast.status, 200) << forecast.body;
  EXPECT_TRUE(forecast.body["resultJson"].is_object());
  // A second boot on the same sources deploys nothing new.
  StopServer();
  StartDevOn(root / "compute");
  EXPECT_EQ(server_->Log().find("deployed version"), std::string::npos)
      << server_->Log();
  Reply versions = Admin("GET", "/api/compute/modules/shop/versions");
  EXPECT_EQ(versions.body["versions"].size(), 1u);
}

}  // namespace
}  // namespace tessera::e2e
