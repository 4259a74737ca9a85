// The tessera_compute_v1 host functions as compute modules see them: emits,
// the ABI's limits enforced before the engine's HostCalls, host refusals
// and last_error, random/now/state/log, events, calls while instantiating,
// and the C++ shop example.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "compute/instance_test_util.h"
#include "guest/watchdog.h"
#include "wasm/instance.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::compute {
namespace {

namespace abi = compute_abi;
using json = nlohmann::json;
using test::EmitCall;
using test::InvokeInput;
using test::kLimits;
using test::NewInstance;
using test::RecordingCalls;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ComputeInstanceTest, EmitsReachTheHostCalls) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  json ev = EmitCall(*inst, calls, "event",
                     {{"name", "season-changed"}, {"payload", "{\"s\":2}"}});
  EXPECT_EQ(ev["ok"], true);
  EXPECT_EQ(ev["count"], 3);
  json ch = EmitCall(*inst, calls, "channel",
                     {{"channel", "group:north"}, {"payload", "hi"}});
  EXPECT_EQ(ch["ok"], true);
  EXPECT_EQ(ch["count"], 3);  // connections reached, as the host said
  json sp = EmitCall(*inst, calls, "spatial",
                     {{"shard", "arena-1"},
                      {"x", 1.5},
                      {"y", -2},
                      {"radius", 30},
                      {"payload", "boom"}});
  EXPECT_EQ(sp["ok"], true);
  ASSERT_EQ(calls.emits.size(), 3u);
  EXPECT_EQ(calls.emits[0].kind, "event");
  EXPECT_EQ(calls.emits[0].target, "season-changed");
  EXPECT_EQ(calls.emits[0].payload, "{\"s\":2}");
  EXPECT_EQ(calls.emits[1].target, "group:north");
  EXPECT_EQ(calls.emits[1].payload, "hi");
  EXPECT_EQ(calls.emits[2].kind, "spatial");
  EXPECT_EQ(calls.emits[2].target, "arena-1");
  EXPECT_EQ(calls.emits[2].x, 1.5f);
  EXPECT_EQ(calls.emits[2].y, -2.0f);
  EXPECT_EQ(calls.emits[2].radius, 30.0f);
  EXPECT_EQ(calls.emits[2].payload, "boom");
  // tick emits on "all".
  ASSERT_TRUE(inst->Tick(100, calls, kLimits).ok);
  EXPECT_EQ(calls.emits.back().target, "all");
}

