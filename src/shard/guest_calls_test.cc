// GuestShard's keyed call and entity write hooks (guest_calls.cc) against the
// `calls` test guest (the C++ SDK's hooks) and small hand-written modules
// for the start checks and outputs the host must refuse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
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
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using json = nlohmann::json;

KindConfig CallsKind() {
  KindConfig kind;
  kind.name = "calls";
  return kind;
}

std::unique_ptr<GuestShard> Make(
    const std::shared_ptr<const wasm::CompiledModule>& module,
    const GuestEnv& env = {}) {
  auto shard = GuestShard::Create(module, CallsKind(), "c",
                                  Msgpack(json::object()), env);
  EXPECT_TRUE(shard.ok()) << shard.status().ToString();
  return shard.ok() ? std::move(shard).value() : nullptr;
}

void Input(GuestShard& g, const std::string& sid, const json& input) {
  InputResult r = g.ApplyInput(sid, Msgpack(input));
  EXPECT_TRUE(r.accepted) << r.rejection;
}

json Snap(GuestShard& g) {
  auto bytes = g.Snapshot();
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? FromMsgpack(*bytes) : json();
}

TEST(GuestCallsTest, TheSdkHooksListCallsTakeResultsAndGiveWrites) {
  TESSERA_LOAD_GUEST(module, "calls", 64);
  auto g = Make(module);
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->has_calls());
  EXPECT_TRUE(g->has_writes());
  auto none = g->TakeCalls();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_THAT(none->calls, IsEmpty());  // kNoState

  Input(*g, "alice",
        {{"call",
          {{"key", "loot:1"},
           {"function", "items.grant"},
           {"args", R"({"item": "sword", "n": 1})"}}}});
  Input(*g, "alice", {{"call", {{"key", "k2"}, {"function", "ping"}}}});
  auto listed = g->TakeCalls();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_THAT(listed->refusals, IsEmpty());
  ASSERT_EQ(listed->calls.size(), 2u);
  EXPECT_EQ(listed->calls[0].key, "loot:1");
  EXPECT_EQ(listed->calls[0].function, "items.grant");
  EXPECT_EQ(json::parse(listed->calls[0].args_json),
            json({{"item", "sword"}, {"n", 1}}));
  EXPECT_EQ(listed->calls[1].args_json, "null");

  CallResult ok;
  ok.key = "loot:1";
  ok.result_json = R"({"granted": "sword"})";
  ASSERT_TRUE(g->DeliverCallResult(ok).ok());
  CallResult refused;
  refused.key = "k2";
  refused.ok = false;
  refused.error = "FUNCTION_NOT_FOUND: no function ping";
  ASSERT_TRUE(g->DeliverCallResult(refused).ok());
  json snap = Snap(*g);
  EXPECT_THAT(snap["waiting"], IsEmpty());
  EXPECT_THAT(snap["events"],
              ElementsAre("input:alice:call", "input:alice:call",
                          R"(result:loot:1:ok:{"granted":"sword"})",
                          "result:k2:error:FUNCTION_NOT_FOUND: no function "
                          "ping"));

  Input(*g, "",
        {{"write",
          {{"entity", "Character"},
           {"id", "c1"},
           {"set", R"({"x": 1.5, "name": "Ann"})"}}}});
  auto writes = g->TakeWrites();
  ASSERT_TRUE(writes.ok()) << writes.status().ToString();
  EXPECT_THAT(writes->refusals, IsEmpty());
  ASSERT_EQ(writes->writes.size(), 1u);
  EXPECT_EQ(writes->writes[0].entity, "Character");
  EXPECT_EQ(writes->writes[0].id, "c1");
  EXPECT_EQ(writes->writes[0].set_json, R"({"name":"Ann","x":1.5})");
  auto again = g->TakeWrites();  // taken: the guest gives each change once
  ASSERT_TRUE(again.ok());
  EXPECT_THAT(again->writes, IsEmpty());
}

