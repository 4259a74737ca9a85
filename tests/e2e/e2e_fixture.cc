#include "tests/e2e/e2e_fixture.h"

#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <fstream>
#include <iostream>

#include "common/subprocess.h"
#include "tests/e2e/app_template.h"

namespace tessera::e2e {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

int MsLeft(Clock::time_point deadline) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - Clock::now())
                              .count());
}

// The arena app, built once per test binary (see AppTemplate): a copy of
// examples/arena or of the app $TESSERA_E2E_ARENA names, relative to the
// source tree (ctest e2e_play_rust runs the play tests on
// examples/arena-rust, which must behave the same).
AppTemplate* MakeArenaTemplate() {
  const char* example = std::getenv("TESSERA_E2E_ARENA");
  AppTemplateOptions options;
  options.tessera_bin = TESSERA_BIN;
  options.source =
      fs::path(TESSERA_SOURCE_DIR) /
      (example != nullptr && *example != '\0' ? example : "examples/arena");
  options.kind = "arena";
  options.scratch = "e2e";
  return static_cast<AppTemplate*>(
      ::testing::AddGlobalTestEnvironment(new AppTemplate(std::move(options))));
}

AppTemplate* const kArenaTemplate = MakeArenaTemplate();

}  // namespace

std::string Msgpack(const json& value) {
  const std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

std::string MoveTo(double x, double y) {
  const std::vector<uint8_t> bytes =
      json::to_msgpack(json{{"move_to", {{"x", x}, {"y", y}}}});
  return std::string(bytes.begin(), bytes.end());
}

json Snapshot(const net::v1::Frame& frame) {
  return json::from_msgpack(frame.snapshot, /*strict=*/true,
                            /*allow_exceptions=*/false);
}

json FindPlayer(const json& snapshot, const std::string& id) {
  if (!snapshot.is_object() || !snapshot.contains("players")) return nullptr;
  for (const json& p : snapshot["players"]) {
    if (p.value("id", "") == id) return p;
  }
  return nullptr;
}

void E2eTest::SetUp() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = fs::temp_directory_path() /
         ("tessera-e2e-" + std::to_string(getpid()) + "-" +
          info->test_suite_name() + "." + info->name());
  fs::remove_all(dir_);
  fs::create_directories(dir_);
}

void E2eTest::TearDown() {
  if (HasFailure() && server_ != nullptr) {
    std::cerr << "---- server log ----\n" << server_->Log() << "----\n";
  }
  server_.reset();
  fs::remove_all(dir_);
  if (!app_copy_.empty()) fs::remove_all(app_copy_);
}

fs::path E2eTest::CopyArena() {
  const fs::path app = kArenaTemplate->app_path();
  if (kArenaTemplate->path().empty()) {
    ADD_FAILURE() << "the arena template did not build";
    return app;
  }
  EXPECT_TRUE(kArenaTemplate->CopyToAppPath());
  app_copy_ = app;
  return app;
}

ServerProcess* E2eTest::Spawn(
    std::vector<std::string> argv,
    std::vector<std::pair<std::string, std::string>> env) {
  server_.reset();
  SpawnOptions options;
  options.argv = std::move(argv);
  options.env = std::move(env);
  options.log_path = dir_ / ("server-" + std::to_string(++spawned_) + ".log");
  Result<std::unique_ptr<ServerProcess>> started =
      ServerProcess::Start(std::move(options));
  if (!started.ok()) {
    ADD_FAILURE() << started.status().ToString();
    return nullptr;
  }
  server_ = std::move(*started);
  return server_.get();
}

ServerProcess* E2eTest::StartDev(const fs::path& app) {
  ServerProcess* s =
      Spawn({TESSERA_BIN, "dev", app.string(), "--port", "0"}, {});
  std::ifstream in(app / ".tessera/dev-secrets.json");
  json secrets = json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(secrets.is_object()) << "no dev secrets in " << app;
  if (secrets.is_object()) {
    admin_token_ = secrets.value("adminToken", "");
    ticket_secret_ = secrets.value("ticketSecret", "");
  }
  // The token is also printed for the developer.
  if (s != nullptr) {
    EXPECT_NE(s->Log().find("admin token: " + admin_token_), std::string::npos)
        << s->Log();
  }
  return s;
}

ServerProcess* E2eTest::StartServe(
    const fs::path& app,
    const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& [name, value] : env) {
    if (name == "TESSERA_ADMIN_TOKEN") admin_token_ = value;
    if (name == "TESSERA_SHARD_TICKET_SECRET") ticket_secret_ = value;
  }
  return Spawn({TESSERA_BIN, "serve", app.string(), "--host", "127.0.0.1",
                "--port", "0"},
               env);
}

HttpResult E2eTest::Http(const std::string& method, const std::string& target,
                         const json& body, bool admin) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (admin) headers.emplace_back("Authorization", "Bearer " + admin_token_);
  if (!body.is_null()) headers.emplace_back("Content-Type", "application/json");
  Result<HttpResult> r =
      net::testing::HttpCall("127.0.0.1", port(), method, target,
                             body.is_null() ? "" : body.dump(), headers);
  EXPECT_TRUE(r.ok()) << method << " " << target << ": "
                      << r.status().ToString();
  return r.ok() ? *r : HttpResult{};
}

