// GuestShard's transfer and message calls (guest_talk.cc) against the `talk`
// test guest, and against small hand-written modules for the start checks
// and malformed outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shard/guest_shard.h"
#include "shard/shard_abi.h"
#include "shard/test_guests.h"
#include "tessera/abi.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;

KindConfig TalkKind() {
  KindConfig kind;
  kind.name = "talk";
  return kind;
}

std::unique_ptr<GuestShard> Make(
    const std::shared_ptr<const wasm::CompiledModule>& module,
    const std::string& id, const json& params = json::object(),
    const KindConfig& kind = TalkKind(), const GuestEnv& env = {}) {
  auto shard = GuestShard::Create(module, kind, id, Msgpack(params), env);
  EXPECT_TRUE(shard.ok()) << shard.status().ToString();
  return shard.ok() ? std::move(shard).value() : nullptr;
}

// One Step with these inputs; the inputs' results must all be accepted.
json StepWith(GuestShard& g, std::vector<std::pair<std::string, json>> list,
              const std::function<void()>& before = nullptr) {
  std::vector<PendingInput> inputs;
  uint64_t seq = 0;
  for (const auto& [sid, input] : list) {
    inputs.push_back(PendingInput{sid, ++seq, Msgpack(input), {}, {}});
  }
  StepResult r = g.Step(inputs, 50000, nullptr, true, before);
  EXPECT_TRUE(r.outcome.running()) << r.outcome.message;
  for (const InputResult& in : r.inputs) {
    EXPECT_TRUE(in.accepted) << in.rejection;
  }
  return r.snapshot.empty() ? json() : FromMsgpack(r.snapshot);
}

json Snap(GuestShard& g) {
  auto bytes = g.Snapshot();
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? FromMsgpack(*bytes) : json();
}

std::shared_ptr<const ShardMessage> Message(std::string from, std::string topic,
                                            std::string data) {
  return std::make_shared<const ShardMessage>(
      ShardMessage{std::move(from), std::move(topic), std::move(data)});
}

TEST(GuestTalkTest, TransferOutAndInMoveAPlayerBetweenShards) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto a = Make(module, "a");
  auto b = Make(module, "b");
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(a->has_transfers());
  EXPECT_TRUE(a->has_transfer_requests());
  EXPECT_TRUE(a->has_messages());
  StepWith(*a, {{"alice", {{"join", json::object()}}},
                {"alice", {{"step", json::object()}}},
                {"alice", {{"step", json::object()}}}});

  auto state = a->TransferOut("alice");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ASSERT_TRUE(state->has_value());
  EXPECT_EQ(FromMsgpack(**state), (json{{"n", 2}}));
  EXPECT_FALSE(Snap(*a)["players"].contains("alice"));
  auto again = a->TransferOut("alice");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());

  Status in = b->TransferIn("alice", **state, R"({"party":"p"})", false, "a");
  ASSERT_TRUE(in.ok()) << in.ToString();
  EXPECT_EQ(Snap(*b)["players"]["alice"], (json{{"n", 2}, {"from", "a"}}));
  // The player plays on in b.
  json snap = StepWith(*b, {{"alice", {{"step", json::object()}}}});
  EXPECT_EQ(snap["players"]["alice"]["n"], 3);
  EXPECT_TRUE(a->outcome().running());
  EXPECT_TRUE(b->outcome().running());
}

