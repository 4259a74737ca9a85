// ShardHost's keyed calls and entity writes (shard_calls_host.cc) with the
// `calls` test guest (the C++ SDK's hooks) on a manual host, and test
// doubles of the two ports (CallGateway, EntityWriteSink: the real ones are
// the server's call runner and entity writer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "shard/shard_abi.h"
#include "shard/shard_host.h"
#include "shard/state_store.h"
#include "shard/test_guests.h"
#include "tessera/abi.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::shard {
namespace {

using ::tessera::shard::testing::FromMsgpack;
using ::tessera::shard::testing::Msgpack;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using json = nlohmann::json;

constexpr int64_t kTickUs = 50'000;

// What happened, in order, across the ports and the sink.
class Events {
 public:
  void Add(std::string event) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(events_, {});
  }

 private:
  std::mutex mu_;
  std::vector<std::string> events_;
};

class FakeGateway final : public CallGateway {
 public:
  void Submit(ShardCall call) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(std::move(call));
  }
  std::vector<ShardCall> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(calls_, {});
  }

 private:
  std::mutex mu_;
  std::vector<ShardCall> calls_;
};

class FakeWriteSink final : public EntityWriteSink {
 public:
  explicit FakeWriteSink(Events* events) : events_(events) {}
  void Write(std::string_view shard_id, uint32_t flush_ms,
             std::vector<EntityWrite> writes) override {
    std::string event =
        "write " + std::string(shard_id) + " " + std::to_string(flush_ms) + ":";
    for (const EntityWrite& w : writes) {
      event += " " + w.entity + "/" + w.id + "=" + w.set_json;
    }
    events_->Add(std::move(event));
  }
  void ShardStopped(std::string_view shard_id) override {
    events_->Add("stopped-writes " + std::string(shard_id));
  }

 private:
  Events* const events_;
};

class Sink final : public ShardSink {
 public:
  explicit Sink(Events* events) : events_(events) {}
  void OnFrame(std::string_view shard_id, uint64_t, std::string_view snapshot,
               const std::vector<InputResult>& inputs) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_[std::string(shard_id)] = std::string(snapshot);
    for (const InputResult& r : inputs) results_.push_back(r);
  }
  void OnStopped(std::string_view shard_id, StopReason reason,
                 std::string_view message) override {
    events_->Add("on-stopped " + std::string(shard_id) + " " +
                 StopReasonName(reason) + " " + std::string(message));
  }
  json Snapshot(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_.find(id);
    return it == last_.end() ? json() : FromMsgpack(it->second);
  }
  std::vector<InputResult> results() {
    std::lock_guard<std::mutex> lock(mu_);
    return results_;
  }

 private:
  Events* const events_;
  std::mutex mu_;
  std::map<std::string, std::string> last_;
  std::vector<InputResult> results_;
};

json Call(const std::string& key, const std::string& function = "items.grant",
          const std::string& args = "") {
  return {{"call", {{"key", key}, {"function", function}, {"args", args}}}};
}

json WriteInput(const std::string& entity, const std::string& id,
                const std::string& set) {
  return {{"write", {{"entity", entity}, {"id", id}, {"set", set}}}};
}

CallResult Ok(const std::string& key, const std::string& result = "{}") {
  CallResult r;
  r.key = key;
  r.result_json = result;
  return r;
}

class ShardCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KindConfig kind;
    kind.name = "calls";
    kind.write_flush_ms = 750;
    auto module = testing::LoadGuest("calls", kind.memory_mb);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    ASSERT_TRUE(kinds_.Add(kind, *module).ok());
  }
  // The host goes first: its Shutdown still logs and writes.
  void TearDown() override { host_.reset(); }
  void StartHost(bool ports = true) {
    HostOptions options;
    options.workers = 0;
    options.clock = &clock_;
    options.save_interval_us = 0;
    options.host_log = [this](std::string_view shard, std::string_view line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.push_back(std::string(shard) + ": " + std::string(line));
    };
    if (ports) {
      options.calls = &gateway_;
      options.writes = &writes_;
    }
    host_ = std::make_unique<ShardHost>(&kinds_, &sink_, &store_, options);
  }
  void Create(const std::string& id, const std::string& kind = "calls",
              json params = json::object()) {
    Status created = host_->Create(kind, id, Msgpack(params));
    ASSERT_TRUE(created.ok()) << created.ToString();
  }
  void Input(const std::string& id, const std::string& sid, const json& in) {
    Status s = host_->SubmitInput(id, sid, ++seq_, Msgpack(in));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Step(int ticks = 1) {
    for (int i = 0; i < ticks; ++i) {
      now_ += kTickUs;
      clock_.Set(now_);
      host_->StepForTest(now_);
    }
  }
  // A pass without time moving: poked shards run.
  void Pass() { host_->StepForTest(now_); }
  uint64_t RunId(const std::string& id) {
    auto info = host_->Get(id);
    EXPECT_TRUE(info.has_value());
    return info ? info->run_id : 0;
  }
  json GuestEvents(const std::string& id) {
    json snap = sink_.Snapshot(id);
    return snap.is_object() ? snap["events"] : json::array();
  }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }
  bool Logged(const std::string& part) {
    for (const auto& line : Log()) {
      if (line.find(part) != std::string::npos) return true;
    }
    return false;
  }

  FakeClock clock_{0};
  KindRegistry kinds_;
  Events events_;
  Sink sink_{&events_};
  FakeGateway gateway_;
  FakeWriteSink writes_{&events_};
  MemoryStateStore store_;
  std::unique_ptr<ShardHost> host_;
  int64_t now_ = 0;
  uint64_t seq_ = 0;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(ShardCallsTest, EveryRunHasItsOwnNonZeroRunId) {
  StartHost();
  Create("a");
  Create("b");
  EXPECT_NE(RunId("a"), 0u);
  EXPECT_NE(RunId("b"), 0u);
  EXPECT_NE(RunId("a"), RunId("b"));
  const uint64_t first = RunId("a");
  ASSERT_TRUE(host_->Stop("a").ok());
  Pass();
  Create("a");  // replaces the stopped record: a new run
  EXPECT_NE(RunId("a"), first);
}

TEST_F(ShardCallsTest, ACallIsSubmittedOnceWhileInFlight) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("loot:1", "items.grant", R"({"item":"sword"})"));
  Step();
  std::vector<ShardCall> calls = gateway_.Take();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].shard_id, "z");
  EXPECT_EQ(calls[0].kind, "calls");
  EXPECT_EQ(calls[0].run_id, RunId("z"));
  EXPECT_EQ(calls[0].key, "loot:1");
  EXPECT_EQ(calls[0].function, "items.grant");
  EXPECT_EQ(calls[0].args_json, R"({"item":"sword"})");
  EXPECT_EQ(host_->Get("z")->calls_in_flight, 1u);

  // The guest lists it every tick; the host does not send it again.
  Input("z", "alice", Call("loot:2"));
  Step(3);
  calls = gateway_.Take();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].key, "loot:2");
  EXPECT_EQ(host_->Get("z")->calls_in_flight, 2u);
  EXPECT_EQ(sink_.Snapshot("z")["waiting"], json({"loot:1", "loot:2"}));
  EXPECT_EQ(host_->call_counters().calls_submitted, 2u);
}

TEST_F(ShardCallsTest, AResultGoesToOnCallResultBeforeTheNextInputs) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("loot:1"));
  Step();
  const uint64_t run = RunId("z");
  ASSERT_EQ(gateway_.Take().size(), 1u);

  EXPECT_TRUE(host_->DeliverCallResult("z", run, Ok("loot:1", R"({"n":1})")));
  // A second answer for the same key is not taken.
  EXPECT_FALSE(host_->DeliverCallResult("z", run, Ok("loot:1")));
  Input("z", "alice", WriteInput("Character", "c1", R"({"x":1})"));
  Step();
  json events = GuestEvents("z");
  ASSERT_GE(events.size(), 4u);
  const size_t n = events.size();
  EXPECT_EQ(events[n - 3], R"(result:loot:1:ok:{"n":1})");
  EXPECT_EQ(events[n - 2], "input:alice:write");
  EXPECT_EQ(events[n - 1], "tick");
  EXPECT_EQ(sink_.Snapshot("z")["waiting"], json::array());
  EXPECT_EQ(host_->Get("z")->calls_in_flight, 0u);
  // Answered and no longer listed: nothing is submitted again.
  Step(2);
  EXPECT_THAT(gateway_.Take(), IsEmpty());
  EXPECT_EQ(host_->call_counters().results_delivered, 1u);
}

