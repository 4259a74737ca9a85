// tests/guests/talk_rust (the `talk` test guest in Rust, with the Rust SDK's
// transfer and message hooks) against the C++ `talk` guest
// (tests/guests/talk): both driven through the same GuestShard calls
// (Step, TransferOut, TransferIn, TakeTransferRequests, Groups, TakeOutbox,
// DeliverMessages, Save/Restore), with the same results and byte-equal
// outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rust_guests.h"
#include "shard/guest_shard.h"
#include "shard/talk_types.h"

namespace tessera::shard {
namespace {

using ::testing::StartsWith;
using json = nlohmann::json;
using rust_test::Encode;
using rust_test::Kind;
using rust_test::Load;

json Decode(const std::string& msgpack) {
  return json::from_msgpack(msgpack.begin(), msgpack.end());
}

void ExpectSameStatus(const Status& a, const Status& b,
                      const std::string& where) {
  EXPECT_EQ(a.code(), b.code())
      << where << ": " << a.ToString() << " / " << b.ToString();
  EXPECT_EQ(a.message(), b.message()) << where;
}

// The C++ talk guest and its Rust port as shard `id`, called alike.
struct Twins {
  std::string id;
  std::unique_ptr<GuestShard> cpp, rust;

  static Twins Start(const std::string& id, const json& params,
                     const std::optional<std::string>& saved = std::nullopt) {
    Twins t;
    t.id = id;
    const KindConfig kind = Kind("talk", Codec::kMsgpack);
    const std::string p = Encode(Codec::kMsgpack, params);
    auto make = [&](const char* path) {
      return saved ? GuestShard::Restore(Load(path, 64), kind, id, p, *saved)
                   : GuestShard::Create(Load(path, 64), kind, id, p);
    };
    auto a = make(TESSERA_TALK_CPP);
    auto b = make(TESSERA_TALK_RUST);
    EXPECT_TRUE(a.ok()) << id << ": " << a.status().ToString();
    EXPECT_TRUE(b.ok()) << id << ": " << b.status().ToString();
    if (a.ok() && b.ok()) {
      t.cpp = std::move(*a);
      t.rust = std::move(*b);
      EXPECT_TRUE(t.cpp->has_transfers() && t.rust->has_transfers());
      EXPECT_TRUE(t.cpp->has_messages() && t.rust->has_messages());
    }
    return t;
  }

  // One tick with these inputs on both; equal results and snapshots.
  // Returns the rejections ("" for accepted) and the decoded snapshot.
  std::pair<std::vector<std::string>, json> Step(
      const std::vector<std::pair<std::string, json>>& script,
      const std::string& where,
      const std::vector<std::shared_ptr<const ShardMessage>>& before = {}) {
    std::vector<PendingInput> inputs;
    uint64_t seq = 0;
    for (const auto& [sid, input] : script) {
      inputs.push_back(
          PendingInput{sid, ++seq, Encode(Codec::kMsgpack, input), {}, {}});
    }
    auto step = [&](GuestShard& g) {
      return g.Step(inputs, 50000, nullptr, true, [&] {
        if (!before.empty()) {
          EXPECT_TRUE(g.DeliverMessages(before).ok());
        }
      });
    };
    StepResult a = step(*cpp);
    StepResult b = step(*rust);
    EXPECT_TRUE(a.outcome.running()) << where << ": " << a.outcome.message;
    EXPECT_TRUE(b.outcome.running()) << where << ": " << b.outcome.message;
    std::vector<std::string> rejections;
    EXPECT_EQ(a.inputs.size(), b.inputs.size()) << where;
    for (size_t i = 0; i < a.inputs.size() && i < b.inputs.size(); ++i) {
      EXPECT_EQ(a.inputs[i].accepted, b.inputs[i].accepted) << where;
      EXPECT_EQ(a.inputs[i].rejection, b.inputs[i].rejection) << where;
      rejections.push_back(a.inputs[i].rejection);
    }
    EXPECT_EQ(a.snapshot, b.snapshot) << where;
    return {rejections, a.snapshot.empty() ? json() : Decode(a.snapshot)};
  }

  json Snapshot(const std::string& where) {
    Result<std::string> a = cpp->Snapshot();
    Result<std::string> b = rust->Snapshot();
    EXPECT_TRUE(a.ok() && b.ok()) << where;
    if (!a.ok() || !b.ok()) return json();
    EXPECT_EQ(*a, *b) << where;
    return Decode(*a);
  }

