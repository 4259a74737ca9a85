// The compute API over a real ComputeEngine on a MemoryComputeStore, with a
// compiler that "compiles" a C++ source naming a test module (tests/guests/
// compute_*) into that module: scopes, strict bodies, every route's JSON,
// invoke contracts and policies with player tickets, the dev player token,
// the manifest's boot sync and the /metrics counters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "compute/compute_test_guests.h"
#include "compute/memory_compute_store.h"
#include "compute/policy.h"
#include "net/router.h"
#include "net/ticket.h"
#include "server/compute_service.h"

namespace tessera::server {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kAdmin[] = "admin-token";
constexpr char kManage[] = "manage-token";
constexpr char kView[] = "view-token";
constexpr char kSecret[] = "ticket-secret";

// A C++ source whose line "// test-guest: NAME" picks the module.
std::string SourceFor(const std::string& guest) {
  return "#include <tessera/compute.h>\n// test-guest: " + guest + "\n";
}

class TestGuestCompiler final : public compute::SourceCompiler {
 public:
  explicit TestGuestCompiler(fs::path dir) : dir_(std::move(dir)) {}
  compute::CompileResult Compile(const compute::VersionRecord& v) override {
    compute::CompileResult r;
    for (const auto& [path, text] : v.files) {
      const size_t at = text.find("// test-guest: ");
      if (at == std::string::npos) continue;
      std::string name = text.substr(at + 15);
      name = name.substr(0, name.find('\n'));
      Result<std::vector<uint8_t>> bytes =
          compute::testing::ComputeGuestBytes(name);
      if (!bytes.ok()) {
        r.log = "error: " + bytes.status().message();
        return r;
      }
      r.wasm = dir_ / (v.source_hash + ".wasm");
      std::ofstream out(r.wasm, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes->data()),
                static_cast<std::streamsize>(bytes->size()));
      r.ok = true;
      r.size_bytes = static_cast<int64_t>(bytes->size());
      r.log = "compiled test module " + name;
      return r;
    }
    r.log = "error: no test-guest line";
    return r;
  }

 private:
  fs::path dir_;
};

struct Reply {
  int status = 0;
  json body;
  net::HttpResponse raw;
};

class ComputeRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera-compute-routes-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "artifacts");
    fs::create_directories(dir_ / "cache");
    ComputeServiceOptions options;
    Result<ApiTokens> tokens =
        ApiTokens::Parse(std::string("manage_compute=") + kManage +
                             ",view_compute_diagnostics=" + kView,
                         kAdmin);
    ASSERT_TRUE(tokens.ok());
    options.tokens = *tokens;
    options.ticket_secret = kSecret;
    options.dev = true;
    options.engine.cache_dir = dir_ / "cache";
    options.engine.ceilings = compute::DefaultCeilings();
    options.engine.ceilings.max_tick_hz = 60;
    options.engine.flush_ms = 50;
    service_ = std::make_unique<ComputeService>(
        std::make_unique<compute::MemoryComputeStore>(),
        std::make_unique<TestGuestCompiler>(dir_ / "artifacts"), nullptr,
        metrics_, std::move(options));
    ASSERT_TRUE(service_->Start().ok());
  }
  void TearDown() override {
    service_.reset();
    fs::remove_all(dir_);
  }

  Reply Call(const std::string& method, const std::string& target,
             const json& body = nullptr, const std::string& token = kAdmin) {
    net::HttpRequest r;
    r.method = method;
    r.target = target;
    if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
    if (!body.is_null()) r.body = body.dump();
    Reply reply;
    reply.raw = service_->Handle(r);
    reply.status = reply.raw.status;
    reply.body = json::parse(reply.raw.body, nullptr, false);
    return reply;
  }

  // Deploys test module `guest` as `module` and waits for its compile (on
  // the engine's queue thread).
  json Deploy(const std::string& module, const std::string& guest) {
    Call("PUT", "/api/compute/modules/" + module, json::object());
    Reply d = Call("POST", "/api/compute/modules/" + module + "/versions",
                   {{"files", {{"main.cc", SourceFor(guest)}}}});
    EXPECT_EQ(d.status, 202) << d.body;
    return WaitCompiled(module, d.body.value("versionNo", 0));
  }
  json WaitCompiled(const std::string& module, int64_t version_no) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      Reply v = Call("GET", "/api/compute/modules/" + module + "/versions");
      for (const json& version : v.body["versions"]) {
        if (version["versionNo"] != version_no) continue;
        const std::string s = version["compileStatus"];
        if (s == "succeeded" || s == "failed") return version;
      }
      std::this_thread::yield();
    }
    ADD_FAILURE() << "version " << version_no << " of " << module
                  << " did not finish compiling";
    return nullptr;
  }

  std::string PlayerTicket(const std::string& user, int64_t ttl = 600) {
    net::Ticket t;
    t.resource_kind = "player";
    t.resource_id = "*";
    t.subscriber_id = user;
    t.expires_unix = RealWallClock::Get()->UnixNowSecs() + ttl;
    return net::MintTicket(kSecret, t);
  }

  fs::path dir_;
  Metrics metrics_;
  std::unique_ptr<ComputeService> service_;
};

