// Rust guests (sdk/rust/tessera-shard-guest) against the real host:
// - examples/arena-rust gives the C++ arena's bytes (snapshots, rejections,
//   replication, saves) for the same inputs, in both codecs;
// - tests/guests/zone_mini_rust gives zone_mini's bytes from every interest
//   and replication export, so it passes what the C++ zone passes;
// - tests/guests/hostile_rust: the host's limits hold for Rust guests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rust_guests.h"
#include "shard/guest_shard.h"

namespace tessera::shard {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using json = nlohmann::json;
using rust_test::Encode;
using rust_test::Kind;
using rust_test::Load;

// One C++ guest and its Rust port, stepped together.
struct Pair {
  std::unique_ptr<GuestShard> cpp, rust;

  static Pair Create(const std::string& cpp_path, const std::string& rust_path,
                     const KindConfig& kind, const std::string& params) {
    Pair p;
    auto a = GuestShard::Create(Load(cpp_path, 64), kind, "s1", params);
    auto b = GuestShard::Create(Load(rust_path, 64), kind, "s1", params);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (a.ok() && b.ok()) {
      p.cpp = std::move(*a);
      p.rust = std::move(*b);
    }
    return p;
  }

  // Steps both; expects equal input results and snapshot bytes.
  void Step(const std::vector<PendingInput>& inputs, const std::string& where) {
    StepResult a = cpp->Step(inputs, 50000);
    StepResult b = rust->Step(inputs, 50000);
    ASSERT_TRUE(a.outcome.running()) << where << ": " << a.outcome.message;
    ASSERT_TRUE(b.outcome.running()) << where << ": " << b.outcome.message;
    ASSERT_EQ(a.inputs.size(), b.inputs.size());
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      EXPECT_EQ(a.inputs[i].accepted, b.inputs[i].accepted) << where;
      // The shard's own rejections are the same text; decoding errors come
      // from different decoders (serde's wording differs) but name the same
      // problem under the same prefix.
      const std::string& ra = a.inputs[i].rejection;
      const std::string& rb = b.inputs[i].rejection;
      if (ra.rfind("invalid input: ", 0) == 0) {
        EXPECT_THAT(rb, StartsWith("invalid input: unknown variant `"))
            << where << " (C++: " << ra << ")";
      } else {
        EXPECT_EQ(ra, rb) << where;
      }
    }
    EXPECT_EQ(a.snapshot, b.snapshot) << where;
    EXPECT_FALSE(a.snapshot.empty()) << where;
  }

  // Calls `hook` on both; expects the same code and bytes. Returns the
  // C++ guest's code (-1: not exported or failed).
  int SameHook(Hook hook, const std::string& arg, const std::string& where) {
    EXPECT_EQ(cpp->has_hook(hook), rust->has_hook(hook)) << where;
    if (!cpp->has_hook(hook) || !rust->has_hook(hook)) return -1;
    Result<HookOutput> a = cpp->CallHook(hook, arg);
    Result<HookOutput> b = rust->CallHook(hook, arg);
    EXPECT_EQ(a.ok(), b.ok()) << where << ": " << a.status().ToString() << " / "
                              << b.status().ToString();
    EXPECT_EQ(cpp->failure(), rust->failure()) << where;
    if (!a.ok() || !b.ok()) return -1;
    EXPECT_EQ(a->code, b->code) << where;
    EXPECT_EQ(a->bytes, b->bytes) << where;
    return a->code;
  }
};

