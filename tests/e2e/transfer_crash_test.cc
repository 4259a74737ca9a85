// The crash matrix of a move between shards (TALK.md "Recovery at boot"):
// the real `tessera serve` on a scratch copy of examples/zones, started
// with TESSERA_FAULT_POINT set to one step of the move, kills itself with
// SIGKILL there when a player walks over the zone line; restarted without
// it on the same store, the player is in exactly one of the two zones,
// never both, never none:
//
//   transfer.before_out     -> in zones-0 (its last save has it)
//   transfer.after_out      -> back in zones-0 (the journal row was kOut)
//   transfer.after_in_call  -> back in zones-0 (zones-1 never committed it)
//   transfer.after_in       -> in zones-1, and a reconnect to zones-0 with
//                              the old ticket gets TRANSFER
//
// plus the same walk without a fault point (the move completes). Each case
// reads both zones' snapshots through a watcher connection (a subscriber
// that sends no input is no player).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
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

constexpr char kAdminToken[] = "crash-admin-token";
constexpr char kSource[] = "zones-0";
constexpr char kTarget[] = "zones-1";
constexpr char kPlayer[] = "alice";
constexpr int kTransferredClose = 4011;  // docs/protocol.md

std::string Msgpack(const json& value) {
  const std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

// A TRANSFER message, read as docs/protocol.md lays it out:
// [20, shard_id, ticket] in MessagePack.
struct Moved {
  std::string shard_id;
  std::string ticket;
};
std::optional<Moved> AsTransfer(const std::string& bytes) {
  const json m = json::from_msgpack(bytes, true, /*allow_exceptions=*/false);
  if (!m.is_array() || m.size() != 3 || m[0] != 20 || !m[1].is_string() ||
      !m[2].is_string()) {
    return std::nullopt;
  }
  return Moved{m[1].get<std::string>(), m[2].get<std::string>()};
}

// Reads messages until a TRANSFER (skipping FRAMEs and the rest); nullopt
// on the close or after `timeout_ms`.
std::optional<Moved> ReadUntilTransfer(TestClient& client, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    const int left =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - Clock::now())
                             .count());
    Result<net::testing::ClientEvent> event = client.Read(std::max(left, 1));
    if (!event.ok() || event->closed) return std::nullopt;
    if (std::optional<Moved> moved = AsTransfer(event->bytes)) return moved;
  }
  return std::nullopt;
}

// The zones app, built once per test binary (as the e2e fixture's arena;
// see AppTemplate).
AppTemplate* MakeZonesTemplate() {
  AppTemplateOptions options;
  options.tessera_bin = TESSERA_BIN;
  options.source = fs::path(TESSERA_SOURCE_DIR) / "examples/zones";
  options.kind = "zones";
  options.shard_id = "zones-0";
  options.scratch = "crash";
  return static_cast<AppTemplate*>(
      ::testing::AddGlobalTestEnvironment(new AppTemplate(std::move(options))));
}

AppTemplate* const kZonesTemplate = MakeZonesTemplate();

// Where the player is after the restart.
enum class Expect { kInSource, kInTarget };

struct Case {
  const char* fault_point;  // "" for none
  Expect expect;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << (*c.fault_point == '\0' ? "no fault point" : c.fault_point);
}

class TransferCrashTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(kZonesTemplate->path().empty())
        << "the zones app did not build";
    app_ = kZonesTemplate->app_path();
    ASSERT_TRUE(kZonesTemplate->CopyToAppPath());
  }
  void TearDown() override {
    if (HasFailure() && server_ != nullptr) {
      std::cerr << "---- server log ----\n" << server_->Log() << "----\n";
    }
    server_.reset();
    fs::remove_all(app_);
  }

  void Start(const std::string& fault_point) {
    server_.reset();
    SpawnOptions options = ServeOptions(
        TESSERA_BIN, app_,
        {{"TESSERA_SHARD_TICKET_SECRET", "crash-ticket-secret"},
         {"TESSERA_ADMIN_TOKEN", kAdminToken},
         {"TESSERA_SHARD_SAVE_SECS", "1"}},
        fault_point,
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

  // Both zones: fast walkers (15 units a tick), zones-1 for parties only,
  // the relic never back (nothing changes by itself).
  void CreateZones() {
    for (int index = 0; index < 2; ++index) {
      json params = {{"index", index},
                     {"zones", 2},
                     {"speed", 300},
                     {"relic_respawn_secs", 0}};
      if (index == 1) params["require_claim"] = "party";
      HttpResult r = Http("POST", "/api/shards",
                          {{"kind", "zones"},
                           {"id", "zones-" + std::to_string(index)},
                           {"params", params}});
      ASSERT_EQ(r.status, 201) << r.body;
    }
  }

  std::string Ticket(const std::string& shard, const std::string& subscriber,
                     const json& claims) {
    HttpResult r = Http("POST", "/api/shards/" + shard + "/tickets",
                        {{"subscriber", subscriber}, {"claims", claims}});
    EXPECT_EQ(r.status, 200) << r.body;
    json body = json::parse(r.body, nullptr, false);
    return body.is_object() ? body.value("ticket", "") : "";
  }

  std::unique_ptr<TestClient> Connect(const std::string& shard) {
    net::testing::ClientOptions options;
    options.port = server_->port();
    Result<std::unique_ptr<TestClient>> c = TestClient::Connect(options, shard);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  std::unique_ptr<TestClient> Join(const std::string& shard,
                                   const std::string& ticket) {
    std::unique_ptr<TestClient> c = Connect(shard);
    if (c == nullptr) return nullptr;
    Result<net::v1::Welcome> welcome = c->Join(ticket, 10000);
    EXPECT_TRUE(welcome.ok()) << shard << ": " << welcome.status().ToString();
    return welcome.ok() ? std::move(c) : nullptr;
  }

  // The players of `shard`'s snapshot, read by a watcher that never plays.
  json Players(const std::string& shard) {
    std::unique_ptr<TestClient> watcher =
        Join(shard, Ticket(shard, "watcher", json::object()));
    if (watcher == nullptr) return nullptr;
    Result<net::v1::Frame> frame = watcher->ReadUntil<net::v1::Frame>(10000);
    EXPECT_TRUE(frame.ok()) << frame.status().ToString();
    if (!frame.ok()) return nullptr;
    json snapshot = json::from_msgpack(frame->snapshot, true, false);
    EXPECT_TRUE(snapshot.is_object() && snapshot.contains("players"))
        << snapshot.dump();
    return snapshot.is_object() ? snapshot.value("players", json::array())
                                : json(nullptr);
  }

  // The entries of `players` for `id`.
  static std::vector<json> Find(const json& players, const std::string& id) {
    std::vector<json> out;
    if (!players.is_array()) return out;
    for (const json& p : players) {
      if (p.value("id", "") == id) out.push_back(p);
    }
    return out;
  }

  fs::path app_;
  std::unique_ptr<ServerProcess> server_;
  int spawned_ = 0;
};

TEST_P(TransferCrashTest, ThePlayerEndsInExactlyOneZone) {
  const Case& c = GetParam();
  ASSERT_NO_FATAL_FAILURE(Start(c.fault_point));
  ASSERT_NO_FATAL_FAILURE(CreateZones());

  // alice joins zones-0 with a party (zones-1 lets her in) and stands
  // still until zones-0 has saved her.
  const std::string ticket = Ticket(kSource, kPlayer, {{"party", "red"}});
  std::unique_ptr<TestClient> alice = Join(kSource, ticket);
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->SendInput(1, Msgpack({{"join", json::object()}})).ok());
  ASSERT_TRUE(WaitForSaveMentioning(app_ / ".tessera/tessera.db", kSource,
                                    kPlayer, 15000))
      << "no save of zones-0 with alice within 15 s "
         "(TESSERA_SHARD_SAVE_SECS=1)";

  // She walks right: at the line zones-0 asks to move her.
  ASSERT_TRUE(
      alice->SendInput(2, Msgpack({{"move", {{"dx", 1}, {"dy", 0}}}})).ok());
  if (*c.fault_point != '\0') {
    Result<int> died = server_->WaitExit(30000);
    ASSERT_TRUE(died.ok()) << "the server did not stop at " << c.fault_point;
    EXPECT_EQ(*died, 128 + SIGKILL);
    EXPECT_NE(server_->Log().find(std::string("fault point ") + c.fault_point +
                                  ": killing this process"),
              std::string::npos)
        << server_->Log();
    alice.reset();
    ASSERT_NO_FATAL_FAILURE(Start(""));
  } else {
    // Her connection to zones-0 is told where she went, then closed.
    std::optional<Moved> moved = ReadUntilTransfer(*alice, 30000);
    ASSERT_TRUE(moved.has_value()) << "no TRANSFER on alice's connection";
    EXPECT_EQ(moved->shard_id, kTarget);
    Result<net::testing::CloseInfo> close = alice->WaitClose(10000);
    ASSERT_TRUE(close.ok()) << close.status().ToString();
    EXPECT_EQ(close->code, kTransferredClose) << close->reason;
  }

  // Exactly one zone has her, once, with nothing doubled.
  const json in_source = Players(kSource);
  const json in_target = Players(kTarget);
  const std::vector<json> source_entries = Find(in_source, kPlayer);
  const std::vector<json> target_entries = Find(in_target, kPlayer);
  EXPECT_EQ(source_entries.size() + target_entries.size(), 1u)
      << "zones-0: " << in_source.dump() << "\nzones-1: " << in_target.dump();
  const bool in_target_zone = c.expect == Expect::kInTarget;
  const std::vector<json>& found =
      in_target_zone ? target_entries : source_entries;
  ASSERT_EQ(found.size(), 1u)
      << "zones-0: " << in_source.dump() << "\nzones-1: " << in_target.dump();
  const json& p = found.front();
  EXPECT_EQ(p["score"], 0);
  if (in_target_zone) {
    EXPECT_EQ(p["crossings"], 1);
    EXPECT_EQ(p["from"], kSource);
    EXPECT_GE(p["x"].get<double>(), 100.0);
  } else {
    EXPECT_EQ(p["crossings"], 0);
    EXPECT_LE(p["x"].get<double>(), 100.0);
  }

  // Her old ticket for zones-0: the zone she is in lets her play; after a
  // completed move, zones-0 answers with TRANSFER (a ticket for zones-1)
  // instead of WELCOME, and that ticket joins zones-1.
  std::unique_ptr<TestClient> again = Connect(kSource);
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(again->SendHello(ticket, net::v1::kVersion).ok());
  Result<net::testing::ClientEvent> answer = again->Read(10000);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_FALSE(answer->closed)
      << answer->close.code << " " << answer->close.reason;
  if (in_target_zone) {
    std::optional<Moved> moved = AsTransfer(answer->bytes);
    ASSERT_TRUE(moved.has_value())
        << "no TRANSFER for a player that left zones-0";
    EXPECT_EQ(moved->shard_id, kTarget);
    Result<net::testing::CloseInfo> close = again->WaitClose(10000);
    ASSERT_TRUE(close.ok()) << close.status().ToString();
    EXPECT_EQ(close->code, kTransferredClose) << close->reason;
    std::unique_ptr<TestClient> there = Join(kTarget, moved->ticket);
    ASSERT_NE(there, nullptr);
  } else {
    Result<net::v1::ServerMessage> message = net::v1::DecodeServerMessage(
        std::span(reinterpret_cast<const uint8_t*>(answer->bytes.data()),
                  answer->bytes.size()));
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    const auto* welcome = std::get_if<net::v1::Welcome>(&*message);
    ASSERT_NE(welcome, nullptr) << "zones-0 did not welcome alice back";
    EXPECT_EQ(welcome->subscriber_id, kPlayer);
  }
}

// The same zones without a crash, moved by the admin API: zones-1 refuses
// a player without a party with the module's text, and zones-0 takes it
// back (it keeps playing there); with a party claim the move goes through.
TEST_F(TransferCrashTest, AdminMovesCheckTheTargetsClaim) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  ASSERT_NO_FATAL_FAILURE(CreateZones());
  std::unique_ptr<TestClient> alice =
      Join(kSource, Ticket(kSource, kPlayer, json::object()));
  ASSERT_NE(alice, nullptr);
  ASSERT_TRUE(alice->SendInput(1, Msgpack({{"join", json::object()}})).ok());
  ASSERT_TRUE(alice->ReadUntil<net::v1::Ack>(10000).ok());

  HttpResult refused = Http("POST", "/api/shards/zones-0/transfer",
                            {{"subscriber", kPlayer}, {"to", kTarget}});
  EXPECT_EQ(refused.status, 409) << refused.body;
  const json error = json::parse(refused.body, nullptr, false);
  EXPECT_EQ(error.value("code", ""), "SHARD_TRANSFER_REFUSED") << refused.body;
  EXPECT_EQ(error.value("message", ""), "join a party first") << refused.body;
  std::vector<json> back = Find(Players(kSource), kPlayer);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back.front()["bounced"], kTarget);
  EXPECT_EQ(back.front()["bounces"], 1);
  EXPECT_TRUE(Find(Players(kTarget), kPlayer).empty());
  // Still hers to play.
  ASSERT_TRUE(
      alice->SendInput(2, Msgpack({{"move", {{"dx", 0}, {"dy", 1}}}})).ok());
  EXPECT_TRUE(alice->ReadUntil<net::v1::Ack>(10000).ok());

  HttpResult moved = Http("POST", "/api/shards/zones-0/transfer",
                          {{"subscriber", kPlayer},
                           {"to", kTarget},
                           {"claims", {{"party", "red"}}}});
  EXPECT_EQ(moved.status, 200) << moved.body;
  EXPECT_EQ(json::parse(moved.body, nullptr, false),
            json({{"moved", true}, {"to", kTarget}}));
  EXPECT_TRUE(Find(Players(kSource), kPlayer).empty());
  std::vector<json> there = Find(Players(kTarget), kPlayer);
  ASSERT_EQ(there.size(), 1u);
  EXPECT_EQ(there.front()["from"], kSource);
  EXPECT_GE(there.front()["x"].get<double>(), 100.0);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = *info.param.fault_point == '\0'
                         ? std::string("no_fault")
                         : std::string(info.param.fault_point);
  for (char& ch : name) {
    if (ch == '.') ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    FaultPoints, TransferCrashTest,
    ::testing::Values(Case{"", Expect::kInTarget},
                      Case{"transfer.before_out", Expect::kInSource},
                      Case{"transfer.after_out", Expect::kInSource},
                      Case{"transfer.after_in_call", Expect::kInSource},
                      Case{"transfer.after_in", Expect::kInTarget}),
    CaseName);

}  // namespace
}  // namespace tessera::e2e