TEST(GuestTalkTest, RefusalsCarryTheModulesTextAndReturningIsAccepted) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto full = Make(module, "full", {{"refuse", "zone is full"}});
  auto party = Make(module, "party", {{"require_claim", "party"}});
  auto buggy = Make(module, "buggy", {{"refuse_return", true}});
  ASSERT_TRUE(full && party && buggy);
  const std::string state = Msgpack({{"n", 4}});

  Status s = full->TransferIn("alice", state, "{}", false, "a");
  EXPECT_EQ(s.code(), StatusCode::kRefused);
  EXPECT_EQ(s.message(), "zone is full");
  // Its own player coming back is taken, refuse or not.
  ASSERT_TRUE(full->TransferIn("bob", state, "{}", true, "b").ok());
  EXPECT_EQ(Snap(*full)["players"]["bob"]["n"], 4);

  s = party->TransferIn("alice", state, R"({"level":3})", false, "a");
  EXPECT_EQ(s.code(), StatusCode::kRefused);
  EXPECT_EQ(s.message(), "missing claim party");
  ASSERT_TRUE(
      party->TransferIn("alice", state, R"({"party":"p7"})", false, "a").ok());
  ASSERT_TRUE(party->TransferIn("carol", state, "{}", true, "a").ok());

  s = buggy->TransferIn("alice", state, "{}", true, "a");
  EXPECT_EQ(s.code(), StatusCode::kRefused);
  EXPECT_EQ(s.message(), "refusing the return");
  for (GuestShard* g : {full.get(), party.get(), buggy.get()}) {
    EXPECT_TRUE(g->outcome().running()) << g->failure();
  }
}

TEST(GuestTalkTest, AReturningPlayerGetsItsOldOriginBack) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto b = Make(module, "b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(
      b->TransferIn("alice", Msgpack({{"n", 1}}), "{}", false, "a").ok());
  auto state = b->TransferOut("alice");
  ASSERT_TRUE(state.ok() && state->has_value());
  ASSERT_TRUE(b->TransferIn("alice", **state, "{}", true, "c").ok());
  EXPECT_EQ(Snap(*b)["players"]["alice"], (json{{"n", 1}, {"from", "a"}}));
}

TEST(GuestTalkTest, TransferRequestsAreTakenOnce) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto a = Make(module, "a");
  ASSERT_TRUE(a);
  auto none = a->TakeTransferRequests();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  StepWith(*a, {{"alice", {{"join", json::object()}}},
                {"bob", {{"join", json::object()}}},
                {"alice", {{"go", {{"to", "b"}}}}},
                {"bob", {{"go", {{"to", "c"}}}}}});
  auto requests = a->TakeTransferRequests();
  ASSERT_TRUE(requests.ok()) << requests.status().ToString();
  ASSERT_EQ(requests->size(), 2u);
  EXPECT_EQ((*requests)[0].subscriber, "alice");
  EXPECT_EQ((*requests)[0].to, "b");
  EXPECT_EQ((*requests)[1].subscriber, "bob");
  EXPECT_EQ((*requests)[1].to, "c");
  auto taken = a->TakeTransferRequests();
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(taken->empty());

  InputResult r = a->ApplyInput("zed", Msgpack({{"go", {{"to", "b"}}}}));
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.rejection, "not here");
}

TEST(GuestTalkTest, GroupsAreTheModules) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto a = Make(module, "a", {{"groups", {"world", "north"}}});
  auto b = Make(module, "b");
  ASSERT_TRUE(a && b);
  auto groups = a->Groups();
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  EXPECT_EQ(*groups, (std::vector<std::string>{"world", "north"}));
  auto again = a->Groups();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), 2u);
  auto none = b->Groups();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(GuestTalkTest, OutboxHasEveryTargetKindInOrder) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto a = Make(module, "a");
  ASSERT_TRUE(a);
  StepWith(
      *a,
      {{"",
        {{"send",
          {{"kind", "shard"}, {"to", "b"}, {"topic", "hi"}, {"data", "one"}}}}},
       {"",
        {{"send",
          {{"kind", "group"},
           {"to", "world"},
           {"topic", "relic_taken"},
           {"data", ""}}}}},
       {"",
        {{"send",
          {{"kind", "all"},
           {"to", "ignored"},
           {"topic", "t"},
           {"data", "x"}}}}},
       {"",
        {{"burst",
          {{"kind", "shard"}, {"to", "c"}, {"count", 2}, {"bytes", 6}}}}}});
  auto out = a->TakeOutbox();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 5u);
  EXPECT_EQ((*out)[0].to.kind, TargetKind::kShard);
  EXPECT_EQ((*out)[0].to.name, "b");
  EXPECT_EQ((*out)[0].topic, "hi");
  EXPECT_EQ((*out)[0].data, "one");
  EXPECT_EQ((*out)[1].to.kind, TargetKind::kGroup);
  EXPECT_EQ((*out)[1].to.name, "world");
  EXPECT_EQ((*out)[1].topic, "relic_taken");
  EXPECT_EQ((*out)[2].to.kind, TargetKind::kAll);
  EXPECT_EQ((*out)[2].to.name, "");
  EXPECT_EQ((*out)[3].to.name, "c");
  EXPECT_EQ((*out)[3].topic, "b");
  EXPECT_EQ((*out)[3].data, "i:0...");
  EXPECT_EQ((*out)[4].data, "i:1...");
  auto empty = a->TakeOutbox();
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  InputResult r = a->ApplyInput(
      "", Msgpack({{"send", {{"kind", "moon"}, {"to", ""}, {"topic", "t"}}}}));
  EXPECT_EQ(r.rejection, "unknown kind moon");
}