TEST(RustGuestTest, ArenaGivesTheCppArenasBytes) {
  std::ifstream in(TESSERA_SOURCE_DIR "/examples/arena/demo-inputs.jsonl");
  ASSERT_TRUE(in);
  std::map<uint64_t, std::vector<json>> by_tick;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      json j = json::parse(line);
      by_tick[j["tick"].get<uint64_t>()].push_back(j);
    }
  }
  // Beyond the demo: a rejection for a bad input, and players sorted by
  // join order with ids that need str8 headers.
  by_tick[55].push_back(
      {{"subscriber", "x"}, {"input", {{"jump", json::object()}}}});
  by_tick[56].push_back({{"subscriber", std::string(40, 'd')},
                         {"input", {{"move_to", {{"x", 0.1}, {"y", 1e-3}}}}}});
  for (Codec codec : {Codec::kMsgpack, Codec::kJson}) {
    for (const json& params : {json(nullptr), json{{"replicate", true}},
                               json{{"width", 1e6}, {"precision", 0.5}}}) {
      const std::string where =
          std::string(codec == Codec::kJson ? "json " : "msgpack ") +
          params.dump();
      Pair p = Pair::Create(
          TESSERA_ARENA_CPP, TESSERA_ARENA_RUST, Kind("arena", codec),
          params.is_null() ? std::string() : Encode(codec, params));
      ASSERT_TRUE(p.cpp && p.rust) << where;
      const bool replicating =
          p.SameHook(Hook::kReplicationConfig, "", where) == 0;
      EXPECT_EQ(replicating, params.contains("replicate")) << where;
      uint64_t seq = 0;
      for (uint64_t tick = 1; tick <= 60; ++tick) {
        std::vector<PendingInput> inputs;
        for (const json& j : by_tick[tick]) {
          inputs.push_back(PendingInput{
              j["subscriber"], ++seq, Encode(codec, j["input"]), {}, {}});
        }
        p.Step(inputs, where + " tick " + std::to_string(tick));
        ASSERT_FALSE(HasFatalFailure());
        if (replicating) p.SameHook(Hook::kReplicated, "", where);
      }
      Result<std::optional<std::string>> a = p.cpp->Save();
      Result<std::optional<std::string>> b = p.rust->Save();
      ASSERT_TRUE(a.ok() && b.ok()) << where;
      EXPECT_EQ(*a, *b) << where;
      ASSERT_TRUE(a->has_value());
      // Each restores the other's save.
      auto restored = GuestShard::Restore(
          Load(TESSERA_ARENA_RUST, 64), Kind("arena", codec), "s1",
          params.is_null() ? std::string() : Encode(codec, params), **a);
      ASSERT_TRUE(restored.ok()) << restored.status().ToString();
      Result<std::string> mine = (*restored)->Snapshot();
      Result<std::string> theirs = p.cpp->Snapshot();
      ASSERT_TRUE(mine.ok() && theirs.ok()) << where;
      EXPECT_EQ(*mine, *theirs) << where;
    }
  }
}

std::string U32(uint32_t v) {
  std::string b;
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
  return b;
}
std::string Str(const std::string& s) {
  return U32(static_cast<uint32_t>(s.size())) + s;
}
std::string Ids(const std::vector<uint64_t>& ids) {
  std::string out = U32(static_cast<uint32_t>(ids.size()));
  for (uint64_t id : ids) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(id >> (8 * i)));
  }
  return out;
}

TEST(RustGuestTest, ZoneMiniGivesTheCppZonesBytesFromEveryHook) {
  const std::vector<std::string> sids = {"alice", "scout1", "nobody"};
  std::string areas = U32(3);
  for (const std::string& s : sids) areas += Str(s);
  std::string filter = U32(2) + Str("alice") + Ids({1, 2, 3, 4, 1000}) +
                       Str("scout1") + Ids({3, 1001});
  const std::string visible =
      Str("alice") + Ids({1, 2, 1000}) + Ids({2}) + Ids({7});
  // Inputs per tick: joins, moves, stealth, spawns, reuse, components and
  // every rejection.
  const std::vector<std::vector<std::pair<std::string, json>>> script = {
      {{"alice", {{"join", json::object()}}},
       {"scout1", {{"move_to", {{"x", 40}, {"y", 40}}}}}},
      {{"alice", {{"move_to", {{"x", 90.5}, {"y", 5}}}}},
       {"", {{"spawn", {{"id", 7}, {"x", 10}, {"y", 10}, {"kind", "crate"}}}}},
       {"", {{"spawn", {{"id", 7}, {"x", 1}, {"y", 1}}}}},
       {"", {{"spawn", {{"id", 0}}}}},
       {"bob", {{"move_to", {{"x", 20000}, {"y", 0}}}}}},
      {{"",
        {{"set_component", {{"id", 7}, {"component", 5}, {"value", "lid"}}}}},
       {"", {{"set_component", {{"id", 7}, {"component", 1}, {"value", "x"}}}}},
       {"", {{"set_component", {{"id", 9}, {"component", 5}, {"value", "x"}}}}},
       {"",
        {{"set_component", {{"id", 7}, {"component", 300}, {"value", "x"}}}}}},
      {{"", {{"reuse", {{"id", 2}, {"x", 30}, {"y", 0}}}}},
       {"", {{"remove_component", {{"id", 7}, {"component", 5}}}}}},
      {{"", {{"remove", {{"id", 7}}}}}, {"", {{"remove", {{"id", 7}}}}}},
      {},
  };
  for (const char* mode : {"interest", "replicate", "replicate_all", "none"}) {
    for (bool shared : {false, true}) {
      for (Codec codec : {Codec::kMsgpack, Codec::kJson}) {
        const json params = {
            {"mode", mode}, {"shared", shared}, {"movers", 2}, {"budget", 64}};
        const std::string where =
            params.dump() + (codec == Codec::kJson ? " json" : " msgpack");
        Pair p = Pair::Create(TESSERA_ZONE_MINI_CPP, TESSERA_ZONE_MINI_RUST,
                              Kind("zone", codec), Encode(codec, params));
        ASSERT_TRUE(p.cpp && p.rust) << where;
        p.SameHook(Hook::kInterestConfig, "", where);
        p.SameHook(Hook::kReplicationConfig, "", where);
        uint64_t seq = 0;
        for (size_t t = 0; t < script.size(); ++t) {
          std::vector<PendingInput> inputs;
          for (const auto& [sid, input] : script[t]) {
            inputs.push_back(
                PendingInput{sid, ++seq, Encode(codec, input), {}, {}});
          }
          const std::string at = where + " tick " + std::to_string(t + 1);
          p.Step(inputs, at);
          ASSERT_FALSE(HasFatalFailure());
          if (std::string(mode) != "replicate_all" &&
              std::string(mode) != "none") {
            p.SameHook(Hook::kEntities, "", at);
            p.SameHook(Hook::kInterestAreas, areas, at);
            p.SameHook(Hook::kFilter, filter, at);
            p.SameHook(Hook::kSnapshotVisible, visible, at);
          }
          if (std::string(mode) != "interest" && std::string(mode) != "none") {
            p.SameHook(Hook::kReplicated, "", at);
          }
        }
        // A malformed argument is refused alike (and fails both shards).
        p.SameHook(Hook::kFilter, U32(5), where + " malformed");
      }
    }
  }
}

