// The zones module (examples/zones/shards/zones/zones.cc) driven through
// GuestShard, the way the host drives it: walking over the line asks for a
// move, transfer_out/transfer_in carry the player (position, direction,
// score) to the neighbour, the party claim is checked, a returning player
// is always taken back, the relic is announced to the group and shown by
// the zone that hears it, and save/restore keep everything.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shard/guest_shard.h"
#include "shard/shard_abi.h"
#include "wasm/loader.h"

namespace tessera::shard {
namespace {

using json = nlohmann::json;

constexpr double kStep = 30.0 / 20;  // default speed 30 a second, 20 Hz

std::string Msgpack(const json& value) {
  const std::vector<uint8_t> bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}
json FromMsgpack(std::string_view bytes) {
  return json::from_msgpack(bytes.begin(), bytes.end());
}

std::shared_ptr<const wasm::CompiledModule> Module() {
  static std::shared_ptr<const wasm::CompiledModule> module = [] {
    std::ifstream in(TESSERA_ZONES_WASM, std::ios::binary);
    EXPECT_TRUE(in) << TESSERA_ZONES_WASM << " was not built";
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    wasm::LoadOptions options;
    options.check = ShardCheckOptions(64);
    options.fuel = true;
    options.cache_dir = TESSERA_ZONES_CACHE;
    auto loaded = wasm::LoadModule(bytes, options);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? *loaded : nullptr;
  }();
  return module;
}

KindConfig Kind() {
  KindConfig kind;
  kind.name = "zones";
  return kind;
}

json ZoneParams(int index, bool party = false) {
  json params = {{"index", index}, {"zones", 2}, {"group", "world"}};
  if (party) params["require_claim"] = "party";
  return params;
}

std::unique_ptr<GuestShard> Zone(int index, bool party = false) {
  if (Module() == nullptr) return nullptr;
  auto shard =
      GuestShard::Create(Module(), Kind(), "zones-" + std::to_string(index),
                         Msgpack(ZoneParams(index, party)));
  EXPECT_TRUE(shard.ok()) << shard.status().ToString();
  return shard.ok() ? std::move(shard).value() : nullptr;
}

// One tick with these inputs (each must be accepted); the snapshot.
json Tick(GuestShard& zone,
          const std::vector<std::pair<std::string, json>>& list = {}) {
  std::vector<PendingInput> inputs;
  uint64_t seq = 0;
  for (const auto& [sid, input] : list) {
    inputs.push_back(PendingInput{sid, ++seq, Msgpack(input), {}, {}});
  }
  StepResult r = zone.Step(inputs, 50000);
  EXPECT_TRUE(r.outcome.running()) << r.outcome.message;
  for (const InputResult& in : r.inputs)
    EXPECT_TRUE(in.accepted) << in.rejection;
  return r.snapshot.empty() ? json() : FromMsgpack(r.snapshot);
}

json Snap(GuestShard& zone) {
  auto bytes = zone.Snapshot();
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? FromMsgpack(*bytes) : json();
}

json Player(const json& snapshot, const std::string& id) {
  for (const json& p : snapshot["players"]) {
    if (p["id"] == id) return p;
  }
  return nullptr;
}

json Move(double dx, double dy) { return {{"move", {{"dx", dx}, {"dy", dy}}}}; }

// Ticks until the zone asks to move someone; the requests (empty after
// `max_ticks`).
std::vector<TransferRequestOut> WalkUntilRequest(GuestShard& zone,
                                                 int max_ticks) {
  for (int i = 0; i < max_ticks; ++i) {
    Tick(zone);
    auto requests = zone.TakeTransferRequests();
    EXPECT_TRUE(requests.ok()) << requests.status().ToString();
    if (!requests.ok() || !requests->empty()) {
      return requests.ok() ? *requests : std::vector<TransferRequestOut>{};
    }
  }
  return {};
}

TEST(ZonesTest, WalkingOverTheLineMovesThePlayerWhichWalksOnThere) {
  auto left = Zone(0);
  auto right = Zone(1, /*party=*/true);
  ASSERT_TRUE(left && right);
  EXPECT_TRUE(left->has_transfers());
  EXPECT_TRUE(left->has_transfer_requests());
  EXPECT_TRUE(left->has_messages());

  json snap = Tick(*left, {{"alice", {{"join", json::object()}}}});
  EXPECT_EQ(snap["zone"]["start"], 0);
  EXPECT_EQ(snap["zone"]["end"], 100);
  EXPECT_EQ(Player(snap, "alice")["x"], 25);
  snap = Tick(*left, {{"alice", Move(1, 0)}});
  EXPECT_DOUBLE_EQ(Player(snap, "alice")["x"].get<double>(), 25 + kStep);

  // 75 units to the line: 49 more ticks, and the move is asked for once.
  std::vector<TransferRequestOut> requests = WalkUntilRequest(*left, 60);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].subscriber, "alice");
  EXPECT_EQ(requests[0].to, "zones-1");
  EXPECT_EQ(Player(Snap(*left), "alice")["x"], 100);