TEST(GuestTalkTest, MessagesDeliveredBeforeTheInputsShowInTheSnapshot) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto b = Make(module, "b");
  ASSERT_TRUE(b);
  std::vector<std::shared_ptr<const ShardMessage>> batch = {
      Message("a", "one", "1"), Message("", "two", ""),
      Message("c", "three", std::string("\x00\x01", 2))};
  Status delivered;
  json snap = StepWith(*b, {{"alice", {{"join", json::object()}}}},
                       [&] { delivered = b->DeliverMessages(batch); });
  ASSERT_TRUE(delivered.ok()) << delivered.ToString();
  EXPECT_EQ(snap["received"], 3);
  EXPECT_EQ(snap["inbox"], (json{{"a", "one", "1"},
                                 {"", "two", ""},
                                 {"c", "three", std::string("\x00\x01", 2)}}));
  EXPECT_EQ(snap["ticks"], 1);
  ASSERT_TRUE(b->DeliverMessages({}).ok());
  ASSERT_TRUE(b->DeliverMessages(std::vector{Message("a", "four", "")}).ok());
  EXPECT_EQ(Snap(*b)["inbox"].back(), (json{"a", "four", ""}));
}

TEST(GuestTalkTest, TheInboxKeepsTheLast256) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto b = Make(module, "b");
  ASSERT_TRUE(b);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::shared_ptr<const ShardMessage>> batch;
    for (int i = 0; i < 64; ++i) {
      batch.push_back(Message("a", "m", std::to_string(round * 64 + i)));
    }
    ASSERT_TRUE(b->DeliverMessages(batch).ok());
  }
  json snap = Snap(*b);
  EXPECT_EQ(snap["received"], 320);
  ASSERT_EQ(snap["inbox"].size(), 256u);
  EXPECT_EQ(snap["inbox"][0][2], "64");
  EXPECT_EQ(snap["inbox"][255][2], "319");
}

// DeliverMessages inside Step (in `before`) draws on the tick's one budget:
// a tick that fits alone and a delivery that fits alone fail together.
TEST(GuestTalkTest, MessagesInsideStepUseTheTicksFuel) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  std::vector<std::shared_ptr<const ShardMessage>> batch;
  for (int i = 0; i < 64; ++i) {
    batch.push_back(Message("a", "topic", std::string(200, 'd')));
  }
  int64_t step_fuel = 0, deliver_fuel = 0;
  {
    auto probe = Make(module, "p");
    ASSERT_TRUE(probe);
    const int64_t start = probe->fuel_used();
    ASSERT_TRUE(probe->DeliverMessages(batch).ok());
    deliver_fuel = probe->fuel_used() - start;
    auto fresh = Make(module, "q");
    ASSERT_TRUE(fresh);
    const int64_t before = fresh->fuel_used();
    StepWith(*fresh, {});
    step_fuel = fresh->fuel_used() - before;
  }
  ASSERT_GT(step_fuel, 0);
  ASSERT_GT(deliver_fuel, 0);
  // Each fits the budget alone; both do not.
  KindConfig kind = TalkKind();
  kind.fuel_per_tick =
      static_cast<uint64_t>(std::max(step_fuel, deliver_fuel) +
                            std::min(step_fuel, deliver_fuel) / 2);

  auto alone = Make(module, "alone", json::object(), kind);
  ASSERT_TRUE(alone);
  ASSERT_TRUE(alone->DeliverMessages(batch).ok()) << alone->failure();
  auto step_alone = Make(module, "step", json::object(), kind);
  ASSERT_TRUE(step_alone);
  StepWith(*step_alone, {});
  EXPECT_TRUE(step_alone->outcome().running()) << step_alone->failure();

  auto together = Make(module, "together", json::object(), kind);
  ASSERT_TRUE(together);
  StepResult r = together->Step({}, 50000, nullptr, true, [&] {
    (void)together->DeliverMessages(batch);
  });
  EXPECT_FALSE(r.outcome.running());
  EXPECT_THAT(together->failure(), StartsWith("fuel exhausted: the tick"));
}