json E2eTest::DevJoin(const std::string& shard, const std::string& subscriber) {
  HttpResult r =
      Http("POST", "/api/dev/join",
           {{"shard", shard}, {"kind", "arena"}, {"subscriber", subscriber}});
  EXPECT_EQ(r.status, 200) << r.body;
  json body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(body.is_object() && body.contains("ticket")) << r.body;
  return body.is_object() ? body : json::object();
}

std::string E2eTest::DevTicket(const std::string& shard,
                               const std::string& subscriber) {
  return DevJoin(shard, subscriber).value("ticket", "");
}

std::string E2eTest::CliTicket(const fs::path& app, const std::string& shard,
                               const std::string& subscriber) {
  Result<ProcessResult> r =
      RunProcess({TESSERA_BIN, "ticket", "--app", app.string(), "--shard",
                  shard, "--subscriber", subscriber});
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->output : "");
  if (!r.ok()) return "";
  std::string ticket = r->output;
  while (!ticket.empty() && std::isspace(ticket.back())) ticket.pop_back();
  return ticket;
}

std::unique_ptr<TestClient> E2eTest::Connect(const std::string& shard) {
  net::testing::ClientOptions options;
  options.port = port();
  Result<std::unique_ptr<TestClient>> c = TestClient::Connect(options, shard);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

std::unique_ptr<TestClient> E2eTest::Join(const std::string& shard,
                                          const std::string& ticket) {
  std::unique_ptr<TestClient> c = Connect(shard);
  if (c == nullptr) return nullptr;
  Result<net::v1::Welcome> welcome = c->Join(ticket);
  EXPECT_TRUE(welcome.ok()) << welcome.status().ToString();
  if (!welcome.ok()) return nullptr;
  EXPECT_EQ(welcome->shard_id, shard);
  return c;
}

double E2eTest::MoveAndExpectAck(TestClient& client, uint64_t seq,
                                 const std::string& subscriber, double x,
                                 double y) {
  const auto start = Clock::now();
  EXPECT_TRUE(client.SendInput(seq, MoveTo(x, y)).ok());
  std::optional<net::v1::Frame> last_frame;
  // Generous: only an ACK that never comes fails.
  const auto deadline = start + std::chrono::seconds(30);
  for (;;) {
    Result<net::v1::ServerMessage> msg = client.ReadMessage(MsLeft(deadline));
    if (!msg.ok()) {
      ADD_FAILURE() << "no ACK for " << seq << ": " << msg.status().ToString();
      return MsSince(start);
    }
    if (auto* frame = std::get_if<net::v1::Frame>(&*msg)) {
      last_frame = std::move(*frame);
      continue;
    }
    if (auto* reject = std::get_if<net::v1::Reject>(&*msg)) {
      ADD_FAILURE() << "input " << reject->seq
                    << " rejected: " << reject->error;
      return MsSince(start);
    }
    auto* ack = std::get_if<net::v1::Ack>(&*msg);
    if (ack == nullptr) continue;
    const double rtt_ms = MsSince(start);
    EXPECT_EQ(ack->seq, seq);
    // The ACK follows the FRAME of the tick that applied the input.
    EXPECT_TRUE(last_frame.has_value()) << "ACK before any FRAME";
    if (last_frame) {
      EXPECT_EQ(last_frame->last_seq, seq);
      const json player = FindPlayer(Snapshot(*last_frame), subscriber);
      EXPECT_FALSE(player.is_null()) << Snapshot(*last_frame).dump();
      if (!player.is_null()) {
        EXPECT_DOUBLE_EQ(player["x"].get<double>(), x);
        EXPECT_DOUBLE_EQ(player["y"].get<double>(), y);
      }
    }
    return rtt_ms;
  }
}

std::optional<json> E2eTest::WaitForPlayerAt(TestClient& client,
                                             const std::string& subscriber,
                                             double x, double y,
                                             int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (MsLeft(deadline) > 0) {
    Result<net::v1::Frame> frame =
        client.ReadUntil<net::v1::Frame>(MsLeft(deadline));
    if (!frame.ok()) return std::nullopt;
    json snapshot = Snapshot(*frame);
    const json p = FindPlayer(snapshot, subscriber);
    if (!p.is_null() && p["x"].get<double>() == x &&
        p["y"].get<double>() == y) {
      return snapshot;
    }
  }
  return std::nullopt;
}

CloseInfo E2eTest::ExpectClose(TestClient& client, int timeout_ms) {
  Result<CloseInfo> close = client.WaitClose(timeout_ms);
  EXPECT_TRUE(close.ok()) << close.status().ToString();
  return close.ok() ? *close : CloseInfo{};
}

bool E2eTest::KeepsReceivingFrames(TestClient& client, int count) {
  uint64_t last_tick = 0;
  for (int i = 0; i < count; ++i) {
    Result<net::v1::Frame> frame = client.ReadUntil<net::v1::Frame>(10000);
    if (!frame.ok() || frame->tick <= last_tick) return false;
    last_tick = frame->tick;
  }
  return true;
}

E2eTest::TwoPlayers E2eTest::StartArenaWithTwoPlayers() {
  TwoPlayers players;
  players.app = CopyArena();
  if (StartDev(players.app) == nullptr) return players;
  players.alice = Join("arena-1", DevTicket("arena-1", "alice"));
  players.bob = Join("arena-1", DevTicket("arena-1", "bob"));
  return players;
}

}  // namespace tessera::e2e
