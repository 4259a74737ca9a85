// The join routes through the Router a ComputeService registers them on,
// over a real engine with the compute test modules: guest sign-in (the
// ticket it mints, the per-address rate limit, dev mode vs
// TESSERA_GUEST_AUTH) and POST /api/functions/<name> (by "module.export"
// and bare name, the same replies and errors as computeInvoke, an unknown
// function, an ambiguous bare name).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "compute/engine_test_fixture.h"
#include "compute/memory_compute_store.h"
#include "compute/policy.h"
#include "net/router.h"
#include "net/ticket.h"
#include "server/compute_service.h"
#include "server/function_routes.h"
#include "server/guest_auth.h"

namespace tessera::server {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kAdmin[] = "admin-token";
constexpr char kView[] = "view-token";
constexpr char kSecret[] = "ticket-secret";

struct Reply {
  int status = 0;
  json body;
  net::HttpResponse raw;
};

net::HttpRequest Request(const std::string& method, const std::string& target,
                         const json& body, const std::string& token,
                         const std::string& address = "10.0.0.1") {
  net::HttpRequest r;
  r.method = method;
  r.target = target;
  if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
  if (!body.is_null()) r.body = body.dump();
  r.remote_address = address;
  return r;
}

Reply Parse(net::HttpResponse raw) {
  Reply reply;
  reply.status = raw.status;
  reply.body = json::parse(raw.body, nullptr, false);
  reply.raw = std::move(raw);
  return reply;
}

// Sets an environment variable for one scope (the tests that read it do so
// before any request runs).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    setenv(name, value, 1);
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

class JoinRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv(kEnvGuestAuth);
    unsetenv(kEnvGuestAuthRate);
    dir_ = fs::temp_directory_path() /
           ("tessera-join-routes-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cache");
  }
  void TearDown() override {
    service_.reset();
    fs::remove_all(dir_);
  }

  // A service (dev mode or not) with its routes on `router_`.
  void StartService(bool dev) {
    ComputeServiceOptions options;
    Result<ApiTokens> tokens = ApiTokens::Parse(
        std::string("view_compute_diagnostics=") + kView, kAdmin);
    ASSERT_TRUE(tokens.ok());
    options.tokens = *tokens;
    options.ticket_secret = kSecret;
    options.dev = dev;
    options.engine.cache_dir = dir_ / "cache";
    options.engine.ceilings = compute::DefaultCeilings();
    options.engine.flush_ms = 50;
    service_ = std::make_unique<ComputeService>(
        std::make_unique<compute::MemoryComputeStore>(),
        std::make_unique<compute::testing::TestCompiler>(dir_ / "artifacts"),
        nullptr, metrics_, std::move(options));
    service_->RegisterRoutes(router_);
    ASSERT_TRUE(service_->Start().ok());
  }

  // Through the router, as the network layer would.
  Reply Call(const std::string& method, const std::string& target,
             const json& body = nullptr, const std::string& token = kAdmin,
             const std::string& address = "10.0.0.1") {
    const std::string path = target.substr(0, target.find('?'));
    net::HttpHandler* handler = router_.FindHttp(path);
    if (handler == nullptr) return Reply{404, nullptr, {}};
    return Parse(
        handler->Handle(Request(method, target, body, token, address)));
  }

  // Module `module` running test module echo, its export "caller" an
  // invoke trigger anyone may call (params: {"amount": int} required when
  // `contract`).
  void DeployEcho(const std::string& module, bool contract = false) {
    ASSERT_EQ(
        Call("PUT", "/api/compute/modules/" + module, json::object()).status /
            100,
        2);
    Reply d = Call("POST", "/api/compute/modules/" + module + "/versions",
                   {{"files", {{"module.cc", "// test module: echo\n"}}}});
    ASSERT_EQ(d.status, 202) << d.body;
    const int64_t version = d.body.value("versionNo", 0);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    bool compiled = false;
    while (!compiled && std::chrono::steady_clock::now() < deadline) {
      Reply v = Call("GET", "/api/compute/modules/" + module + "/versions");
      for (const json& row : v.body["versions"]) {
        compiled = compiled || (row["versionNo"] == version &&
                                row["compileStatus"] == "succeeded");
      }
      if (!compiled) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(compiled) << module << " did not compile";
    json trigger = {{"triggerType", "invoke"},
                    {"exportName", "caller"},
                    {"invokePolicy", {{"type", "anyone"}}}};
    if (contract) {
      trigger["contract"] = {
          {"params", {{"amount", {{"type", "int"}, {"required", true}}}}}};
    }
    ASSERT_EQ(
        Call("PUT", "/api/compute/modules/" + module + "/triggers", trigger)
            .status,
        200);
    ASSERT_EQ(Call("PUT", "/api/compute/modules/" + module + "/enabled",
                   {{"enabled", true}})
                  .status,
              200);
  }

  fs::path dir_;
  Metrics metrics_;
  net::Router router_;
  std::unique_ptr<ComputeService> service_;
};