TEST_F(ComputeRoutesTest, ScopesDecideWhoMayDoWhat) {
  Reply none = Call("GET", "/api/compute/modules", nullptr, "");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.body["code"], "unauthorized");
  EXPECT_NE(none.body.value("message", "").find("view_compute_diagnostics"),
            std::string::npos);
  EXPECT_EQ(Call("GET", "/api/compute/modules", nullptr, "bogus").status, 401);
  EXPECT_EQ(Call("GET", "/api/compute/modules", nullptr, kView).status, 200);
  EXPECT_EQ(Call("GET", "/api/compute/modules", nullptr, kManage).status, 200);
  Reply view_writes =
      Call("PUT", "/api/compute/modules/m", json::object(), kView);
  EXPECT_EQ(view_writes.status, 403);
  EXPECT_EQ(view_writes.body["code"], "forbidden");
  EXPECT_EQ(view_writes.body["message"],
            "this token lacks the manage_compute scope");
  EXPECT_EQ(
      Call("PUT", "/api/compute/modules/m", json::object(), kManage).status,
      201);
  EXPECT_EQ(
      Call("PUT", "/api/compute/modules/m", json::object(), kAdmin).status,
      200);
  // A player's ticket is no API token.
  EXPECT_EQ(
      Call("GET", "/api/compute/modules", nullptr, PlayerTicket("a")).status,
      401);
}

TEST_F(ComputeRoutesTest, RoutesMethodsAndStrictBodies) {
  Reply missing = Call("GET", "/api/compute/nothing");
  EXPECT_EQ(missing.status, 404);
  Reply wrong = Call("POST", "/api/compute/modules", json::object());
  EXPECT_EQ(wrong.status, 405);
  ASSERT_EQ(wrong.raw.headers.size(), 1u);
  EXPECT_EQ(wrong.raw.headers[0].second, "GET");
  // The method is told without a token.
  EXPECT_EQ(Call("PATCH", "/api/compute/modules/m", json::object(), "").status,
            405);
  Reply typo = Call("PUT", "/api/compute/modules/m", {{"alwayson", true}});
  EXPECT_EQ(typo.status, 400);
  EXPECT_EQ(typo.body["message"],
            "body: unknown field \"alwayson\" (fields: description, alwaysOn)");
  Call("PUT", "/api/compute/modules/m", json::object());
  Reply cross =
      Call("PUT", "/api/compute/modules/m/triggers",
           {{"triggerType", "tick"}, {"tickHz", 2}, {"exportName", "x"}});
  EXPECT_EQ(cross.status, 400);
  EXPECT_EQ(cross.body["message"],
            "body: \"exportName\" does not apply to a tick trigger");
  Reply query = Call("GET", "/api/compute/runs?modul=m");
  EXPECT_EQ(query.status, 400);
  EXPECT_NE(query.body.value("message", "")
                .find("unknown query parameter "
                      "\"modul\""),
            std::string::npos);
  EXPECT_EQ(Call("GET", "/api/compute/runs?limit=0").status, 400);
  Reply not_json = Call("PUT", "/api/compute/policy", nullptr);
  EXPECT_EQ(not_json.status, 200);  // an empty patch changes nothing
  net::HttpRequest bad;
  bad.method = "PUT";
  bad.target = "/api/compute/policy";
  bad.headers["authorization"] = std::string("Bearer ") + kAdmin;
  bad.body = "{nope";
  EXPECT_EQ(service_->Handle(bad).status, 400);
}

