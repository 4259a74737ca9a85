#include "tests/e2e/loot_support.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <span>
#include <thread>
#include <variant>

#include "common/subprocess.h"
#include "net/protocol_v1.h"
#include "tests/e2e/serve_helpers.h"

namespace tessera::e2e::loot {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string Msgpack(const json& value) {
  const std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

int LeftMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 1));
}

}  // namespace

void PrepareZoneApp(const fs::path& dir, const json& kind_patch) {
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  Result<ProcessResult> copied =
      RunProcess({"cp", "-a", "-L",
                  (fs::path(TESSERA_SOURCE_DIR) / "examples/zone").string(),
                  dir.string()});
  ASSERT_TRUE(copied.ok() && copied->exit_code == 0)
      << (copied.ok() ? copied->output : copied.status().ToString());
  fs::remove_all(dir / ".tessera");
  json manifest;
  {
    std::ifstream in(dir / "tessera.json");
    manifest = json::parse(in, nullptr, false);
  }
  ASSERT_TRUE(manifest.is_object()) << "examples/zone/tessera.json";
  manifest["shards"][0].merge_patch(kind_patch);
  {
    std::ofstream out(dir / "tessera.json", std::ios::trunc);
    out << manifest.dump(2);
  }
  Result<ProcessResult> built =
      RunProcess({TESSERA_BIN, "shards", "build", dir.string()});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_EQ(built->exit_code, 0) << built->output;
}

Status ZoneServer::Start(
    const std::vector<std::pair<std::string, std::string>>& env) {
  process_.reset();
  std::vector<std::pair<std::string, std::string>> all = {
      {"TESSERA_SHARD_TICKET_SECRET", kTicketSecret},
      {"TESSERA_ADMIN_TOKEN", kAdminToken},
      {"TESSERA_GUEST_AUTH", "on"},
      {"TESSERA_GUEST_AUTH_RATE", "0"},
      {"TESSERA_SHARD_SAVE_SECS", "1"}};
  all.insert(all.end(), env.begin(), env.end());
  SpawnOptions options = ServeOptions(
      TESSERA_BIN, app_, std::move(all), "",
      app_.parent_path() / ("server-" + std::to_string(++spawned_) + ".log"));
  Result<std::unique_ptr<ServerProcess>> started =
      ServerProcess::Start(std::move(options));
  if (!started.ok()) return started.status();
  process_ = std::move(*started);
  return Status();
}

Status ZoneServer::WaitForFunctions(int timeout_ms) {
  json modules;
  const bool ready = PollUntil(
      [&] {
        modules = Admin("GET", "/api/compute/modules").body;
        if (!modules.is_object()) return false;
        for (const json& m : modules.value("modules", json::array())) {
          // activeVersion is 0 until the first version has compiled.
          if (m.value("name", "") == "zone-fns" && m.value("enabled", false) &&
              m.value("activeVersion", 0) >= 1) {
            return true;
          }
        }
        return false;
      },
      timeout_ms);
  if (ready) return Status();
  json versions = Admin("GET", "/api/compute/modules/zone-fns/versions").body;
  return Status(
      StatusCode::kDeadlineExceeded,
      "zone-fns is not enabled: " + modules.dump() + " " + versions.dump());
}

void ZoneServer::Kill() {
  if (process_ == nullptr || process_->exited()) return;
  (void)process_->Signal(SIGKILL);
  (void)process_->WaitExit(10000);
}

Status ZoneServer::Terminate() {
  if (process_ == nullptr) return Status();
  Status sent = process_->Signal(SIGTERM);
  if (!sent.ok()) return sent;
  Result<int> code = process_->WaitExit(60000);
  if (!code.ok()) return code.status();
  if (*code != 0) {
    return Status(StatusCode::kInternal, "exit code " + std::to_string(*code) +
                                             "\n" + process_->Log());
  }
  return Status();
}

Reply ZoneServer::Http(const std::string& method, const std::string& target,
                       const json& body, const std::string& token) {
  Result<net::testing::HttpResult> r =
      HttpJson(port(), method, target, body, token);
  if (!r.ok()) return Reply{0, nullptr, r.status().ToString()};
  return Reply{r->status, json::parse(r->body, nullptr, false), r->body};
}

json ZoneServer::Rows(const std::string& type, const json& where) {
  json rows = json::array();
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    std::string target = "/api/data/" + type + "?limit=1000&where=" +
                         net::testing::PercentEncode(where.dump());
    if (!cursor.empty()) {
      target += "&cursor=" + net::testing::PercentEncode(cursor);
    }
    Reply r = Admin("GET", target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.text;
    if (r.status != 200 || !r.body.is_object()) break;
    for (const json& row : r.body.value("rows", json::array())) {
      rows.push_back(row);
    }
    cursor = r.body.value("nextCursor", "");
    if (cursor.empty()) break;
  }
  return rows;
}

