// The zone example with its data and functions (examples/zone: Character
// and Item rows, the zone-fns compute module, keyed loot calls, entity
// writes) on the real `tessera serve`, for the loot acceptance tests
// (loot_test.cc, loot_crash_test.cc): a built copy of the app, the server
// with guest sign-in on, players that join through the join function and
// read the zone's snapshot.
//
// Threading: one test thread drives everything.
#ifndef TESSERA_TESTS_E2E_LOOT_SUPPORT_H_
#define TESSERA_TESTS_E2E_LOOT_SUPPORT_H_

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace tessera::e2e::loot {

using json = nlohmann::json;

inline constexpr char kAdminToken[] = "loot-admin-token";
inline constexpr char kTicketSecret[] = "loot-ticket-secret";
inline constexpr int kCompileTimeoutMs = 300'000;

// A copy of examples/zone at `dir` (replaced), its manifest's zone kind
// patched with `kind_patch` (merged into shards[0]), its shard module built
// (`tessera shards build`). Fatal gtest failures on error.
void PrepareZoneApp(const std::filesystem::path& dir, const json& kind_patch);

struct Reply {
  int status = 0;
  json body;  // null when the body is not JSON
  std::string text;
};

class ZoneServer {
 public:
  explicit ZoneServer(std::filesystem::path app) : app_(std::move(app)) {}

  // `tessera serve APP` on 127.0.0.1 with the admin token, the ticket
  // secret, guest sign-in, saves every second, plus `env`.
  Status Start(
      const std::vector<std::pair<std::string, std::string>>& env = {});
  // Waits until the zone-fns module is enabled with a compiled version.
  Status WaitForFunctions(int timeout_ms = kCompileTimeoutMs);
  void Kill();         // SIGKILL and reap
  Status Terminate();  // SIGTERM, and a clean exit within 60 s

  ServerProcess* process() { return process_.get(); }
  uint16_t port() const { return process_ ? process_->port() : 0; }
  const std::filesystem::path& app() const { return app_; }
  std::filesystem::path db() const { return app_ / ".tessera/tessera.db"; }

  Reply Http(const std::string& method, const std::string& target,
             const json& body = nullptr, const std::string& token = "");
  Reply Admin(const std::string& method, const std::string& target,
              const json& body = nullptr) {
    return Http(method, target, body, kAdminToken);
  }

  // Every row of `type` matching `where` (the admin data API, all pages).
  json Rows(const std::string& type, const json& where = json::object());

 private:
  std::filesystem::path app_;
  std::unique_ptr<ServerProcess> process_;
  int spawned_ = 0;
};

struct Guest {
  std::string user_id;
  std::string token;
};
// POST /api/auth/guest. Errors: the status and body.
Result<Guest> SignInAsGuest(ZoneServer& server);

struct Joined {
  std::string shard_id, subscriber_id, ticket, character_id;
};
// POST /api/functions/joinZone {params: {zone}} as `token`'s player.
Result<Joined> JoinZone(ZoneServer& server, const std::string& token,
                        const std::string& zone);

// A player connected to a zone: inputs in MessagePack (the zone's codec),
// the snapshot from its FRAMEs.
class Player {
 public:
  // Connects with `joined.ticket` and sends {"join":{}}.
  static Result<std::unique_ptr<Player>> Connect(ZoneServer& server,
                                                 const Joined& joined);

  Status Send(const json& input);  // the next seq
  uint64_t last_seq() const { return seq_; }

  // Reads FRAMEs until the latest snapshot satisfies `done` (true) or
  // `timeout_ms` passes (false); latest() keeps what was last seen. Stops
  // early, false, if the connection closes.
  bool ReadUntil(const std::function<bool(const json&)>& done, int timeout_ms);
  // Reads until the ACK or REJECT of `seq`: "" for an ACK, the REJECT's
  // error otherwise, or "no answer: ..." on a timeout or close.
  std::string AnswerTo(uint64_t seq, int timeout_ms = 10000);
  const json& latest() const { return latest_; }

  // This player's entry in snapshot.characters (null if none).
  json Character() const;

  const std::string& user() const { return user_; }
  net::testing::TestClient& client() { return *client_; }

 private:
  Player(std::unique_ptr<net::testing::TestClient> client, std::string user)
      : client_(std::move(client)), user_(std::move(user)) {}
  void Take(const std::string& message_bytes);

  std::unique_ptr<net::testing::TestClient> client_;
  std::string user_;
  uint64_t seq_ = 0;
  json latest_;
  // Answers read while waiting for something else: seq -> "" or error.
  std::vector<std::pair<uint64_t, std::string>> answers_;
};

// Polls `done` every 100 ms; false after `timeout_ms`.
bool PollUntil(const std::function<bool()>& done, int timeout_ms);

}  // namespace tessera::e2e::loot

#endif  // TESSERA_TESTS_E2E_LOOT_SUPPORT_H_