TEST_F(ComputeRoutesTest, DataEventTriggersTakeTheirFilters) {
  Call("PUT", "/api/compute/modules/m", json::object());
  Reply changed = Call("PUT", "/api/compute/modules/m/triggers",
                       {{"triggerType", "event"},
                        {"onEvent", "field_changed"},
                        {"entityType", "Item"},
                        {"fieldName", "qty"},
                        {"debounceMs", 50}});
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(changed.body["entityType"], "Item");
  EXPECT_EQ(changed.body["fieldName"], "qty");
  Reply invoked = Call("PUT", "/api/compute/modules/m/triggers",
                       {{"triggerType", "event"},
                        {"onEvent", "function_invoked"},
                        {"functionName", "shop.buy"}});
  ASSERT_EQ(invoked.status, 200) << invoked.body;
  Reply wrong = Call("PUT", "/api/compute/modules/m/triggers",
                     {{"triggerType", "event"},
                      {"onEvent", "row_created"},
                      {"fieldName", "qty"}});
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(wrong.body["message"],
            "fieldName does not apply to onEvent \"row_created\"");
  Reply tick =
      Call("PUT", "/api/compute/modules/m/triggers",
           {{"triggerType", "tick"}, {"tickHz", 1}, {"entityType", "x"}});
  EXPECT_EQ(tick.status, 400);
  Reply list = Call("GET", "/api/compute/modules/m/triggers");
  ASSERT_EQ(list.body["triggers"].size(), 2u);
  EXPECT_EQ(list.body["triggers"][0]["onEvent"], "field_changed");
  EXPECT_EQ(list.body["triggers"][0]["fieldName"], "qty");
  EXPECT_EQ(list.body["triggers"][0]["functionName"], "");
  EXPECT_EQ(list.body["triggers"][1]["functionName"], "shop.buy");
}