TEST_F(JoinRoutesTest, GuestSignInMintsAPlayerTicketForANewGuest) {
  StartService(/*dev=*/true);
  Reply a = Call("POST", "/api/auth/guest", nullptr, "");
  ASSERT_EQ(a.status, 200) << a.raw.body;
  const std::string user = a.body.value("userId", "");
  EXPECT_TRUE(std::regex_match(user, std::regex("guest-[0-9a-f]{16}"))) << user;
  const int64_t now = RealWallClock::Get()->UnixNowSecs();
  net::TicketCheck check =
      net::VerifyTicketAnyResource(kSecret, a.body.value("token", ""), now);
  ASSERT_EQ(check.error, net::TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.resource_kind, "player");
  EXPECT_EQ(check.ticket.resource_id, "*");
  EXPECT_EQ(check.ticket.subscriber_id, user);
  EXPECT_EQ(a.body["expires"], check.ticket.expires_unix);
  EXPECT_NEAR(check.ticket.expires_unix - now, net::kDefaultTicketLifetimeSecs,
              2);
  // Every sign-in is a new guest; {} is the same as no body.
  std::set<std::string> users = {user};
  for (int i = 0; i < 5; ++i) {
    Reply b = Call("POST", "/api/auth/guest", json::object(), "");
    ASSERT_EQ(b.status, 200);
    users.insert(b.body.value("userId", ""));
  }
  EXPECT_EQ(users.size(), 6u);

  Reply get = Call("GET", "/api/auth/guest", nullptr, "");
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(get.body["code"], "method_not_allowed");
  Reply fields = Call("POST", "/api/auth/guest", {{"userId", "bob"}}, "");
  EXPECT_EQ(fields.status, 400);
  EXPECT_EQ(fields.body["message"],
            "the body takes no fields (got \"userId\")");
  EXPECT_EQ(Call("POST", "/api/auth/guest", json::array(), "").status, 400);
}

TEST_F(JoinRoutesTest, GuestSignInIsRateLimitedPerAddress) {
  FakeClock clock(1'000'000);
  GuestAuthOptions options;
  options.ticket_secret = kSecret;
  options.per_sec = 2;
  options.burst = 3;
  options.clock = &clock;
  GuestAuth auth(options);
  auto sign_in = [&](const std::string& address) {
    return Parse(
        auth.Handle(Request("POST", "/api/auth/guest", nullptr, "", address)));
  };
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sign_in("10.0.0.1").status, 200);
  Reply over = sign_in("10.0.0.1");
  EXPECT_EQ(over.status, 429);
  EXPECT_EQ(over.body["code"], "rate_limited");
  ASSERT_EQ(over.raw.headers.size(), 1u);
  EXPECT_EQ(over.raw.headers[0].first, "Retry-After");
  EXPECT_EQ(over.raw.headers[0].second, "1");
  // Another address has its own bucket.
  EXPECT_EQ(sign_in("10.0.0.2").status, 200);
  // Half a second gives one more (2 a second), not two.
  clock.Advance(500'000);
  EXPECT_EQ(sign_in("10.0.0.1").status, 200);
  EXPECT_EQ(sign_in("10.0.0.1").status, 429);
  // A refused request (a bad body) takes nothing.
  clock.Advance(500'000);
  EXPECT_EQ(Parse(auth.Handle(Request("POST", "/api/auth/guest", {{"x", 1}}, "",
                                      "10.0.0.1")))
                .status,
            400);
  EXPECT_EQ(sign_in("10.0.0.1").status, 200);

  // The table of addresses stays bounded: idle buckets are forgotten.
  for (size_t i = 0; i < GuestAuth::kMaxAddresses + 10; ++i) {
    sign_in("192.168." + std::to_string(i / 256) + "." +
            std::to_string(i % 256));
  }
  EXPECT_LE(auth.tracked_addresses(), GuestAuth::kMaxAddresses);

  // per_sec 0: no limit.
  options.per_sec = 0;
  GuestAuth unlimited(options);
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(
        Parse(unlimited.Handle(Request("POST", "/api/auth/guest", nullptr, "")))
            .status,
        200);
  }
}