TEST(GuestTalkTest, SaveAndRestoreKeepPlayersAndTheInbox) {
  TESSERA_LOAD_GUEST(module, "talk", 64);
  auto a = Make(module, "a");
  ASSERT_TRUE(a);
  StepWith(*a,
           {{"alice", {{"join", json::object()}}},
            {"alice", {{"step", json::object()}}}},
           [&] {
             ASSERT_TRUE(
                 a->DeliverMessages(std::vector{Message("z", "t", "d")}).ok());
           });
  ASSERT_TRUE(a->TransferIn("bob", Msgpack({{"n", 5}}), "{}", false, "z").ok());
  auto saved = a->Save();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  auto restored = GuestShard::Restore(module, TalkKind(), "a",
                                      Msgpack(json::object()), **saved);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(Snap(**restored), Snap(*a));
}

// ---- Hand-written modules -------------------------------------------------

// A shard module whose output buffer always holds the 9 bytes
// `05 00 00 00 "nope!"` (a count of 5 with 5 bytes after it), plus `extra`.
std::vector<uint8_t> RawTalkWat(const std::string& extra) {
  return wasm::testing::Wat(R"((module
  (memory 1)
  (export "memory" (memory 0))
  (data (i32.const 2048) "\05\00\00\00nope!")
  (func (export "tessera_abi_v1"))
  (func (export "tessera_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tessera_init") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_apply_input") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_tick") (param i64) (result i32) (i32.const 0))
  (func (export "tessera_snapshot") (result i32) (i32.const 0))
  (func (export "tessera_output_ptr") (result i32) (i32.const 2048))
  (func (export "tessera_output_len") (result i32) (i32.const 9))
)" + extra + ")");
}

constexpr char kOut[] =
    R"((func (export "tessera_transfer_out") (param i32 i32) (result i32) (i32.const 7)))";
constexpr char kIn[] =
    R"((func (export "tessera_transfer_in") (param i32 i32) (result i32) (i32.const 1)))";
constexpr char kRequests[] =
    R"((func (export "tessera_transfer_requests") (result i32) (i32.const 0)))";
constexpr char kGroups[] =
    R"((func (export "tessera_groups") (result i32) (i32.const 0)))";
constexpr char kOutbox[] =
    R"((func (export "tessera_outbox") (result i32) (i32.const 0)))";
constexpr char kOnMessages[] =
    R"((func (export "tessera_on_messages") (param i32 i32) (result i32) (i32.const 1)))";

Result<std::shared_ptr<const wasm::CompiledModule>> LoadRaw(
    const std::string& extra) {
  wasm::LoadOptions options;
  options.check = ShardCheckOptions(64);
  options.fuel = true;
  options.cache_dir = TESSERA_SHARD_TEST_CACHE;
  return wasm::LoadModule(RawTalkWat(extra), options);
}

TEST(GuestTalkRawTest, IncompleteTransferExportsAreRefusedAtStart) {
  const struct {
    std::string extra;
    const char* message;
  } cases[] = {
      {kOut,
       "the module exports tessera_transfer_out without tessera_transfer_in"},
      {kIn,
       "the module exports tessera_transfer_in without tessera_transfer_out"},
      {std::string(kRequests) + kGroups,
       "the module exports tessera_transfer_requests without "
       "tessera_transfer_out and tessera_transfer_in"},
  };
  for (const auto& c : cases) {
    auto module = LoadRaw(c.extra);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    auto shard = GuestShard::Create(*module, TalkKind(), "r", "");
    ASSERT_FALSE(shard.ok()) << c.message;
    EXPECT_EQ(shard.status().code(), StatusCode::kRefused);
    EXPECT_THAT(shard.status().message(), StartsWith(c.message));
    auto restored = GuestShard::Restore(*module, TalkKind(), "r", "", "s");
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), StatusCode::kRefused);
  }
}