TEST_F(ShardCallsTest, APokeDeliversTheResultWithoutWaitingForATick) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("k"));
  Step();
  ASSERT_TRUE(host_->DeliverCallResult("z", RunId("z"), Ok("k", "7")));
  Pass();  // no time passes: no tick
  EXPECT_EQ(host_->Get("z")->calls_in_flight, 0u);
  Step();
  json events = GuestEvents("z");
  EXPECT_THAT(events, Contains("result:k:ok:7"));
}

TEST_F(ShardCallsTest, AnErrorResultReachesTheGuestAsAnError) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("k"));
  Step();
  CallResult r;
  r.key = "k";
  r.ok = false;
  r.error = "KEY_REUSED: key \"k\" was used with other args";
  ASSERT_TRUE(host_->DeliverCallResult("z", RunId("z"), r));
  Step();
  EXPECT_THAT(GuestEvents("z"),
              Contains("result:k:error:KEY_REUSED: key \"k\" was used with "
                       "other args"));
}

TEST_F(ShardCallsTest, ResultsForAnotherRunOrKeyOrShardAreDropped) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("k"));
  Step();
  const uint64_t run = RunId("z");
  EXPECT_FALSE(host_->DeliverCallResult("z", run + 1, Ok("k")));
  EXPECT_FALSE(host_->DeliverCallResult("z", 0, Ok("k")));
  EXPECT_FALSE(host_->DeliverCallResult("z", run, Ok("other")));
  EXPECT_FALSE(host_->DeliverCallResult("nobody", run, Ok("k")));
  EXPECT_EQ(host_->call_counters().results_dropped, 4u);
  Step();
  EXPECT_EQ(sink_.Snapshot("z")["waiting"], json({"k"}));

  // The run ends: its results are dropped too.
  ASSERT_TRUE(host_->Stop("z").ok());
  Pass();
  EXPECT_FALSE(host_->DeliverCallResult("z", run, Ok("k")));
}

TEST_F(ShardCallsTest, ARestoredShardIsANewRunAndSubmitsItsCallsAgain) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("loot:1", "items.grant", "[1]"));
  Step();
  const uint64_t old_run = RunId("z");
  ASSERT_EQ(gateway_.Take().size(), 1u);
  host_->Shutdown();  // saves the state, with the call it waits for
  EXPECT_THAT(events_.Take(), ElementsAre("stopped-writes z"));

  StartHost();
  ASSERT_TRUE(host_->Restore("calls", "z", "").ok());
  const uint64_t new_run = RunId("z");
  EXPECT_NE(new_run, old_run);
  Step();
  std::vector<ShardCall> calls = gateway_.Take();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].key, "loot:1");
  EXPECT_EQ(calls[0].args_json, "[1]");
  EXPECT_EQ(calls[0].run_id, new_run);
  // The old run's answer does not reach the new one; the new one's does.
  EXPECT_FALSE(host_->DeliverCallResult("z", old_run, Ok("loot:1")));
  EXPECT_TRUE(host_->DeliverCallResult("z", new_run, Ok("loot:1", "true")));
  Step();
  EXPECT_THAT(GuestEvents("z"), Contains("result:loot:1:ok:true"));
  EXPECT_EQ(sink_.Snapshot("z")["waiting"], json::array());
}

TEST_F(ShardCallsTest, WritesArePassedEachTickWithTheKindsFlushInterval) {
  StartHost();
  Create("z");
  Input("z", "alice", WriteInput("Character", "c1", R"({"x":1,"y":2})"));
  Input("z", "alice", WriteInput("Character", "c2", R"({"hp":10})"));
  Step();
  EXPECT_THAT(events_.Take(),
              ElementsAre("write z 750: Character/c1={\"x\":1,\"y\":2} "
                          "Character/c2={\"hp\":10}"));
  Step(2);  // nothing new: no call
  EXPECT_THAT(events_.Take(), IsEmpty());
  Input("z", "alice", WriteInput("Character", "c1", R"({"x":3})"));
  Step();
  EXPECT_THAT(events_.Take(),
              ElementsAre("write z 750: Character/c1={\"x\":3}"));
  EXPECT_EQ(host_->call_counters().writes_passed, 3u);
}

