// The zone example's data and functions on the real `tessera serve`
// (examples/zone; DATA.md): players sign in as guests and join through the
// join function joinZone, which creates their Character rows; loot arrives
// through keyed calls and shows only once granted; positions are written
// back to the rows when the zone stops; a GM's heal reaches the zone as an
// input only the server can send, and is recorded; no connection can send
// that input; a bot load test joins through joinZone.
//
// One server for the whole binary (the zone-fns module compiles once);
// each test uses zones and players of its own. The zone kind's writeFlushMs
// is raised to 60 s here, so what the rows show after a stop was written by
// the stop's flush.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "common/subprocess.h"
#include "net/protocol_v1.h"
#include "tests/e2e/loot_support.h"

namespace tessera::e2e::loot {
namespace {

namespace fs = std::filesystem;

ZoneServer* g_server = nullptr;

class LootEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tessera-loot-" + std::to_string(getpid()));
    ASSERT_NO_FATAL_FAILURE(
        PrepareZoneApp(root_ / "zone", {{"writeFlushMs", 60000}}));
    server_ = std::make_unique<ZoneServer>(root_ / "zone");
    Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    Status ready = server_->WaitForFunctions();
    ASSERT_TRUE(ready.ok()) << ready.ToString() << "\n"
                            << server_->process()->Log();
    g_server = server_.get();
  }
  void TearDown() override {
    g_server = nullptr;
    server_.reset();
    fs::remove_all(root_);
  }

 private:
  fs::path root_;
  std::unique_ptr<ZoneServer> server_;
};

::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new LootEnvironment);

class LootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(g_server, nullptr) << "the server did not start";
  }
  void TearDown() override {
    if (HasFailure() && g_server != nullptr && g_server->process()) {
      std::cerr << "---- server log ----\n"
                << g_server->process()->Log() << "----\n";
    }
  }
  ZoneServer& server() { return *g_server; }

  // A guest joined to `zone` through joinZone, connected and joined.
  std::unique_ptr<Player> NewPlayer(const std::string& zone,
                                    Joined* joined_out = nullptr) {
    Result<Guest> guest = SignInAsGuest(server());
    EXPECT_TRUE(guest.ok()) << guest.status().ToString();
    if (!guest.ok()) return nullptr;
    EXPECT_EQ(guest->user_id.rfind("guest-", 0), 0u) << guest->user_id;
    Result<Joined> joined = JoinZone(server(), guest->token, zone);
    EXPECT_TRUE(joined.ok()) << joined.status().ToString();
    if (!joined.ok()) return nullptr;
    EXPECT_EQ(joined->subscriber_id, guest->user_id);
    if (joined_out != nullptr) *joined_out = *joined;
    Result<std::unique_ptr<Player>> p = Player::Connect(server(), *joined);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return nullptr;
    // The zone has the character (joinZone's `enter`).
    EXPECT_TRUE((*p)->ReadUntil(
        [&](const json&) { return !(*p)->Character().is_null(); }, 10000))
        << (*p)->latest().dump();
    return std::move(*p);
  }

  // A ticket for `user` (any resource works as a player token).
  std::string TicketFor(const std::string& zone, const std::string& user) {
    Reply r = server().Admin("POST", "/api/shards/" + zone + "/tickets",
                             {{"subscriber", user}});
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body.is_object() ? r.body.value("ticket", "") : "";
  }

  json CharacterRow(const std::string& id) {
    Reply r = server().Admin("GET", "/api/data/Character/" + id);
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body.is_object() ? r.body.value("row", json()) : json();
  }
};

// joinZone starts the zone, creates the character once (a second join
// finds it), and the zone lists it.
TEST_F(LootTest, JoinZoneCreatesTheZoneAndTheCharacterOnce) {
  Result<Guest> guest = SignInAsGuest(server());
  ASSERT_TRUE(guest.ok()) << guest.status().ToString();
  Result<Joined> first = JoinZone(server(), guest->token, "zone-join");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Reply shard = server().Admin("GET", "/api/shards/zone-join");
  EXPECT_EQ(shard.status, 200) << shard.text;
  Result<Joined> again = JoinZone(server(), guest->token, "zone-join");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->character_id, first->character_id);
  const json rows = server().Rows("Character", {{"userId", guest->user_id}});
  ASSERT_EQ(rows.size(), 1u) << rows.dump();
  EXPECT_EQ(rows[0]["id"], first->character_id);
  EXPECT_EQ(rows[0]["hp"], 100);
  // Without a sign-in the function refuses (anyone may call it, but it
  // needs to know who).
  Reply anonymous = server().Http("POST", "/api/functions/joinZone",
                                  {{"params", json::object()}});
  EXPECT_NE(anonymous.status, 200) << anonymous.text;
}