TEST_F(ComputeRoutesTest, ModulesVersionsTriggersAndEnable) {
  Reply created = Call("PUT", "/api/compute/modules/echo-mod",
                       {{"description", "echoes"}, {"alwaysOn", true}});
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.body["name"], "echo-mod");
  EXPECT_EQ(created.body["enabled"], false);
  EXPECT_EQ(created.body["alwaysOn"], true);
  EXPECT_EQ(created.body["latestVersion"], nullptr);
  // Enabling needs a compiled version.
  EXPECT_EQ(
      Call("PUT", "/api/compute/modules/echo-mod/enabled", {{"enabled", true}})
          .status,
      409);
  json version = Deploy("echo-mod", "echo");
  EXPECT_EQ(version["compileStatus"], "succeeded") << version;
  EXPECT_EQ(version["language"], "cpp");
  EXPECT_EQ(version["compileLog"], "compiled test module echo");
  EXPECT_GT(version["compiledSizeBytes"], 0);
  // A kept field stays when left out.
  Reply kept = Call("PUT", "/api/compute/modules/echo-mod", json::object());
  EXPECT_EQ(kept.body["alwaysOn"], true);
  EXPECT_EQ(kept.body["description"], "echoes");
  Reply tick = Call("PUT", "/api/compute/modules/echo-mod/triggers",
                    {{"triggerType", "tick"}, {"tickHz", 2}});
  ASSERT_EQ(tick.status, 200) << tick.body;
  EXPECT_GT(tick.body["id"], 0);
  Reply on =
      Call("PUT", "/api/compute/modules/echo-mod/enabled", {{"enabled", true}});
  ASSERT_EQ(on.status, 200) << on.body;
  EXPECT_EQ(on.body["enabled"], true);
  EXPECT_EQ(on.body["activeVersion"], 1);
  Reply list = Call("GET", "/api/compute/modules", nullptr, kView);
  ASSERT_EQ(list.body["modules"].size(), 1u);
  const json& m = list.body["modules"][0];
  EXPECT_EQ(m["triggerCount"], 1);
  EXPECT_EQ(m["latestVersion"]["compileStatus"], "succeeded");
  Reply triggers = Call("GET", "/api/compute/modules/echo-mod/triggers");
  ASSERT_EQ(triggers.body["triggers"].size(), 1u);
  EXPECT_EQ(triggers.body["triggers"][0]["triggerType"], "tick");
  const int64_t id = triggers.body["triggers"][0]["id"];
  EXPECT_EQ(Call("DELETE",
                 "/api/compute/modules/echo-mod/triggers/" + std::to_string(id))
                .status,
            200);
  EXPECT_EQ(Call("DELETE", "/api/compute/modules/echo-mod/triggers/x").status,
            400);
  EXPECT_EQ(Call("DELETE", "/api/compute/modules/echo-mod").status, 200);
  EXPECT_EQ(Call("GET", "/api/compute/modules/echo-mod/versions").status, 404);
}