TEST_F(ShardCallsTest, ShardStoppedComesBeforeOnStoppedOnAStop) {
  StartHost();
  Create("z");
  Step();
  ASSERT_TRUE(host_->Stop("z").ok());
  Pass();
  EXPECT_THAT(events_.Take(),
              ElementsAre("stopped-writes z",
                          "on-stopped z stopped stopped by request"));
}

TEST_F(ShardCallsTest, AFinishingTicksWritesAreTakenBeforeShardStopped) {
  StartHost();
  Create("z");
  Input("z", "alice", WriteInput("Score", "s1", R"({"points":5})"));
  Input("z", "alice", {{"finish", json::object()}});
  Step();
  EXPECT_THAT(events_.Take(),
              ElementsAre("write z 750: Score/s1={\"points\":5}",
                          "stopped-writes z", "on-stopped z finished done"));
}

TEST_F(ShardCallsTest, AFailedShardStillFlushesBeforeOnStopped) {
  StartHost();
  Create("z");
  Input("z", "alice", WriteInput("Score", "s1", R"({"points":5})"));
  Step();
  Input("z", "alice", Call("k"));
  Step();
  ASSERT_EQ(gateway_.Take().size(), 1u);
  const uint64_t run = RunId("z");
  events_.Take();
  Input("z", "alice", {{"panic", json::object()}});
  Step();
  std::vector<std::string> events = events_.Take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], "stopped-writes z");
  EXPECT_THAT(events[1], HasSubstr("on-stopped z failed panic: boom"));
  EXPECT_FALSE(host_->DeliverCallResult("z", run, Ok("k")));
}

TEST_F(ShardCallsTest, ShutdownTellsTheWriterForEveryRunningShard) {
  StartHost();
  Create("a");
  Create("b");
  Create("c");
  Step();
  ASSERT_TRUE(host_->Stop("c").ok());
  Pass();
  events_.Take();
  host_->Shutdown();
  EXPECT_THAT(events_.Take(),
              ElementsAre("stopped-writes a", "stopped-writes b"));
}

TEST_F(ShardCallsTest, AResultQueuedBeforeAStopReachesTheModuleFirst) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("k"));
  Input("z", "alice", {{"record", json::object()}});
  Step();
  events_.Take();
  ASSERT_TRUE(host_->DeliverCallResult("z", RunId("z"), Ok("k")));
  ASSERT_TRUE(host_->Stop("z").ok());
  Pass();  // the result, then the write it led to, then the stop
  std::vector<std::string> events = events_.Take();
  EXPECT_THAT(events, ElementsAre("write z 750: Result/k={\"ok\":true}",
                                  "stopped-writes z",
                                  "on-stopped z stopped stopped by request"));
}

TEST_F(ShardCallsTest, AResultsWriteGoesOutAfterTheNextTick) {
  StartHost();
  Create("z");
  Input("z", "alice", Call("k"));
  Input("z", "alice", {{"record", json::object()}});
  Step();
  events_.Take();
  ASSERT_TRUE(host_->DeliverCallResult("z", RunId("z"), Ok("k")));
  Step();
  EXPECT_THAT(events_.Take(),
              ElementsAre("write z 750: Result/k={\"ok\":true}"));
}

TEST_F(ShardCallsTest, InputsWithAnEmptySubscriberComeFromTheServerSide) {
  StartHost();
  Create("z");
  Input("z", "", Call("gm:1"));
  Step();
  EXPECT_THAT(GuestEvents("z"), Contains("input::call"));
  std::vector<InputResult> results = sink_.results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].subscriber, "");
  EXPECT_TRUE(results[0].accepted);
}