TEST(GuestCallsTest, BadJsonTextInACallIsAPanicNamingIt) {
  TESSERA_LOAD_GUEST(module, "calls", 64);
  auto g = Make(module);
  ASSERT_TRUE(g);
  Input(*g, "a", {{"call", {{"key", "k"}, {"function", "f"}, {"args", "{"}}}});
  auto listed = g->TakeCalls();
  ASSERT_FALSE(listed.ok());
  EXPECT_TRUE(g->failed());
  EXPECT_THAT(g->failure(),
              StartsWith("panic: calls(): the args_json of call \"k\" is not "
                         "JSON"));
}

TEST(GuestCallsTest, ASetThatIsNotAnObjectIsAPanicNamingTheRow) {
  TESSERA_LOAD_GUEST(module, "calls", 64);
  auto g = Make(module);
  ASSERT_TRUE(g);
  Input(*g, "a", {{"write", {{"entity", "T"}, {"id", "r1"}, {"set", "[1]"}}}});
  auto writes = g->TakeWrites();
  ASSERT_FALSE(writes.ok());
  EXPECT_THAT(g->failure(),
              StartsWith("panic: writes(): the set_json of T \"r1\" is not a "
                         "JSON object"));
}

// ---- Hand-written modules -------------------------------------------------

// `bytes` as a WAT data string.
std::string WatBytes(std::string_view bytes) {
  std::string out;
  char hex[4];
  for (unsigned char c : bytes) {
    std::snprintf(hex, sizeof hex, "\\%02x", c);
    out += hex;
  }
  return out;
}

// A shard module whose output buffer holds `output` (its length `out_len`
// when given, which may point past it), plus `extra`.
std::vector<uint8_t> RawCallsWat(const std::string& output,
                                 const std::string& extra, int pages = 1,
                                 int64_t out_len = -1) {
  const std::string len = std::to_string(
      out_len < 0 ? static_cast<int64_t>(output.size()) : out_len);
  return wasm::testing::Wat("(module (memory " + std::to_string(pages) + ")" +
                            R"(
  (export "memory" (memory 0))
  (data (i32.const 2048) ")" +
                            WatBytes(output) + R"(")
  (func (export "tessera_abi_v1"))
  (func (export "tessera_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tessera_init") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_apply_input") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_tick") (param i64) (result i32) (i32.const 0))
  (func (export "tessera_snapshot") (result i32) (i32.const 0))
  (func (export "tessera_output_ptr") (result i32) (i32.const 2048))
  (func (export "tessera_output_len") (result i32) (i32.const )" +
                            len + "))" + extra + ")");
}

constexpr char kCalls[] =
    R"((func (export "tessera_calls") (result i32) (i32.const 0)))";
constexpr char kOnResult[] =
    R"((func (export "tessera_on_call_result") (param i32 i32) (result i32) (i32.const 0)))";
constexpr char kWrites[] =
    R"((func (export "tessera_writes") (result i32) (i32.const 0)))";

Result<std::shared_ptr<const wasm::CompiledModule>> LoadRaw(
    const std::string& output, const std::string& extra, int pages = 1,
    int64_t out_len = -1) {
  wasm::LoadOptions options;
  options.check = ShardCheckOptions(64);
  options.fuel = true;
  options.cache_dir = TESSERA_SHARD_TEST_CACHE;
  return wasm::LoadModule(RawCallsWat(output, extra, pages, out_len), options);
}

TEST(GuestCallsRawTest, CallsWithoutOnCallResultIsRefusedAtStart) {
  const struct {
    const char* extra;
    const char* message;
  } cases[] = {
      {kCalls,
       "the module exports tessera_calls without tessera_on_call_result"},
      {kOnResult,
       "the module exports tessera_on_call_result without tessera_calls"},
  };
  for (const auto& c : cases) {
    auto module = LoadRaw("", c.extra);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    auto shard = GuestShard::Create(*module, CallsKind(), "r", "");
    ASSERT_FALSE(shard.ok()) << c.message;
    EXPECT_EQ(shard.status().code(), StatusCode::kRefused);
    EXPECT_THAT(shard.status().message(), StartsWith(c.message));
    auto restored = GuestShard::Restore(*module, CallsKind(), "r", "", "s");
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), StatusCode::kRefused);
  }
  // Writes alone are fine.
  auto module = LoadRaw("", kWrites);
  ASSERT_TRUE(module.ok());
  auto shard = GuestShard::Create(*module, CallsKind(), "r", "");
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  EXPECT_TRUE((*shard)->has_writes());
  EXPECT_FALSE((*shard)->has_calls());
}