Result<Guest> SignInAsGuest(ZoneServer& server) {
  Reply r = server.Http("POST", "/api/auth/guest", json::object());
  if (r.status != 200 || !r.body.is_object() ||
      !r.body.value("userId", json()).is_string() ||
      !r.body.value("token", json()).is_string()) {
    return Status(StatusCode::kInternal,
                  "guest sign-in: " + std::to_string(r.status) + " " + r.text);
  }
  return Guest{r.body["userId"].get<std::string>(),
               r.body["token"].get<std::string>()};
}

Result<Joined> JoinZone(ZoneServer& server, const std::string& token,
                        const std::string& zone) {
  Reply r = server.Http("POST", "/api/functions/joinZone",
                        {{"params", {{"zone", zone}}}}, token);
  const json result =
      r.body.is_object() ? r.body.value("resultJson", json()) : json();
  if (r.status != 200 || !result.is_object()) {
    return Status(StatusCode::kInternal,
                  "joinZone: " + std::to_string(r.status) + " " + r.text);
  }
  Joined joined;
  joined.shard_id = result.value("shardId", "");
  joined.subscriber_id = result.value("subscriberId", "");
  joined.ticket = result.value("ticket", "");
  joined.character_id = result.value("characterId", "");
  if (joined.shard_id != zone || joined.ticket.empty() ||
      joined.subscriber_id.empty()) {
    return Status(StatusCode::kInternal, "joinZone: " + r.text);
  }
  return joined;
}

Result<std::unique_ptr<Player>> Player::Connect(ZoneServer& server,
                                                const Joined& joined) {
  net::testing::ClientOptions options;
  options.port = server.port();
  Result<std::unique_ptr<net::testing::TestClient>> c =
      net::testing::TestClient::Connect(options, joined.shard_id);
  if (!c.ok()) return c.status();
  Result<net::v1::Welcome> welcome = (*c)->Join(joined.ticket, 10000);
  if (!welcome.ok()) return welcome.status();
  if (welcome->subscriber_id != joined.subscriber_id) {
    return Status(StatusCode::kInternal,
                  "welcomed as " + welcome->subscriber_id);
  }
  std::unique_ptr<Player> player(
      new Player(std::move(*c), joined.subscriber_id));
  Status sent = player->Send({{"join", json::object()}});
  if (!sent.ok()) return sent;
  return player;
}

Status Player::Send(const json& input) {
  return client_->SendInput(++seq_, Msgpack(input));
}

void Player::Take(const std::string& bytes) {
  Result<net::v1::ServerMessage> m = net::v1::DecodeServerMessage(
      std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!m.ok()) return;
  if (const auto* frame = std::get_if<net::v1::Frame>(&*m)) {
    if (!frame->snapshot_nil && !frame->snapshot.empty()) {
      json s = json::from_msgpack(frame->snapshot, true, false);
      if (!s.is_discarded()) latest_ = std::move(s);
    }
  } else if (const auto* ack = std::get_if<net::v1::Ack>(&*m)) {
    answers_.emplace_back(ack->seq, "");
  } else if (const auto* reject = std::get_if<net::v1::Reject>(&*m)) {
    answers_.emplace_back(reject->seq,
                          reject->error.empty() ? "refused" : reject->error);
  }
}

bool Player::ReadUntil(const std::function<bool(const json&)>& done,
                       int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  if (!latest_.is_null() && done(latest_)) return true;
  while (Clock::now() < deadline) {
    Result<net::testing::ClientEvent> event = client_->Read(LeftMs(deadline));
    if (!event.ok()) continue;  // nothing yet
    if (event->closed) return false;
    Take(event->bytes);
    if (!latest_.is_null() && done(latest_)) return true;
  }
  return false;
}

std::string Player::AnswerTo(uint64_t seq, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    for (const auto& [s, answer] : answers_) {
      if (s == seq) return answer;
    }
    if (Clock::now() >= deadline) return "no answer: timed out";
    Result<net::testing::ClientEvent> event = client_->Read(LeftMs(deadline));
    if (!event.ok()) continue;
    if (event->closed) {
      return "no answer: closed " + std::to_string(event->close.code) + " " +
             event->close.reason;
    }
    Take(event->bytes);
  }
}

json Player::Character() const {
  if (!latest_.is_object()) return nullptr;
  for (const json& c : latest_.value("characters", json::array())) {
    if (c.value("user", "") == user_) return c;
  }
  return nullptr;
}

bool PollUntil(const std::function<bool()>& done, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

}  // namespace tessera::e2e::loot