TEST_F(ComputeRoutesTest, InvokeContractsPoliciesAndPlayers) {
  json v = Deploy("shop", "echo");
  ASSERT_EQ(v["compileStatus"], "succeeded");
  ASSERT_EQ(
      Call(
          "PUT", "/api/compute/modules/shop/triggers",
          {{"triggerType", "invoke"},
           {"exportName", "caller"},
           {"contract",
            {{"params", {{"amount", {{"type", "int"}, {"required", true}}}}}}}})
          .status,
      200);
  ASSERT_EQ(
      Call("PUT", "/api/compute/modules/shop/enabled", {{"enabled", true}})
          .status,
      200);
  const std::string path = "/api/compute/modules/shop/invoke/caller";
  Reply bad = Call("POST", path, {{"params", {{"amount", "3"}}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["code"], "BAD_REQUEST");
  EXPECT_EQ(bad.body["message"], "params.amount: expected int, got string");
  Reply ok = Call("POST", path, {{"params", {{"amount", 3}}}}, kManage);
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.body["resultJson"]["caller"], "");
  EXPECT_EQ(ok.body["resultJson"]["exportName"], "caller");
  EXPECT_GT(ok.body["fuelUsed"], 0);
  EXPECT_FALSE(ok.body.value("flowId", "").empty());
  // No policy: management tokens only.
  Reply denied =
      Call("POST", path, {{"params", {{"amount", 3}}}}, PlayerTicket("alice"));
  EXPECT_EQ(denied.status, 403) << denied.body;
  EXPECT_EQ(Call("POST", path, {{"params", {{"amount", 3}}}}, kView).status,
            403);
  EXPECT_EQ(Call("POST", path, {{"params", {{"amount", 3}}}}, "").status, 401);
  EXPECT_EQ(Call("POST", path, {{"params", {{"amount", 3}}}},
                 PlayerTicket("alice", -10))
                .status,
            401);
  ASSERT_EQ(Call("PUT", "/api/compute/modules/shop/triggers",
                 {{"triggerType", "invoke"},
                  {"exportName", "caller"},
                  {"invokePolicy", {{"type", "anyone"}}}})
                .status,
            200);
  Reply player =
      Call("POST", path, {{"params", json::object()}}, PlayerTicket("alice"));
  ASSERT_EQ(player.status, 200) << player.body;
  EXPECT_EQ(player.body["resultJson"]["caller"], "alice");
  // Bytes that are not JSON come back as base64.
  Call("PUT", "/api/compute/modules/shop/triggers",
       {{"triggerType", "invoke"}, {"exportName", "bytes"}});
  Reply bytes =
      Call("POST", "/api/compute/modules/shop/invoke/bytes", json::object());
  ASSERT_EQ(bytes.status, 200) << bytes.body;
  EXPECT_EQ(bytes.body["resultBase64"], "AP8B");
  EXPECT_FALSE(bytes.body.contains("resultJson"));
  // A failing run is 422 and a row in the runs.
  Call("PUT", "/api/compute/modules/shop/triggers",
       {{"triggerType", "invoke"}, {"exportName", "fail"}});
  Reply fail = Call("POST", "/api/compute/modules/shop/invoke/fail",
                    {{"params", {{"reason", "out of stock"}}}});
  EXPECT_EQ(fail.status, 422) << fail.body;
  EXPECT_NE(fail.body.value("message", "").find("out of stock"),
            std::string::npos);
  EXPECT_EQ(
      Call("POST", "/api/compute/modules/shop/invoke/nope", json::object())
          .status,
      404);
  Reply runs = Call("GET", "/api/compute/runs?module=shop&success=false",
                    nullptr, kView);
  ASSERT_EQ(runs.status, 200);
  ASSERT_FALSE(runs.body["runs"].empty());
  EXPECT_EQ(runs.body["runs"][0]["entry"], "fail");
  EXPECT_EQ(runs.body["runs"][0]["triggerSource"], "invoke");
}

TEST_F(ComputeRoutesTest, DevPlayerTokenMintsAPlayerTicket) {
  net::HttpRequest r;
  r.method = "POST";
  r.target = "/api/dev/player-token";
  r.body = R"({"userId": "bob"})";
  net::HttpResponse response = service_->Handle(r);
  ASSERT_EQ(response.status, 200) << response.body;
  json body = json::parse(response.body);
  EXPECT_EQ(body["userId"], "bob");
  net::TicketCheck check =
      net::VerifyTicket(kSecret, body["ticket"].get<std::string>(), "player",
                        "*", RealWallClock::Get()->UnixNowSecs());
  EXPECT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "bob");
  r.body = R"({"user": "bob"})";
  EXPECT_EQ(service_->Handle(r).status, 400);
  r.method = "GET";
  EXPECT_EQ(service_->Handle(r).status, 405);
}

TEST_F(ComputeRoutesTest, MonitoringAndMetrics) {
  json v = Deploy("ticker", "counter");
  ASSERT_EQ(v["compileStatus"], "succeeded");
  Call("PUT", "/api/compute/modules/ticker", {{"alwaysOn", true}});
  Call("PUT", "/api/compute/modules/ticker/enabled", {{"enabled", true}});
  // The init run of the alwaysOn module.
  json init;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (init.is_null() && std::chrono::steady_clock::now() < deadline) {
    Reply runs = Call("GET", "/api/compute/runs?module=ticker", nullptr, kView);
    for (const json& r : runs.body["runs"]) {
      if (r["triggerSource"] == "init") init = r;
    }
    std::this_thread::yield();
  }
  ASSERT_FALSE(init.is_null());
  EXPECT_EQ(init["success"], true);
  Reply logs = Call("GET", "/api/compute/logs?module=ticker", nullptr, kView);
  ASSERT_FALSE(logs.body["logs"].empty());
  EXPECT_EQ(logs.body["logs"].back()["module"], "ticker");
  Reply stats =
      Call("GET", "/api/compute/stats?windowMinutes=5", nullptr, kView);
  EXPECT_GE(stats.body["totalRuns"], 1);
  Reply diag = Call("GET", "/api/compute/diagnostics", nullptr, kView);
  EXPECT_EQ(diag.body["moduleCount"], 1);
  EXPECT_EQ(diag.body["enabledModuleCount"], 1);
  Reply usage = Call("GET", "/api/compute/usage?module=ticker", nullptr, kView);
  EXPECT_EQ(usage.status, 200);
  Reply policy = Call("GET", "/api/compute/policy", nullptr, kView);
  EXPECT_EQ(policy.body["maxTickHz"], 10);
  Reply patched = Call("PUT", "/api/compute/policy", {{"maxTickHz", 20}});
  EXPECT_EQ(patched.body["maxTickHz"], 20);
  Reply ceiling = Call("PUT", "/api/compute/policy", {{"maxTickHz", 100}});
  EXPECT_EQ(ceiling.status, 400);
  EXPECT_EQ(Call("POST", "/api/compute/events", {{"name", "x"}}).status, 202);
  service_->RefreshMetrics();
  const std::string text = metrics_.Render();
  EXPECT_NE(text.find("tessera_compute_runs_total"), std::string::npos);
  EXPECT_NE(text.find("tessera_compute_loaded_modules 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tessera_compute_compile_queue 0"), std::string::npos);
}