TEST(GuestCallsRawTest, WrongSignaturesAreRefusedByTheLoader) {
  for (
      const char* extra :
      {R"((func (export "tessera_calls") (param i32) (result i32) (i32.const 0)))",
       R"((func (export "tessera_on_call_result") (result i32) (i32.const 0)))",
       R"((func (export "tessera_writes") (param i32 i32)))"}) {
    wasm::CheckOptions check = ShardCheckOptions(64);
    auto info = wasm::CheckModule(RawCallsWat("", extra), check);
    EXPECT_FALSE(info.ok()) << extra;
  }
}

TEST(GuestCallsRawTest, MalformedJsonIsRefusedAndTheShardKeepsRunning) {
  auto module = LoadRaw("nope!", std::string(kCalls) + kOnResult + kWrites);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto shard = GuestShard::Create(*module, CallsKind(), "r", "");
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  auto calls = (*shard)->TakeCalls();
  ASSERT_TRUE(calls.ok()) << calls.status().ToString();
  EXPECT_THAT(calls->calls, IsEmpty());
  ASSERT_EQ(calls->refusals.size(), 1u);
  EXPECT_THAT(calls->refusals[0],
              StartsWith("tessera_calls output refused: not JSON"));
  auto writes = (*shard)->TakeWrites();
  ASSERT_TRUE(writes.ok());
  ASSERT_EQ(writes->refusals.size(), 1u);
  EXPECT_THAT(writes->refusals[0],
              StartsWith("tessera_writes output refused: not JSON"));
  EXPECT_FALSE((*shard)->failed());
}

TEST(GuestCallsRawTest, AnOutputOverTheCapFailsTheShard) {
  auto module = LoadRaw("[]", std::string(kCalls) + kOnResult, 80,
                        abi::kMaxCallsOutputBytes + 1);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto shard = GuestShard::Create(*module, CallsKind(), "r", "");
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  auto calls = (*shard)->TakeCalls();
  ASSERT_FALSE(calls.ok());
  EXPECT_EQ((*shard)->failure(),
            "limit: the output of tessera_calls is 4194305 bytes, over the "
            "cap of 4194304 bytes");
}

TEST(GuestCallsRawTest, ARefusedResultIsAWarningAndAnUnknownCodeAFailure) {
  std::vector<std::string> lines;
  GuestEnv env;
  env.forward_log = [&](int level, std::string_view text) {
    lines.push_back(std::to_string(level) + " " + std::string(text));
  };
  auto module = LoadRaw(
      "not yours",
      std::string(kCalls) +
          R"((func (export "tessera_on_call_result") (param i32 i32) (result i32) (i32.const 1)))");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto shard = GuestShard::Create(*module, CallsKind(), "r", "", env);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  CallResult r;
  r.key = "k";
  EXPECT_TRUE((*shard)->DeliverCallResult(r).ok());
  EXPECT_THAT(lines,
              ElementsAre("2 tessera_on_call_result refused: not yours"));
  EXPECT_FALSE((*shard)->failed());

  auto odd = LoadRaw(
      "",
      std::string(kCalls) +
          R"((func (export "tessera_on_call_result") (param i32 i32) (result i32) (i32.const 9)))");
  ASSERT_TRUE(odd.ok());
  auto shard2 = GuestShard::Create(*odd, CallsKind(), "r", "");
  ASSERT_TRUE(shard2.ok());
  EXPECT_FALSE((*shard2)->DeliverCallResult(r).ok());
  EXPECT_EQ((*shard2)->failure(),
            "abi: tessera_on_call_result returned unknown code 9");
}

}  // namespace
}  // namespace tessera::shard