// Payloads, names and blobs over the ABI's limits, and malformed channels
// or coordinates, fail in the instance: the host calls never see them, the
// module gets the code and last_error's JSON.
TEST(ComputeInstanceTest, OverLimitArgumentsNeverReachTheHost) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  struct Case {
    std::string export_name;
    json params;
    int code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"oversize",
       {{"size", abi::kMaxNotifyPayloadBytes + 1}, {"target", "channel"}},
       abi::kErrTooLarge,
       "emit_channel: the payload is 1025 bytes, over the limit of 1024"},
      {"oversize",
       {{"size", abi::kMaxNotifyPayloadBytes + 1}, {"target", "spatial"}},
       abi::kErrTooLarge,
       "emit_spatial: the payload is 1025 bytes, over the limit of 1024"},
      {"oversize",
       {{"size", abi::kMaxEventPayloadBytes + 1}, {"target", "event"}},
       abi::kErrTooLarge,
       "emit_event: the payload is 65537 bytes, over the limit of 65536"},
      {"oversize",
       {{"size", abi::kMaxStateBytes + 1}, {"target", "state"}},
       abi::kErrTooLarge,
       "state_set: the blob is 262145 bytes, over the limit of 262144"},
      {"event",
       {{"name", std::string(abi::kMaxEventNameBytes + 1, 'n')}},
       abi::kErrTooLarge,
       "emit_event: the event name is 129 bytes, over the limit of 128"},
      {"event",
       {{"name", ""}},
       abi::kErrInvalid,
       "emit_event: the event name is empty"},
      {"channel",
       {{"channel", "everyone"}},
       abi::kErrInvalid,
       "emit_channel: unknown channel \"everyone\" (expected all, "
       "shard:<id>, kind:<kind>, group:<name> or player:<id>)"},
      {"channel",
       {{"channel", "shard:"}},
       abi::kErrInvalid,
       "emit_channel: unknown channel \"shard:\" (expected all, shard:<id>, "
       "kind:<kind>, group:<name> or player:<id>)"},
      {"spatial",
       {{"shard", "arena"}, {"radius", -1}},
       abi::kErrInvalid,
       "emit_spatial: x, y and radius must be finite and the radius not "
       "negative"},
      {"spatial",
       {{"shard", ""}},
       abi::kErrInvalid,
       "emit_spatial: the shard id is empty"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.params.dump().substr(0, 80));
    json r = EmitCall(*inst, calls, c.export_name, c.params);
    EXPECT_EQ(r["ok"], false);
    EXPECT_EQ(r["code"], c.code);
    EXPECT_EQ(r["message"], c.message);
    const char* name = c.code == abi::kErrTooLarge ? "too_large" : "invalid";
    EXPECT_EQ(r["errorCode"], name);
    EXPECT_EQ(json::parse(r["lastError"].get<std::string>()),
              (json{{"code", name}, {"message", c.message}}));
  }
  EXPECT_TRUE(calls.emits.empty());
  EXPECT_EQ(calls.state_sets, 0);
  // At the limits, they pass.
  json at =
      EmitCall(*inst, calls, "oversize",
               {{"size", abi::kMaxNotifyPayloadBytes}, {"target", "channel"}});
  EXPECT_EQ(at["ok"], true);
  ASSERT_EQ(calls.emits.size(), 1u);
  EXPECT_EQ(calls.emits[0].payload.size(), abi::kMaxNotifyPayloadBytes);
}

// The host's own refusals (egress budget, depth, no such shard) reach the
// module as the code, its name and the host's message.
TEST(ComputeInstanceTest, HostRefusalsAreSeenByTheModule) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  calls.emit_result = HostCallResult::Error(
      abi::kErrEgressBudget, "over maxEgressMsgsPerMin 600 this minute");
  json r =
      EmitCall(*inst, calls, "channel", {{"channel", "all"}, {"payload", "x"}});
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["code"], abi::kErrEgressBudget);
  EXPECT_EQ(r["errorCode"], "egress_budget");
  EXPECT_EQ(r["message"], "over maxEgressMsgsPerMin 600 this minute");
  EXPECT_EQ(json::parse(r["lastError"].get<std::string>()),
            (json{{"code", "egress_budget"},
                  {"message", "over maxEgressMsgsPerMin 600 this minute"}}));
  calls.emit_result = HostCallResult::Error(abi::kErrDepth, "");
  r = EmitCall(*inst, calls, "event", {{"name", "again"}});
  EXPECT_EQ(r["errorCode"], "event_depth");
  EXPECT_EQ(r["message"], "event_depth");  // no message: the code's name
  calls.emit_result = HostCallResult::Error(abi::kErrNotFound, "no shard x");
  r = EmitCall(*inst, calls, "spatial", {{"shard", "x"}, {"radius", 1}});
  EXPECT_EQ(r["errorCode"], "not_found");
  // The tick's emit fails its run with the SDK's text.
  calls.emit_result = HostCallResult::Error(abi::kErrEgressBudget, "budget");
  CallOutcome tick = inst->Tick(100, calls, kLimits);
  EXPECT_FALSE(tick.ok);
  EXPECT_FALSE(tick.instance_dead);
  EXPECT_EQ(tick.error, "egress_budget: budget");
  // A new entry call starts with no last_error.
  calls.emit_result = HostCallResult::Ok(0);
  r = EmitCall(*inst, calls, "channel", {{"channel", "all"}, {"payload", ""}});
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["lastError"], "");
}