// Loot: the item shows once the keyed call committed, with the Item row
// carrying its grant key; the character's nextGrant moves past it.
TEST_F(LootTest, LootShowsOnceItsGrantCommitted) {
  std::unique_ptr<Player> p = NewPlayer("zone-loot");
  ASSERT_NE(p, nullptr);
  const std::string character = p->Character().value("characterId", "");
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(p->Send({{"loot", json::object()}}).ok());
  EXPECT_EQ(p->AnswerTo(p->last_seq()), "");
  ASSERT_TRUE(p->ReadUntil(
      [&](const json& s) {
        return p->Character()["items"].size() >= 3 &&
               s.value("grants_in_flight", 1) == 0;
      },
      15000))
      << p->latest().dump();
  const json items = server().Rows("Item", {{"characterId", character}});
  ASSERT_EQ(items.size(), 3u) << items.dump();
  std::set<std::string> keys, shown;
  for (const json& item : items) keys.insert(item["grantKey"]);
  EXPECT_EQ(keys, (std::set<std::string>{"loot:" + character + ":1",
                                         "loot:" + character + ":2",
                                         "loot:" + character + ":3"}));
  const json character_now = p->Character();
  for (const json& item : character_now["items"]) shown.insert(item["id"]);
  std::set<std::string> ids;
  for (const json& item : items) ids.insert(item["id"]);
  EXPECT_EQ(shown, ids);
  EXPECT_EQ(CharacterRow(character)["nextGrant"], 4);
  // A player without a character (the dev join endpoint's way) gets none.
  const std::string ticket = TicketFor("zone-loot", "walker");
  Result<std::unique_ptr<Player>> walker =
      Player::Connect(server(), Joined{"zone-loot", "walker", ticket, ""});
  ASSERT_TRUE(walker.ok()) << walker.status().ToString();
  ASSERT_TRUE((*walker)->Send({{"loot", json::object()}}).ok());
  EXPECT_EQ((*walker)->AnswerTo((*walker)->last_seq()),
            "no character here: join through joinZone");
}

// (b) Positions written back: the player walks, the zone is stopped, and
// the Character row holds where it stopped (written by the stop's flush:
// the periodic one is 60 s away); onZoneStop recorded the stop.
TEST_F(LootTest, PositionsAreWrittenWhenTheZoneStops) {
  std::unique_ptr<Player> p = NewPlayer("zone-stop");
  ASSERT_NE(p, nullptr);
  const std::string character = p->Character().value("characterId", "");
  ASSERT_TRUE(p->Send({{"move_to", {{"x", 1100}, {"y", 940}}}}).ok());
  EXPECT_EQ(p->AnswerTo(p->last_seq()), "");
  // 117 units at 150 a second; read for 2 s.
  p->ReadUntil([](const json&) { return false; }, 2000);
  const json before = CharacterRow(character);
  EXPECT_NE(before.value("x", 0.0), 1100.0)
      << "written before the stop: " << before;
  Reply stopped = server().Admin("POST", "/api/shards/zone-stop/stop");
  ASSERT_EQ(stopped.status, 200) << stopped.text;
  json row;
  EXPECT_TRUE(PollUntil(
      [&] {
        row = CharacterRow(character);
        return row.is_object() && std::abs(row.value("x", 0.0) - 1100.0) < 0.01;
      },
      10000))
      << row;
  EXPECT_NEAR(row.value("x", 0.0), 1100.0, 0.01) << row;
  EXPECT_NEAR(row.value("y", 0.0), 940.0, 0.01) << row;
  EXPECT_EQ(row["hp"], 100);
  json runs;
  EXPECT_TRUE(PollUntil(
      [&] {
        runs = server().Rows("ZoneRun", {{"zone", "zone-stop"}});
        return runs.size() == 1;
      },
      15000))
      << runs;
  if (runs.size() == 1) {
    EXPECT_EQ(runs[0]["reason"], "stopped") << runs;
  }
}