TEST_F(ShardCallsTest, CallsTheHostRefusesAreLoggedAndCounted) {
  StartHost();
  Create("z");
  Input("z", "alice", Call(std::string(200, 'k')));
  Input("z", "alice", Call("fine", ""));
  Input("z", "alice", Call("ok"));
  Step();
  std::vector<ShardCall> calls = gateway_.Take();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].key, "ok");
  EXPECT_TRUE(
      Logged("z: call 0 refused: key is 200 bytes, over 128; call 1 "
             "(key \"fine\") refused: function is empty"))
      << ::testing::PrintToString(Log());
  EXPECT_EQ(host_->call_counters().calls_refused, 2u);
  EXPECT_EQ(host_->Get("z")->status, ShardStatus::kRunning);
}

TEST_F(ShardCallsTest, AtMostTheInFlightLimitIsSubmitted) {
  StartHost();
  Create("z");
  const size_t n = abi::kMaxCallsInFlight + 6;
  for (size_t i = 0; i < n; ++i) {
    Input("z", "alice", Call("k" + std::to_string(i)));
    if (i % 900 == 899) Step();  // the input queue holds 1024
  }
  Step();
  EXPECT_EQ(gateway_.Take().size(), abi::kMaxCallsInFlight);
  EXPECT_EQ(host_->Get("z")->calls_in_flight, abi::kMaxCallsInFlight);
  EXPECT_TRUE(Logged("6 calls wait for a later tick: 1024 are in flight"))
      << ::testing::PrintToString(Log());
  ASSERT_TRUE(host_->DeliverCallResult("z", RunId("z"), Ok("k0")));
  Step();
  std::vector<ShardCall> calls = gateway_.Take();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].key, "k1024");
}

TEST_F(ShardCallsTest, WithoutPortsTheHooksAreNotTakenAndALineSaysSo) {
  StartHost(/*ports=*/false);
  Create("z");
  EXPECT_TRUE(
      Logged("z: the module exports tessera_calls but this host "
             "makes no keyed calls"));
  EXPECT_TRUE(
      Logged("z: the module exports tessera_writes but this host has "
             "no entity writer"));
  Input("z", "alice", Call("k"));
  Step();
  EXPECT_EQ(host_->Get("z")->calls_in_flight, 0u);
  EXPECT_EQ(host_->call_counters().calls_submitted, 0u);
}

// A hand-written module whose tessera_calls and tessera_writes return text
// that is not JSON.
TEST_F(ShardCallsTest, MalformedJsonIsRefusedAndLoggedAndTheShardRuns) {
  const std::string wat = R"wat((module (memory 1)
  (export "memory" (memory 0))
  (data (i32.const 2048) "nope!")
  (func (export "tessera_abi_v1"))
  (func (export "tessera_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "tessera_init") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_apply_input") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_tick") (param i64) (result i32) (i32.const 0))
  (func (export "tessera_snapshot") (result i32) (i32.const 0))
  (func (export "tessera_output_ptr") (result i32) (i32.const 2048))
  (func (export "tessera_output_len") (result i32) (i32.const 5))
  (func (export "tessera_calls") (result i32) (i32.const 0))
  (func (export "tessera_on_call_result") (param i32 i32) (result i32) (i32.const 0))
  (func (export "tessera_writes") (result i32) (i32.const 0))))wat";
  wasm::LoadOptions options;
  options.check = ShardCheckOptions(64);
  options.fuel = true;
  options.cache_dir = TESSERA_SHARD_TEST_CACHE;
  auto module = wasm::LoadModule(wasm::testing::Wat(wat), options);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  KindConfig kind;
  kind.name = "raw";
  ASSERT_TRUE(kinds_.Add(kind, *module).ok());
  StartHost();
  Create("r", "raw");
  Step();
  EXPECT_TRUE(Logged("r: tessera_calls output refused: not JSON"))
      << ::testing::PrintToString(Log());
  EXPECT_TRUE(Logged("tessera_writes output refused: not JSON"));
  EXPECT_EQ(host_->call_counters().calls_refused, 1u);
  EXPECT_EQ(host_->call_counters().writes_refused, 1u);
  EXPECT_THAT(gateway_.Take(), IsEmpty());
  Step(30);  // refused every tick, logged at most once a second
  EXPECT_EQ(host_->call_counters().calls_refused, 31u);
  EXPECT_LE(Log().size(), 4u);  // calls and writes, twice each
  EXPECT_EQ(host_->Get("r")->status, ShardStatus::kRunning);
}

}  // namespace
}  // namespace tessera::shard
