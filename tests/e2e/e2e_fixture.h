// The fixture of the end-to-end tests: each test gets a scratch copy of
// the example arena app (built once per test binary, so starting a server
// costs no compilation), starts the real `tessera dev` or `tessera serve`
// on it as a child process, and talks to it over real sockets with the
// synchronous test client (tests/net/test_client.h).
#ifndef TESSERA_TESTS_E2E_E2E_FIXTURE_H_
#define TESSERA_TESTS_E2E_E2E_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/protocol_v1.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace tessera::e2e {

namespace fs = std::filesystem;
using json = nlohmann::json;
using net::testing::CloseInfo;
using net::testing::HttpResult;
using net::testing::TestClient;

// Close codes of docs/protocol.md, spelled out here so that the tests check
// the document rather than the server's own constants.
inline constexpr int kGoingAway = 1001;
inline constexpr int kMessageTooBig = 1009;
inline constexpr int kBadFrame = 4000;
inline constexpr int kTicketInvalid = 4001;
inline constexpr int kTicketExpired = 4002;
inline constexpr int kTicketWrongShard = 4003;
inline constexpr int kShardNotFound = 4004;
inline constexpr int kKicked = 4005;
inline constexpr int kShardStopped = 4006;
inline constexpr int kRateLimited = 4007;
inline constexpr int kUnsupportedVersion = 4009;
inline constexpr int kHelloExpected = 4010;

// `value` as MessagePack bytes.
std::string Msgpack(const json& value);
// The arena's MessagePack input {"move_to": {"x": x, "y": y}}.
std::string MoveTo(double x, double y);
// A FRAME's snapshot decoded from MessagePack ({"players": [...]}).
json Snapshot(const net::v1::Frame& frame);
// The player `id` of a snapshot, or null.
json FindPlayer(const json& snapshot, const std::string& id);

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // Kills any server still running and removes the scratch directory.
  void TearDown() override;

  // A fresh copy of the prebuilt arena app (one per test; its path is the
  // same in every test: AppTemplate in app_template.h).
  fs::path CopyArena();
  fs::path dir() const { return dir_; }

  // Starts `tessera dev APP --port 0` (or `tessera serve APP --host
  // 127.0.0.1 --port 0` with `env`) and makes it the current server; the
  // previous one, if any, is killed. Fails the test if it does not start.
  ServerProcess* StartDev(const fs::path& app);

  // `tessera dev` on a fresh copy of the arena with alice and bob joined to
  // "arena-1" by dev tickets; the clients are null if anything failed.
  struct TwoPlayers {
    fs::path app;
    std::unique_ptr<TestClient> alice, bob;
  };
  TwoPlayers StartArenaWithTwoPlayers();
  ServerProcess* StartServe(
      const fs::path& app,
      const std::vector<std::pair<std::string, std::string>>& env);
  ServerProcess* server() { return server_.get(); }
  uint16_t port() const { return server_->port(); }
  // The dev server's admin token (APP/.tessera/dev-secrets.json), or the
  // one given to StartServe.
  const std::string& admin_token() const { return admin_token_; }
  const std::string& ticket_secret() const { return ticket_secret_; }

  // An HTTP request to the current server; `admin` adds the bearer token.
  HttpResult Http(const std::string& method, const std::string& target,
                  const json& body = nullptr, bool admin = false);
  // POST /api/dev/join; returns {shardId, subscriberId, ticket}.
  json DevJoin(const std::string& shard, const std::string& subscriber);
  // DevJoin's ticket.
  std::string DevTicket(const std::string& shard,
                        const std::string& subscriber);
  // `tessera ticket --app APP --shard SHARD --subscriber SUB`: the ticket.
  std::string CliTicket(const fs::path& app, const std::string& shard,
                        const std::string& subscriber);

  // A WebSocket connection to /shard/<shard> (fails the test if refused).
  std::unique_ptr<TestClient> Connect(const std::string& shard);
  // Connect and HELLO; fails the test unless WELCOME comes back.
  std::unique_ptr<TestClient> Join(const std::string& shard,
                                   const std::string& ticket);
  // Sends INPUT `seq` moving to (x, y) and reads until its ACK, checking
  // that the FRAME just before it applied `seq` and shows `subscriber` at
  // (x, y). Returns the input->ACK time in ms.
  double MoveAndExpectAck(TestClient& client, uint64_t seq,
                          const std::string& subscriber, double x, double y);
  // Reads FRAMEs until one shows `subscriber` at (x, y); nullopt after
  // `timeout_ms`.
  std::optional<json> WaitForPlayerAt(TestClient& client,
                                      const std::string& subscriber, double x,
                                      double y, int timeout_ms = 30000);
  // Reads until the close and returns it (fails the test on a timeout).
  CloseInfo ExpectClose(TestClient& client, int timeout_ms = 30000);
  // Reads `count` FRAMEs with increasing ticks; false if any is missing.
  bool KeepsReceivingFrames(TestClient& client, int count = 5);

 private:
  ServerProcess* Spawn(std::vector<std::string> argv,
                       std::vector<std::pair<std::string, std::string>> env);

  fs::path dir_;
  fs::path app_copy_;
  std::unique_ptr<ServerProcess> server_;
  std::string admin_token_;
  std::string ticket_secret_;
  int spawned_ = 0;
};

}  // namespace tessera::e2e

#endif  // TESSERA_TESTS_E2E_E2E_FIXTURE_H_