TEST_F(JoinRoutesTest, GuestSignInOnlyInDevModeOrWithTheEnvironment) {
  {
    StartService(/*dev=*/false);
    EXPECT_EQ(router_.FindHttp("/api/auth/guest"), nullptr);
    // The functions route is there either way.
    EXPECT_NE(router_.FindHttp("/api/functions/x"), nullptr);
  }
  {
    ScopedEnv on(kEnvGuestAuth, "on");
    router_ = net::Router();
    StartService(/*dev=*/false);
    EXPECT_EQ(Call("POST", "/api/auth/guest", nullptr, "").status, 200);
  }
  {
    // A value that is neither on nor off leaves it off (and says so).
    ScopedEnv bad(kEnvGuestAuth, "yes");
    router_ = net::Router();
    StartService(/*dev=*/false);
    EXPECT_EQ(router_.FindHttp("/api/auth/guest"), nullptr);
  }

  Result<std::optional<GuestAuthOptions>> dev =
      GuestAuthFromEnv(true, GuestAuthOptions{});
  ASSERT_TRUE(dev.ok());
  ASSERT_TRUE(dev->has_value());
  EXPECT_EQ((*dev)->per_sec, 10);
  EXPECT_EQ((*dev)->burst, 1000);
  {
    ScopedEnv rate(kEnvGuestAuthRate, "0");
    Result<std::optional<GuestAuthOptions>> r =
        GuestAuthFromEnv(true, GuestAuthOptions{});
    ASSERT_TRUE(r.ok() && r->has_value());
    EXPECT_EQ((*r)->per_sec, 0);
  }
  {
    ScopedEnv rate(kEnvGuestAuthRate, "fast");
    Result<std::optional<GuestAuthOptions>> r =
        GuestAuthFromEnv(true, GuestAuthOptions{});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(kEnvGuestAuthRate), std::string::npos);
  }
  {
    ScopedEnv off(kEnvGuestAuth, "off");
    Result<std::optional<GuestAuthOptions>> r =
        GuestAuthFromEnv(false, GuestAuthOptions{});
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->has_value());
  }
}