TEST(ComputeInstanceTest, RandomNowStateAndLogServeTheModule) {
  auto inst = NewInstance("emit");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  EXPECT_EQ(EmitCall(*inst, calls, "random", {{"n", 4}}),
            (json{{"hex", "01020304"}}));
  // More than kMaxRandomBytes: the SDK asks in pieces.
  json big =
      EmitCall(*inst, calls, "random", {{"n", abi::kMaxRandomBytes + 2}});
  EXPECT_EQ(big["hex"].get<std::string>().size(),
            2 * (abi::kMaxRandomBytes + 2));
  EXPECT_EQ(big["hex"].get<std::string>().substr(2 * abi::kMaxRandomBytes),
            "0102");
  EXPECT_EQ(calls.random_calls, 3);
  EXPECT_EQ(EmitCall(*inst, calls, "now"), (json{{"now", calls.now_ms}}));
  EXPECT_EQ(EmitCall(*inst, calls, "state"),
            (json{{"found", false}, {"bytes", ""}}));
  calls.state = "blob";
  EXPECT_EQ(EmitCall(*inst, calls, "state"),
            (json{{"found", true}, {"bytes", "blob"}}));
  calls.state = "";
  EXPECT_EQ(EmitCall(*inst, calls, "state"),
            (json{{"found", true}, {"bytes", ""}}));
  // Log lines reach the call's HostCalls with their level, as valid UTF-8;
  // the SDK logs levels above error as error.
  EmitCall(*inst, calls, "log", {{"level", 2}, {"text", "careful"}});
  EmitCall(*inst, calls, "log", {{"level", 9}, {"text", "loud"}});
  EXPECT_THAT(calls.logs, ElementsAre("2 careful", "3 loud"));
  // Lines logged while no call runs go nowhere but the sandbox.
  RecordingCalls other;
  EmitCall(*inst, other, "log", {{"level", 1}, {"text", "to other"}});
  EXPECT_EQ(calls.logs.size(), 2u);
  EXPECT_THAT(other.logs, ElementsAre("1 to other"));
}

TEST(ComputeInstanceTest, EventsRunTheEventExport) {
  auto inst = NewInstance("events");
  ASSERT_NE(inst, nullptr);
  EXPECT_TRUE(inst->has_event());
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  const std::string input = json{
      {"event", "compute_event"},
      {"name", "season-changed"},
      {"payload", {{"season", "winter"}}},
      {"sourceModule", "world-sim"},
      {"flowId", "f-1"},
      {"depth", 2},
      {"coalesced", 3}}.dump();
  CallOutcome ev = inst->Event(input, calls, kLimits);
  ASSERT_TRUE(ev.ok) << ev.error;
  EXPECT_TRUE(ev.output.empty());
  EXPECT_EQ(calls.state, input);
  EXPECT_THAT(calls.logs,
              ElementsAre("1 event season-changed from world-sim depth 2 "
                          "coalesced 3 payload json"));
  const std::string b64 = json{
      {"event", "compute_event"},
      {"name", "raw"},
      {"payload", nullptr},
      {"payloadBase64", "AP8B"},
      {"sourceModule", ""},
      {"flowId", "f-2"},
      {"depth", 0}}.dump();
  ASSERT_TRUE(inst->Event(b64, calls, kLimits).ok);
  EXPECT_EQ(calls.logs.back(),
            "1 event raw from  depth 0 coalesced 0 payload base64:AP8B");
  CallOutcome last = inst->Invoke(InvokeInput("last"), calls, kLimits);
  ASSERT_TRUE(last.ok);
  EXPECT_EQ(last.output, b64);

  CallOutcome fail = inst->Event(
      json{{"name", "fail"}, {"payload", nullptr}}.dump(), calls, kLimits);
  EXPECT_FALSE(fail.ok);
  EXPECT_FALSE(fail.instance_dead);
  EXPECT_EQ(fail.error, "event refused: fail");
  // A cascade the host cuts at its depth limit fails the event run.
  calls.emit_result = HostCallResult::Error(
      abi::kErrDepth, "the event cascade is at depth 8, the limit");
  CallOutcome again =
      inst->Event(json{{"name", "again"}}.dump(), calls, kLimits);
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(again.error,
            "event_depth: the event cascade is at depth 8, the limit");
  EXPECT_EQ(calls.emits.back().target, "again");
  // Input that is not an event object fails in the SDK.
  CallOutcome bad = inst->Event("[1]", calls, kLimits);
  EXPECT_FALSE(bad.ok);
  EXPECT_THAT(bad.error, StartsWith("event input: "));
}