TEST(GuestTalkRawTest, WrongSignaturesAreRefusedByTheLoader) {
  for (
      const char* extra :
      {R"((func (export "tessera_outbox") (param i32) (result i32) (i32.const 0)))",
       R"((func (export "tessera_on_messages") (result i32) (i32.const 0)))",
       R"((func (export "tessera_transfer_in") (param i32 i32)))"}) {
    wasm::CheckOptions check = ShardCheckOptions(64);
    auto info = wasm::CheckModule(RawTalkWat(extra), check);
    EXPECT_FALSE(info.ok()) << extra;
  }
}

TEST(GuestTalkRawTest, MalformedOutputsAndUnknownCodesFailTheShard) {
  auto module = LoadRaw(std::string(kOut) + kIn + kRequests + kGroups +
                        kOutbox + kOnMessages);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  struct Case {
    const char* name;
    std::function<Status(GuestShard&)> call;
    std::string failure;
  };
  const Case cases[] = {
      {"requests",
       [](GuestShard& g) { return g.TakeTransferRequests().status(); },
       "abi: tessera_transfer_requests output: count 5 of requests needs at "
       "least 40 bytes, only 5 follow"},
      {"groups", [](GuestShard& g) { return g.Groups().status(); },
       "abi: tessera_groups output: count 5 of groups needs at least 20 "
       "bytes, only 5 follow"},
      {"outbox", [](GuestShard& g) { return g.TakeOutbox().status(); },
       "abi: tessera_outbox output: count 5 of messages needs at least 65 "
       "bytes, only 5 follow"},
      {"transfer_out",
       [](GuestShard& g) { return g.TransferOut("alice").status(); },
       "abi: tessera_transfer_out returned unknown code 7"},
  };
  for (const Case& c : cases) {
    auto shard = GuestShard::Create(*module, TalkKind(), "r", "");
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    GuestShard& g = **shard;
    Status s = c.call(g);
    EXPECT_FALSE(s.ok()) << c.name;
    EXPECT_TRUE(g.failed()) << c.name;
    EXPECT_EQ(g.failure(), c.failure) << c.name;
    // Stopped: every later call reports the failure without a guest call.
    EXPECT_EQ(g.Groups().status().message(), c.failure) << c.name;
    EXPECT_EQ(g.TransferIn("a", "", "{}", true, "x").message(), c.failure);
  }
}

TEST(GuestTalkRawTest, ARefusedMessageBatchIsAWarningNotAFailure) {
  auto module = LoadRaw(std::string(kOut) + kIn + kOnMessages);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::vector<std::pair<int, std::string>> lines;
  GuestEnv env;
  env.forward_log = [&](int level, std::string_view text) {
    lines.emplace_back(level, std::string(text));
  };
  auto shard = GuestShard::Create(*module, TalkKind(), "r", "", env);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  GuestShard& g = **shard;
  EXPECT_FALSE(g.has_transfer_requests());
  auto none = g.TakeTransferRequests();  // not exported: empty, no call
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Status s = g.DeliverMessages(std::vector{Message("a", "t", "d")});
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(g.outcome().running());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].first, abi::kLogWarn);
  EXPECT_THAT(lines[0].second, StartsWith("tessera_on_messages refused: "));
  EXPECT_THAT(lines[0].second, HasSubstr("nope!"));
  // transfer_in's kError is a refusal with the module's text.
  Status in = g.TransferIn("a", "", "{}", false, "x");
  EXPECT_EQ(in.code(), StatusCode::kRefused);
  EXPECT_THAT(in.message(), HasSubstr("nope!"));
  EXPECT_TRUE(g.outcome().running());
}

}  // namespace
}  // namespace tessera::shard