// (d) A GM's heal: gmHeal (policy: the GM list) records a GmAction row and
// sends the zone the heal; the player's hp goes up, and to the row at the
// stop. A player who is no GM is refused, and nothing is recorded.
TEST_F(LootTest, TheGmHealArrivesAndIsRecorded) {
  std::unique_ptr<Player> p = NewPlayer("zone-heal");
  ASSERT_NE(p, nullptr);
  const std::string character = p->Character().value("characterId", "");
  EXPECT_EQ(p->Character()["hp"], 100);

  Result<Guest> nobody = SignInAsGuest(server());
  ASSERT_TRUE(nobody.ok());
  Reply refused = server().Http(
      "POST", "/api/functions/gmHeal",
      {{"params", {{"zone", "zone-heal"}, {"userId", p->user()}, {"hp", 50}}}},
      nobody->token);
  EXPECT_EQ(refused.status, 403) << refused.text;

  const std::string gm = TicketFor("zone-heal", "gm-1");
  Reply healed = server().Http(
      "POST", "/api/functions/gmHeal",
      {{"params", {{"zone", "zone-heal"}, {"userId", p->user()}, {"hp", 25}}}},
      gm);
  ASSERT_EQ(healed.status, 200) << healed.text;
  const std::string action = healed.body["resultJson"].value("actionId", "");
  EXPECT_FALSE(action.empty()) << healed.text;
  EXPECT_TRUE(p->ReadUntil(
      [&](const json&) { return p->Character().value("hp", 0) == 125; }, 10000))
      << p->latest().dump();

  const json actions = server().Rows("GmAction", {{"zone", "zone-heal"}});
  ASSERT_EQ(actions.size(), 1u) << actions.dump();
  EXPECT_EQ(actions[0]["id"], action);
  EXPECT_EQ(actions[0]["userId"], p->user());
  EXPECT_EQ(actions[0]["gm"], "gm-1");
  EXPECT_EQ(actions[0]["action"], "heal");
  EXPECT_EQ(actions[0]["amount"], 25);
  EXPECT_GT(actions[0].value("at", 0), 0);

  // A heal for a zone that does not run fails, and records nothing.
  Reply nowhere = server().Http(
      "POST", "/api/functions/gmHeal",
      {{"params", {{"zone", "zone-none"}, {"userId", p->user()}, {"hp", 5}}}},
      gm);
  EXPECT_NE(nowhere.status, 200) << nowhere.text;
  EXPECT_TRUE(server().Rows("GmAction", {{"zone", "zone-none"}}).empty());

  Reply stopped = server().Admin("POST", "/api/shards/zone-heal/stop");
  ASSERT_EQ(stopped.status, 200) << stopped.text;
  json row;
  EXPECT_TRUE(PollUntil(
      [&] {
        row = CharacterRow(character);
        return row.is_object() && row.value("hp", 0) == 125;
      },
      10000))
      << row;
}

// (e) A client cannot send as the server: the heal and enter inputs are
// refused on a connection, and change nothing; a ticket with an empty
// subscriber id cannot be minted or used.
TEST_F(LootTest, AClientCannotSendAsTheServer) {
  std::unique_ptr<Player> p = NewPlayer("zone-guard");
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->Send({{"heal", {{"who", p->user()}, {"hp", 500}}}}).ok());
  EXPECT_EQ(p->AnswerTo(p->last_seq()), "from the server only");
  ASSERT_TRUE(p->Send({{"enter",
                        {{"userId", p->user()},
                         {"characterId", "someone-else"},
                         {"name", "x"}}}})
                  .ok());
  EXPECT_EQ(p->AnswerTo(p->last_seq()), "from the server only");
  p->ReadUntil([](const json&) { return false; }, 500);
  EXPECT_EQ(p->Character()["hp"], 100) << p->latest().dump();

  Reply empty = server().Admin("POST", "/api/shards/zone-guard/tickets",
                               {{"subscriber", ""}});
  if (empty.status == 200) {
    // Minted: the hello must refuse it.
    net::testing::ClientOptions options;
    options.port = server().port();
    Result<std::unique_ptr<net::testing::TestClient>> c =
        net::testing::TestClient::Connect(options, "zone-guard");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<net::v1::Welcome> welcome =
        (*c)->Join(empty.body.value("ticket", ""), 5000);
    EXPECT_FALSE(welcome.ok()) << "a ticket without a subscriber joined";
  } else {
    EXPECT_EQ(empty.status, 400) << empty.text;
  }
}

// (c) The bot load test joins through the join function: every bot signs
// in as a guest, calls joinZone and plays.
TEST_F(LootTest, BotsJoinThroughTheJoinFunction) {
  const fs::path report = server().app().parent_path() / "bench-report.json";
  Result<ProcessResult> bench =
      RunProcess({TESSERA_BIN, "bench", "shard", "--join", "joinZone", "--bots",
                  "20", "--duration", "5", "--rate", "5", "--url",
                  "http://127.0.0.1:" + std::to_string(server().port()),
                  "--input", "\"join\"", "--input",
                  R"({"move_to":{"x":"$rand:900:1100","y":"$rand:900:1100"}})",
                  "--report", report.string()});
  ASSERT_TRUE(bench.ok()) << bench.status().ToString();
  EXPECT_EQ(bench->exit_code, 0) << bench->output;
  std::ifstream in(report);
  const json r = json::parse(in, nullptr, false);
  ASSERT_TRUE(r.is_object()) << bench->output;
  EXPECT_EQ(r["settings"].value("join", ""), "function joinZone")
      << r["settings"].dump();
  EXPECT_EQ(r["bots"].value("requested", 0), 20) << r["bots"].dump();
  EXPECT_EQ(r["bots"].value("connected", 0), 20) << r["bots"].dump();
  EXPECT_EQ(r["bots"].value("connect_failures", -1), 0) << r["bots"].dump();
  EXPECT_GT(r["inputs"].value("acked", 0), 0) << r["inputs"].dump();
  // 20 guests, 20 characters in zone-1 (joinZone's default zone).
  const json rows = server().Rows("Character", {{"zone", "zone-1"}});
  int guests = 0;
  for (const json& row : rows) {
    guests += row.value("userId", "").rfind("guest-", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(guests, 20) << rows.dump();
}

}  // namespace
}  // namespace tessera::e2e::loot