  auto state = left->TransferOut("alice");
  ASSERT_TRUE(state.ok() && state->has_value()) << state.status().ToString();
  EXPECT_TRUE(Player(Snap(*left), "alice").is_null());
  auto none = left->TransferOut("alice");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(right
                  ->TransferIn("alice", **state, R"({"party":"red"})",
                               /*returning=*/false, "zones-0")
                  .ok());
  json there = Player(Snap(*right), "alice");
  EXPECT_EQ(there["x"], 100);
  EXPECT_EQ(there["dx"], 1);
  EXPECT_EQ(there["from"], "zones-0");
  EXPECT_EQ(there["crossings"], 1);
  // It keeps walking right, with no input.
  snap = Tick(*right);
  EXPECT_DOUBLE_EQ(Player(snap, "alice")["x"].get<double>(), 100 + kStep);
  auto more = right->TakeTransferRequests();
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->empty());

  // Back left: zones-1 asks to move it to zones-0 once it is over its line.
  Tick(*right, {{"alice", Move(-1, 0)}});
  requests = WalkUntilRequest(*right, 5);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].to, "zones-0");
}

TEST(ZonesTest, TheTargetWantsAPartyAndTheSourceAlwaysTakesItsPlayerBack) {
  auto left = Zone(0);
  auto right = Zone(1, /*party=*/true);
  ASSERT_TRUE(left && right);
  Tick(*left, {{"bob", Move(1, 0)}});  // a move joins too
  ASSERT_EQ(WalkUntilRequest(*left, 60).size(), 1u);
  auto state = left->TransferOut("bob");
  ASSERT_TRUE(state.ok() && state->has_value());

  Status refused =
      right->TransferIn("bob", **state, R"({"level":3})", false, "zones-0");
  EXPECT_EQ(refused.code(), StatusCode::kRefused);
  EXPECT_EQ(refused.message(), "join a party first");
  refused =
      right->TransferIn("bob", **state, R"({"party":""})", false, "zones-0");
  EXPECT_EQ(refused.message(), "join a party first");
  EXPECT_TRUE(Player(Snap(*right), "bob").is_null());

  // zones-0 takes it back one unit inside, stopped, and says who refused.
  ASSERT_TRUE(
      left->TransferIn("bob", **state, "{}", /*returning=*/true, "zones-1")
          .ok());
  json back = Player(Tick(*left), "bob");
  EXPECT_EQ(back["x"], 99);
  EXPECT_EQ(back["dx"], 0);
  EXPECT_EQ(back["bounced"], "zones-1");
  EXPECT_EQ(back["bounces"], 1);
  EXPECT_EQ(back["crossings"], 0);
  auto requests = left->TakeTransferRequests();
  ASSERT_TRUE(requests.ok());
  EXPECT_TRUE(requests->empty());
  // A zone without require_claim lets anyone in.
  auto open = Zone(1);
  ASSERT_TRUE(open);
  EXPECT_TRUE(open->TransferIn("bob", **state, "{}", false, "zones-0").ok());
}