  std::optional<std::string> Out(const std::string& sid,
                                 const std::string& where) {
    Result<std::optional<std::string>> a = cpp->TransferOut(sid);
    Result<std::optional<std::string>> b = rust->TransferOut(sid);
    EXPECT_EQ(a.ok(), b.ok()) << where;
    if (!a.ok() || !b.ok()) {
      ExpectSameStatus(a.status(), b.status(), where);
      return std::nullopt;
    }
    EXPECT_EQ(*a, *b) << where;
    return *a;
  }

  Status In(const std::string& sid, const std::string& state,
            const std::string& claims, bool returning, const std::string& peer,
            const std::string& where) {
    Status a = cpp->TransferIn(sid, state, claims, returning, peer);
    Status b = rust->TransferIn(sid, state, claims, returning, peer);
    ExpectSameStatus(a, b, where);
    return a;
  }

  std::vector<std::pair<std::string, std::string>> Requests(
      const std::string& where) {
    auto a = cpp->TakeTransferRequests();
    auto b = rust->TakeTransferRequests();
    std::vector<std::pair<std::string, std::string>> out, theirs;
    EXPECT_TRUE(a.ok() && b.ok()) << where;
    if (!a.ok() || !b.ok()) return out;
    for (const auto& r : *a) out.emplace_back(r.subscriber, r.to);
    for (const auto& r : *b) theirs.emplace_back(r.subscriber, r.to);
    EXPECT_EQ(out, theirs) << where;
    return out;
  }

  std::vector<std::string> Groups(const std::string& where) {
    auto a = cpp->Groups();
    auto b = rust->Groups();
    EXPECT_TRUE(a.ok() && b.ok()) << where;
    if (!a.ok() || !b.ok()) return {};
    EXPECT_EQ(*a, *b) << where;
    return *a;
  }

  // (kind, target, topic, data) of each message taken.
  std::vector<std::vector<std::string>> Outbox(const std::string& where) {
    auto a = cpp->TakeOutbox();
    auto b = rust->TakeOutbox();
    EXPECT_TRUE(a.ok() && b.ok()) << where;
    std::vector<std::vector<std::string>> out, theirs;
    if (!a.ok() || !b.ok()) return out;
    auto flat = [](const std::vector<OutgoingMessage>& list, auto& to) {
      for (const OutgoingMessage& m : list) {
        to.push_back({std::to_string(static_cast<int>(m.to.kind)), m.to.name,
                      m.topic, m.data});
      }
    };
    flat(*a, out);
    flat(*b, theirs);
    EXPECT_EQ(out, theirs) << where;
    return out;
  }

  void Deliver(const std::vector<std::shared_ptr<const ShardMessage>>& batch,
               const std::string& where) {
    ExpectSameStatus(cpp->DeliverMessages(batch), rust->DeliverMessages(batch),
                     where);
  }