// Host calls during instantiation (static constructors) get
// kErrUnavailable: there is no entry call whose HostCalls could serve them.
TEST(ComputeInstanceTest, HostCallsWhileInstantiatingAreUnavailable) {
  const std::vector<uint8_t> wasm = wasm::testing::Wat(R"((module
    (import "tessera_compute_v1" "state_set"
      (func $set (param i32 i32) (result i32)))
    (import "tessera_compute_v1" "now_ms" (func $now (result i64)))
    (memory (export "memory") 1)
    (global $r (mut i32) (i32.const 99))
    (global $t (mut i64) (i64.const 99))
    (func (export "tessera_compute_abi_v1"))
    (func (export "_initialize")
      (global.set $r (call $set (i32.const 0) (i32.const 4)))
      (global.set $t (call $now)))
    (func (export "tessera_alloc") (param i32) (result i32) (i32.const 1024))
    (func (export "tessera_output_ptr") (result i32) (i32.const 0))
    (func (export "tessera_output_len") (result i32) (i32.const 0))
    (func (export "tessera_compute_init") (result i32)
      (i32.add (global.get $r) (i32.wrap_i64 (global.get $t))))
    (func (export "tessera_compute_tick") (param i32) (result i32)
      (i32.const 0))
    (func (export "tessera_compute_invoke") (param i32 i32) (result i32)
      (i32.const 0))))");
  wasm::LoadOptions lo;
  lo.check = ComputeCheckOptions(1);
  lo.cache_dir = TESSERA_COMPUTE_TEST_CACHE;
  auto module = wasm::LoadModule(wasm, lo);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto inst = ComputeInstance::Create(*module, {}, {});
  ASSERT_TRUE(inst.ok()) << inst.status().ToString();
  RecordingCalls calls;
  // init returns r + t = kErrUnavailable + 0, as its (failing) code.
  CallOutcome init = (*inst)->Init(calls, kLimits);
  EXPECT_FALSE(init.ok);
  EXPECT_EQ(init.error, "tessera_compute_init failed with code -9");
  EXPECT_EQ(calls.state_sets, 0);
}

// The C++ example: buy spends the gold in the blob and notifies the buyer.
TEST(ComputeInstanceTest, TheShopExampleSellsForGold) {
  auto inst = NewInstance("shop");
  ASSERT_NE(inst, nullptr);
  RecordingCalls calls;
  ASSERT_TRUE(inst->Init(calls, kLimits).ok);
  CallOutcome buy = inst->Invoke(
      InvokeInput("buy", {{"amount", 3}, {"item", "plank"}}, "u-1"), calls,
      kLimits);
  ASSERT_TRUE(buy.ok) << buy.error;
  const json receipt = {{"item", "plank"},
                        {"amount", 3},
                        {"cost", 15},
                        {"gold", 85},
                        {"owned", 3}};
  EXPECT_EQ(json::parse(buy.output), receipt);
  EXPECT_EQ(json::parse(*calls.state),
            (json{{"gold", 85}, {"inventory", {{"plank", 3}}}}));
  ASSERT_EQ(calls.emits.size(), 1u);
  EXPECT_EQ(calls.emits[0].target, "player:u-1");
  EXPECT_EQ(json::parse(calls.emits[0].payload), receipt);

  CallOutcome broke = inst->Invoke(
      InvokeInput("buy", {{"amount", 5}, {"item", "lantern"}}), calls, kLimits);
  EXPECT_FALSE(broke.ok);
  EXPECT_EQ(broke.error, "not enough gold: 100 needed, 85 left");
  CallOutcome seeds =
      inst->Invoke(InvokeInput("buy", {{"amount", 2}}), calls, kLimits);
  ASSERT_TRUE(seeds.ok) << seeds.error;
  EXPECT_EQ(calls.emits.back().target, "all");  // a management caller
  CallOutcome balance = inst->Invoke(InvokeInput("balance"), calls, kLimits);
  ASSERT_TRUE(balance.ok);
  EXPECT_EQ(json::parse(balance.output),
            (json{{"gold", 81}, {"inventory", {{"plank", 3}, {"seeds", 2}}}}));
  calls.set_result = HostCallResult::Error(abi::kErrStale, "stale");
  CallOutcome stale =
      inst->Invoke(InvokeInput("buy", {{"amount", 1}}), calls, kLimits);
  EXPECT_FALSE(stale.ok);
  EXPECT_EQ(stale.error, "the purchase was not saved (stale_state): try again");
}

}  // namespace
}  // namespace tessera::compute