TEST_F(ComputeRoutesTest, ManifestSyncDeploysOnceAndUpsertsTriggers) {
  const fs::path app = dir_ / "app";
  fs::create_directories(app / "compute/shop");
  std::ofstream(app / "compute/shop/shop.cc") << SourceFor("echo");
  auto manifest_with = [&](const std::string& trigger) {
    Result<app::Manifest> m = app::ParseManifest(
        R"({"name":"demo","shards":[{"name":"k","wasm":"k.wasm"}],
            "compute":[{"name":"shop","source":"compute/shop",
                        "triggers":[)" +
            trigger + "]}]}",
        app, (app / "tessera.json").string());
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return *m;
  };
  const app::Manifest m = manifest_with(
      R"({"triggerType":"invoke","exportName":"echo",
          "invokePolicy":{"type":"anyone"}})");
  std::vector<std::string> lines;
  auto log = [&](const std::string& line) { lines.push_back(line); };
  ASSERT_TRUE(service_->SyncManifest(m, log).ok());
  ASSERT_EQ(lines.size(), 1u);
  json v = WaitCompiled("shop", 1);
  EXPECT_EQ(v["compileStatus"], "succeeded");
  // Again with the same sources: no new version.
  ASSERT_TRUE(service_->SyncManifest(m, log).ok());
  EXPECT_EQ(lines.size(), 1u);
  Reply versions = Call("GET", "/api/compute/modules/shop/versions");
  EXPECT_EQ(versions.body["versions"].size(), 1u);
  Reply triggers = Call("GET", "/api/compute/modules/shop/triggers");
  ASSERT_EQ(triggers.body["triggers"].size(), 1u);
  EXPECT_EQ(triggers.body["triggers"][0]["invokePolicy"]["type"], "anyone");
  // enabled (the default) once it compiled.
  Reply modules = Call("GET", "/api/compute/modules");
  EXPECT_EQ(modules.body["modules"][0]["enabled"], true);
  // Changed sources: a new version.
  std::ofstream(app / "compute/shop/shop.cc", std::ios::app) << "// v2\n";
  ASSERT_TRUE(service_->SyncManifest(m, log).ok());
  EXPECT_EQ(lines.size(), 2u);
  EXPECT_EQ(WaitCompiled("shop", 2)["compileStatus"], "succeeded");
  // A bad trigger names its place in the manifest.
  Status bad = service_->SyncManifest(
      manifest_with(R"({"triggerType":"tick","tickHz":-1})"), log);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(),
            (app / "tessera.json").string() +
                ": compute[0].triggers[0]: a tick trigger needs \"tickHz\", a "
                "number above 0");
}

}  // namespace
}  // namespace tessera::server