class HostileRustTest : public ::testing::Test {
 protected:
  std::unique_ptr<GuestShard> Start(const json& params, KindConfig kind) {
    auto shard = GuestShard::Create(Load(TESSERA_HOSTILE_RUST, kind.memory_mb),
                                    kind, "h1", Encode(kind.codec, params));
    EXPECT_TRUE(shard.ok()) << shard.status().ToString();
    return shard.ok() ? std::move(*shard) : nullptr;
  }
  KindConfig kind_ = Kind("hostile", Codec::kMsgpack);
};

TEST_F(HostileRustTest, InfiniteLoopRunsOutOfFuel) {
  kind_.max_run_ms = 60000;       // fuel, not the watchdog, stops it
  kind_.tick_budget_ms = 600000;  // and not the tick budget
  auto g = Start({{"mode", "loop"}}, kind_);
  ASSERT_TRUE(g);
  StepResult r = g->Step({}, 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
  EXPECT_EQ(r.outcome.message,
            "fuel exhausted: the tick used more than 200000000 fuel");
}

TEST_F(HostileRustTest, MemoryBombCannotPassTheCap) {
  kind_.memory_mb = 16;
  auto g = Start({{"mode", "membomb"}}, kind_);
  ASSERT_TRUE(g);
  int ticks = 0;
  while (ticks < 100 && g->Step({}, 50000).outcome.running()) {
    ++ticks;
    ASSERT_LE(g->memory_bytes(), 16u * 1024 * 1024);
  }
  EXPECT_TRUE(g->failed()) << "still running after 100 MiB of allocations";
  EXPECT_GE(ticks, 8);
  EXPECT_THAT(g->failure(), HasSubstr("grow its memory past memoryMb 16"));
}

TEST_F(HostileRustTest, DeepRecursionTraps) {
  auto g = Start({{"mode", "recurse"}}, kind_);
  ASSERT_TRUE(g);
  StepResult r = g->Step({}, 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
  EXPECT_FALSE(r.outcome.message.empty());
  EXPECT_THAT(r.outcome.message, ::testing::Not(StartsWith("panic: ")));
  EXPECT_FALSE(g->Snapshot().ok());  // dead for good
}

TEST_F(HostileRustTest, PanicMessagesReachTheStopReason) {
  auto g = Start({{"mode", "panic"}, {"at", 3}}, kind_);
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->Step({}, 50000).outcome.running());
  EXPECT_TRUE(g->Step({}, 50000).outcome.running());
  StepResult r = g->Step({}, 50000);
  EXPECT_EQ(r.outcome.stop, StopReason::kFailed);
  EXPECT_THAT(r.outcome.message,
              StartsWith("panic: boom at tick 3 (at src/lib.rs:"));
  EXPECT_EQ(r.outcome.message, "panic: " + g->last_panic());
  ASSERT_FALSE(g->recent_log().empty());
  EXPECT_EQ(g->recent_log().back().level, 4);

  auto h = Start(json::object(), kind_);
  ASSERT_TRUE(h);
  const PendingInput boom{
      "alice", 1, Encode(Codec::kMsgpack, {{"panic", json::object()}}), {}, {}};
  StepResult s = h->Step({&boom, 1}, 50000);
  EXPECT_EQ(s.outcome.stop, StopReason::kFailed);
  EXPECT_THAT(s.outcome.message, StartsWith("panic: boom in apply_input (at "));
}

}  // namespace
}  // namespace tessera::shard