namespace tessera::compute {
namespace {

// The data / shards host calls as the instance layer serves them: the op
// and request reach the host as given, the reply comes back through
// reply(), a refusal's code_name is last_error's code, an oversize reply
// never reaches the module.
class DataCalls final : public test::RecordingCalls {
 public:
  HostCallResult Data(std::string_view op, std::string_view request,
                      std::string* reply) override {
    seen.push_back("data " + std::string(op) + " " + std::string(request));
    if (op == "get") {
      *reply = reply_text;
      return HostCallResult::Ok(static_cast<int32_t>(reply->size()));
    }
    HostCallResult r =
        HostCallResult::Error(abi::kErrData, "ROW_NOT_FOUND: no row");
    r.code_name = "ROW_NOT_FOUND";
    return r;
  }
  std::vector<std::string> seen;
  std::string reply_text = R"({"row":null})";
};

json RunScript(ComputeInstance& inst, HostCalls& calls, json ops) {
  CallOutcome r =
      inst.Invoke(test::InvokeInput("run", {{"ops", std::move(ops)}}), calls,
                  test::kLimits);
  EXPECT_TRUE(r.ok) << r.error;
  return r.ok ? json::parse(r.output)["results"] : json::array();
}

TEST(ComputeInstanceTest, DataAndShardsCallsReachTheHostWithTheirReplies) {
  auto inst = test::NewInstance("data");
  ASSERT_NE(inst, nullptr);
  EXPECT_TRUE(inst->imports_data());
  auto echo = test::NewInstance("echo");
  ASSERT_NE(echo, nullptr);
  EXPECT_FALSE(echo->imports_data());

  DataCalls calls;
  ASSERT_TRUE(inst->Init(calls, test::kLimits).ok);
  json results = RunScript(
      *inst, calls,
      {{{"api", "data"}, {"op", "get"}, {"req", R"({"type":"T","id":"a"})"}},
       {{"api", "data"}, {"op", "update"}, {"req", R"({"type":"T"})"}},
       {{"api", "shards"}, {"op", "get"}, {"req", R"({"id":"z"})"}}});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0]["code"], 12);
  EXPECT_EQ(results[0]["reply"], json({{"row", nullptr}}));
  EXPECT_EQ(results[1]["code"], abi::kErrData);
  EXPECT_EQ(results[1]["error"], "ROW_NOT_FOUND");
  // The default HostCalls::Shards: this host has none.
  EXPECT_EQ(results[2]["code"], abi::kErrUnavailable);
  EXPECT_EQ(results[2]["error"], "unavailable");
  EXPECT_THAT(calls.seen, ElementsAre(R"(data get {"type":"T","id":"a"})",
                                      R"(data update {"type":"T"})"));

  // A reply over kMaxReplyBytes is refused by the instance layer.
  calls.reply_text = std::string(abi::kMaxReplyBytes + 1, ' ');
  results = RunScript(*inst, calls,
                      {{{"api", "data"}, {"op", "get"}, {"req", "{}"}}});
  EXPECT_EQ(results[0]["code"], abi::kErrTooLarge);
  EXPECT_EQ(results[0]["error"], "too_large");
  // An op that is not a word never reaches the host.
  calls.seen.clear();
  results = RunScript(*inst, calls,
                      {{{"api", "data"}, {"op", "get it"}, {"req", "{}"}}});
  EXPECT_EQ(results[0]["code"], abi::kErrInvalid);
  EXPECT_TRUE(calls.seen.empty());
}

}  // namespace
}  // namespace tessera::compute