  std::string Save(const std::string& where) {
    Result<std::optional<std::string>> a = cpp->Save();
    Result<std::optional<std::string>> b = rust->Save();
    EXPECT_TRUE(a.ok() && b.ok()) << where;
    if (!a.ok() || !b.ok()) return "";
    EXPECT_EQ(*a, *b) << where;
    EXPECT_TRUE(a->has_value()) << where;
    return a->value_or("");
  }
};

std::shared_ptr<const ShardMessage> Msg(std::string from, std::string topic,
                                        std::string data) {
  return std::make_shared<const ShardMessage>(
      ShardMessage{std::move(from), std::move(topic), std::move(data)});
}

const json kEmpty = json::object();

TEST(TalkRustTest, InputsRequestsGroupsAndOutboxMatchTheCppGuest) {
  Twins a = Twins::Start("a", {{"groups", {"world", "realm:midgard"}}});
  ASSERT_TRUE(a.cpp && a.rust);
  EXPECT_EQ(a.Groups("groups"),
            (std::vector<std::string>{"world", "realm:midgard"}));
  auto [rejections, snap] = a.Step(
      {{"p1", {{"join", kEmpty}}},
       {"p2", {{"join", kEmpty}}},
       {"p1", {{"step", kEmpty}}},
       {"p1", {{"step", kEmpty}}},
       {"p1", {{"join", kEmpty}}},  // already here: stays as it is
       {"ghost", {{"step", kEmpty}}},
       {"ghost", {{"go", {{"to", "b"}}}}},
       {"p2", {{"go", {{"to", "b"}}}}},
       {"p1", {{"go", {{"to", "c"}}}}},
       {"p1",
        {{"send",
          {{"kind", "shard"}, {"to", "b"}, {"topic", "t"}, {"data", "hi"}}}}},
       {"p1", {{"send", {{"kind", "moon"}, {"to", "b"}, {"topic", "t"}}}}},
       {"",
        {{"burst",
          {{"kind", "group"}, {"to", "world"}, {"count", 3}, {"bytes", 6}}}}},
       {"", {{"burst", {{"kind", "all"}, {"count", 2}, {"bytes", 1}}}}},
       {"", {{"send", {{"kind", "all"}, {"topic", "news"}, {"data", ""}}}}}},
      "tick 1");
  EXPECT_EQ(rejections, (std::vector<std::string>{
                            "", "", "", "", "", "not here", "not here", "", "",
                            "", "unknown kind moon", "", "", ""}));
  EXPECT_EQ(snap["players"]["p1"]["n"], 2);
  EXPECT_EQ(snap["players"]["p1"]["from"], "");
  EXPECT_EQ(snap["ticks"], 1);
  EXPECT_EQ(a.Requests("requests"),
            (std::vector<std::pair<std::string, std::string>>{{"p2", "b"},
                                                              {"p1", "c"}}));
  EXPECT_TRUE(a.Requests("requests taken").empty());
  EXPECT_EQ(a.Outbox("outbox"), (std::vector<std::vector<std::string>>{
                                    {"0", "b", "t", "hi"},
                                    {"1", "world", "b", "i:0..."},
                                    {"1", "world", "b", "i:1..."},
                                    {"1", "world", "b", "i:2..."},
                                    {"2", "", "b", "i"},
                                    {"2", "", "b", "i"},
                                    {"2", "", "news", ""}}));
  EXPECT_TRUE(a.Outbox("outbox taken").empty());
  EXPECT_EQ(a.Groups("groups are read, not taken").size(), 2u);

  // No groups: the guest returns none.
  Twins lone = Twins::Start("lone", kEmpty);
  ASSERT_TRUE(lone.cpp && lone.rust);
  EXPECT_TRUE(lone.Groups("no groups").empty());
}

TEST(TalkRustTest, MovesRefusalsAndReturnsMatchTheCppGuest) {
  Twins a = Twins::Start("a", kEmpty);
  Twins b = Twins::Start("b", {{"require_claim", "party"}});
  Twins full = Twins::Start("full", {{"refuse", "the zone is full"}});
  Twins stubborn = Twins::Start("s", {{"refuse_return", true}});
  ASSERT_TRUE(a.cpp && b.cpp && full.cpp && stubborn.cpp);
  a.Step({{"p1", {{"join", kEmpty}}},
          {"p1", {{"step", kEmpty}}},
          {"p2", {{"join", kEmpty}}}},
         "join");

  EXPECT_EQ(a.Out("nobody", "no entity"), std::nullopt);
  std::optional<std::string> state = a.Out("p1", "out p1");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(Decode(*state), json({{"n", 1}}));
  EXPECT_EQ(a.Out("p1", "out p1 again"), std::nullopt);
  EXPECT_FALSE(a.Snapshot("after out")["players"].contains("p1"));

  // Refusals: a missing claim, a full zone; then the return to the source.
  Status s = b.In("p1", *state, "{}", false, "a", "no claim");
  EXPECT_EQ(s.code(), StatusCode::kRefused);
  EXPECT_EQ(s.message(), "missing claim party");
  s = b.In("p1", *state, R"({"party":7})", false, "a", "claim not a string");
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(b.Snapshot("arrived")["players"]["p1"],
            json({{"n", 1}, {"from", "a"}}));
  s = full.In("p1", *state, R"({"party":"north"})", false, "b", "full");
  EXPECT_EQ(s.message(), "the zone is full");
  s = a.In("p1", *state, "{}", true, "full", "returning");
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(a.Snapshot("returned")["players"]["p1"],
            json({{"n", 1}, {"from", ""}}));

  // Moved on from b: the state carries n; `from` is the last source.
  b.Step({{"p1", {{"step", kEmpty}}}}, "step in b");
  std::optional<std::string> again = b.Out("p1", "out of b");
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(
      full.In("p1", *again, "{}", true, "x", "b's player, returning").ok());
  EXPECT_EQ(full.Snapshot("returning unknown")["players"]["p1"],
            json({{"n", 2}, {"from", ""}}));

  // A module refusing its returning player (the bug path), and a state
  // that does not decode (the decoders' wording differs).
  stubborn.Step({{"p3", {{"join", kEmpty}}}}, "join s");
  std::optional<std::string> p3 = stubborn.Out("p3", "out of s");
  ASSERT_TRUE(p3.has_value());
  s = stubborn.In("p3", *p3, "{}", true, "b", "refused return");
  EXPECT_EQ(s.message(), "refusing the return");
  Status bad_a = a.cpp->TransferIn("p9", "\xc1", "{}", false, "b");
  Status bad_b = a.rust->TransferIn("p9", "\xc1", "{}", false, "b");
  EXPECT_EQ(bad_a.code(), StatusCode::kRefused);
  EXPECT_EQ(bad_b.code(), StatusCode::kRefused);
  EXPECT_THAT(bad_a.message(), StartsWith("invalid transfer state: "));
  EXPECT_THAT(bad_b.message(), StartsWith("invalid transfer state: "));
  EXPECT_FALSE(a.cpp->failed() || a.rust->failed());
}

TEST(TalkRustTest, MessagesInboxAndSavesMatchTheCppGuest) {
  Twins b = Twins::Start("b", {{"groups", {"world"}}});
  ASSERT_TRUE(b.cpp && b.rust);
  b.Step({{"p1", {{"join", kEmpty}}}}, "join");
  b.Deliver({Msg("a", "relic_taken", "the relic of Midgard is taken"),
             Msg("", "news", ""), Msg("c", "t", std::string("x\0y", 3))},
            "first batch");
  json snap = b.Snapshot("after the first batch");
  EXPECT_EQ(snap["received"], 3);
  EXPECT_EQ(snap["inbox"][0],
            json({"a", "relic_taken", "the relic of Midgard is taken"}));
  EXPECT_EQ(snap["inbox"][1], json({"", "news", ""}));
  // Delivered inside the tick, before its inputs; then more than the 256
  // the inbox keeps, in batches of 64.
  std::vector<std::shared_ptr<const ShardMessage>> batch;
  for (int i = 0; i < 64; ++i)
    batch.push_back(Msg("a", "b", std::to_string(i)));
  for (int round = 0; round < 5; ++round) {
    auto [rejections, s] = b.Step({{"p1", {{"step", kEmpty}}}},
                                  "round " + std::to_string(round), batch);
    EXPECT_EQ(s["received"], 3 + 64 * (round + 1));
  }
  snap = b.Snapshot("after 323 messages");
  ASSERT_EQ(snap["inbox"].size(), 256u);
  EXPECT_EQ(snap["inbox"][255], json({"a", "b", "63"}));
  b.Deliver({}, "an empty batch");

  // Saves are equal, and each language restores the other's save.
  b.Out("p1", "p1 leaves");  // left_from is saved too
  const std::string saved = b.Save("save");
  ASSERT_FALSE(saved.empty());
  Twins restored = Twins::Start("b", {{"groups", {"world"}}}, saved);
  ASSERT_TRUE(restored.cpp && restored.rust);
  EXPECT_EQ(restored.Snapshot("restored"), b.Snapshot("saved"));
  EXPECT_EQ(restored.Save("saved again"), saved);
  EXPECT_EQ(restored.Groups("groups after restore"),
            std::vector<std::string>{"world"});
}

TEST(TalkRustTest, ARustShardWithoutTheHooksExportsNone) {
  // zone_mini_rust names none of transfers, transfer_requests, groups,
  // outbox and on_message in export_shard!.
  auto g = GuestShard::Create(Load(TESSERA_ZONE_MINI_RUST, 64),
                              Kind("zone", Codec::kMsgpack), "z", "");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  GuestShard& zone = **g;
  EXPECT_FALSE(zone.has_transfers());
  EXPECT_FALSE(zone.has_transfer_requests());
  EXPECT_FALSE(zone.has_groups());
  EXPECT_FALSE(zone.has_outbox());
  EXPECT_FALSE(zone.has_messages());
  Result<std::vector<std::string>> groups = zone.Groups();
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  EXPECT_TRUE(groups->empty());
  EXPECT_FALSE(zone.TransferOut("p1").ok());
}

}  // namespace
}  // namespace tessera::shard