TEST(ZonesTest, TheRelicIsAnnouncedToTheGroupAndShownWhereItIsHeard) {
  auto left = Zone(0);
  auto right = Zone(1);
  ASSERT_TRUE(left && right);
  auto groups = left->Groups();
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(*groups, std::vector<std::string>{"world"});
  json snap = Tick(*left, {{"carol", Move(0, -1)}});
  EXPECT_EQ(snap["relic"]["taken"], false);
  EXPECT_TRUE(snap["banner"].is_null());
  EXPECT_TRUE(Snap(*right)["relic"].is_null());

  // From spawn (25, 42) straight up to the relic at (25, 15).
  std::vector<OutgoingMessage> sent;
  for (int i = 0; i < 40 && sent.empty(); ++i) {
    snap = Tick(*left);
    auto outbox = left->TakeOutbox();
    ASSERT_TRUE(outbox.ok()) << outbox.status().ToString();
    sent = *outbox;
  }
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].to.kind, TargetKind::kGroup);
  EXPECT_EQ(sent[0].to.name, "world");
  EXPECT_EQ(sent[0].topic, "relic_taken");
  EXPECT_EQ(sent[0].data, "carol");
  EXPECT_EQ(snap["relic"]["taken"], true);
  EXPECT_EQ(snap["relic"]["by"], "carol");
  EXPECT_EQ(Player(snap, "carol")["score"], 1);
  EXPECT_EQ(snap["banner"], "The relic was taken by carol in zones-0");

  std::vector<std::shared_ptr<const ShardMessage>> batch = {
      std::make_shared<const ShardMessage>(
          ShardMessage{"zones-0", sent[0].topic, sent[0].data})};
  ASSERT_TRUE(right->DeliverMessages(batch).ok());
  json heard = Snap(*right);
  EXPECT_EQ(heard["banner"], "The relic was taken by carol in zones-0");
  EXPECT_EQ(heard["messages"], 1);
  // Taken once: nobody else takes it again.
  Tick(*left, {{"dave", Move(0, -1)}});
  for (int i = 0; i < 40; ++i) Tick(*left);
  auto outbox = left->TakeOutbox();
  ASSERT_TRUE(outbox.ok());
  EXPECT_TRUE(outbox->empty());

  batch = {std::make_shared<const ShardMessage>(
      ShardMessage{"zones-0", "relic_returned", ""})};
  ASSERT_TRUE(right->DeliverMessages(batch).ok());
  EXPECT_TRUE(Snap(*right)["banner"].is_null());
}

TEST(ZonesTest, SaveAndRestoreKeepTheZone) {
  auto left = Zone(0);
  ASSERT_TRUE(left);
  Tick(*left, {{"erin", Move(0, -1)}, {"frank", Move(1, 0)}});
  for (int i = 0; i < 30; ++i) Tick(*left);
  const json before = Snap(*left);
  auto saved = left->Save();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  auto restored = GuestShard::Restore(Module(), Kind(), "zones-0",
                                      Msgpack(ZoneParams(0)), **saved);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(Snap(**restored), before);
  // And it goes on the same way as the original.
  EXPECT_EQ(Tick(**restored), Tick(*left));
}

TEST(ZonesTest, InitChecksTheParamsAndTheShardId) {
  ASSERT_NE(Module(), nullptr);
  struct Bad {
    std::string id;
    json params;
    std::string error;
  };
  const std::vector<Bad> cases = {
      {"zones-0", {{"index", 2}, {"zones", 2}}, "index is 0..zones-1"},
      {"zones-0", {{"zones", 0}}, "zones is 1..64"},
      {"zones-1", {{"index", 0}}, "the shard id must end with -0 (its index)"},
      {"zones", {{"index", 0}}, "the shard id must end with -0 (its index)"},
      {"zones-0", {{"speed", 0}}, "speed is 0..10000 (exclusive of 0)"},
      {"zones-0", {{"require_claim", ""}}, "require_claim must not be empty"},
  };
  for (const Bad& c : cases) {
    auto shard = GuestShard::Create(Module(), Kind(), c.id, Msgpack(c.params));
    ASSERT_FALSE(shard.ok()) << c.id << " " << c.params.dump();
    EXPECT_EQ(shard.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(shard.status().message(), c.error);
  }
}

}  // namespace
}  // namespace tessera::shard