TEST_F(JoinRoutesTest, FunctionsByNameAnswerAsComputeInvoke) {
  StartService(/*dev=*/true);
  DeployEcho("shop", /*contract=*/true);
  const std::string guest =
      Call("POST", "/api/auth/guest", nullptr, "").body.value("token", "");
  const std::string guest_id =
      net::VerifyTicketAnyResource(kSecret, guest,
                                   RealWallClock::Get()->UnixNowSecs())
          .ticket.subscriber_id;
  ASSERT_FALSE(guest_id.empty());
  const json params = {{"params", {{"amount", 3}}}};

  // "module.export" and the bare export: the guest is the caller.
  for (const char* name : {"shop.caller", "caller"}) {
    Reply r =
        Call("POST", std::string("/api/functions/") + name, params, guest);
    ASSERT_EQ(r.status, 200) << name << ": " << r.raw.body;
    EXPECT_EQ(r.body["resultJson"]["caller"], guest_id);
    EXPECT_EQ(r.body["resultJson"]["exportName"], "caller");
    EXPECT_GT(r.body.value("fuelUsed", 0), 0);
    EXPECT_FALSE(r.body.value("flowId", "").empty());
  }
  Reply invoked =
      Call("POST", "/api/compute/modules/shop/invoke/caller", params, guest);
  Reply called = Call("POST", "/api/functions/shop.caller", params, guest);
  std::set<std::string> invoked_keys, called_keys;
  for (const auto& [k, v] : invoked.body.items()) invoked_keys.insert(k);
  for (const auto& [k, v] : called.body.items()) called_keys.insert(k);
  EXPECT_EQ(called_keys, invoked_keys);
  EXPECT_EQ(called.body["resultJson"], invoked.body["resultJson"]);

  // The same errors, word for word.
  struct Case {
    json body;
    std::string token;
    int status;
  };
  for (const Case& c : std::vector<Case>{
           {{{"params", {{"amount", "3"}}}}, guest, 400},  // the contract
           {{{"params", 3}}, guest, 400},                  // not an object
           {{{"x", 1}}, guest, 400},                       // unknown field
           {params, "", 401},                              // no token
           {params, "not-a-ticket", 401},
           {params, kView, 403},  // a view token cannot invoke
       }) {
    Reply a = Call("POST", "/api/compute/modules/shop/invoke/caller", c.body,
                   c.token);
    Reply b = Call("POST", "/api/functions/shop.caller", c.body, c.token);
    EXPECT_EQ(b.status, c.status) << c.body << " " << c.token;
    EXPECT_EQ(b.status, a.status);
    EXPECT_EQ(b.body, a.body);
  }
  // Not JSON.
  net::HttpRequest raw =
      Request("POST", "/api/functions/caller", nullptr, guest);
  raw.body = "{";
  Reply not_json =
      Parse(router_.FindHttp("/api/functions/caller")->Handle(raw));
  EXPECT_EQ(not_json.status, 400);
  EXPECT_EQ(not_json.body["code"], "bad_json");
  // Who may not call is told before which functions exist.
  EXPECT_EQ(Call("POST", "/api/functions/nope", params, "").status, 401);
  EXPECT_EQ(Call("GET", "/api/functions/caller", nullptr, guest).status, 405);
  EXPECT_EQ(Call("POST", "/api/functions", params, guest).status, 404);
  EXPECT_EQ(Call("POST", "/api/functions/a/b", params, guest).status, 404);
  EXPECT_EQ(Call("POST", "/api/functions/caller?x=1", params, guest).status,
            400);
}

TEST_F(JoinRoutesTest, UnknownAndAmbiguousFunctions) {
  StartService(/*dev=*/true);
  DeployEcho("shop");
  Reply unknown = Call("POST", "/api/functions/nope", json::object(), kAdmin);
  EXPECT_EQ(unknown.status, 404) << unknown.raw.body;
  EXPECT_NE(unknown.body.value("message", "").find("FUNCTION_NOT_FOUND"),
            std::string::npos)
      << unknown.raw.body;
  // An export without an invoke trigger is no function.
  EXPECT_EQ(Call("POST", "/api/functions/shop.echo", json::object()).status,
            404);
  EXPECT_EQ(Call("POST", "/api/functions/other.caller", json::object()).status,
            404);

  // A second module with the same export: the bare name is ambiguous, the
  // qualified names are not.
  DeployEcho("inn");
  Reply ambiguous = Call("POST", "/api/functions/caller", json::object());
  EXPECT_EQ(ambiguous.status, 400) << ambiguous.raw.body;
  EXPECT_EQ(ambiguous.body["code"], "BAD_REQUEST");
  const std::string message = ambiguous.body.value("message", "");
  EXPECT_NE(message.find("shop"), std::string::npos) << message;
  EXPECT_NE(message.find("inn"), std::string::npos) << message;
  EXPECT_EQ(Call("POST", "/api/functions/inn.caller", json::object()).status,
            200);
  EXPECT_EQ(Call("POST", "/api/functions/shop.caller", json::object()).status,
            200);
}

}  // namespace
}  // namespace tessera::server
