// The engine and the app's data, end to end: real guest modules
// (tests/guests/compute_data, built with the C++ SDK), the real SQLite
// DataStore (store::OpenDataStore), a recording ShardsPort (the port's test
// double; the server's real one is server/compute_shards). Every entry call
// of a module importing data is one transaction: what it did commits only
// when it succeeds, and what waits for the commit (shards.send / publish,
// compute events, data events, function_invoked) happens only then.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compute/engine_test_fixture.h"
#include "data/schema.h"
#include "store/store.h"
#include "tessera/compute_abi.h"

namespace tessera::compute::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSchema[] = R"({"types": [
  {"name": "Item", "fields": [
     {"name": "name", "type": "string", "required": true},
     {"name": "qty", "type": "int", "default": 0}],
   "indexes": [{"field": "name", "unique": true}]},
  {"name": "Seen", "fields": [
     {"name": "event", "type": "string"},
     {"name": "input", "type": "string"}]},
  {"name": "Ticked", "fields": [{"name": "dtMs", "type": "int"}]}
]})";

// Records every call; Send checks what the store holds at that moment.
class RecordingShards final : public ShardsPort {
 public:
  Result<ShardView> Create(std::string_view kind, std::string_view id,
                           std::string_view params_json,
                           std::string_view) override {
    calls.push_back("create " + std::string(kind) + " " + std::string(id) +
                    " " + std::string(params_json));
    ShardView v;
    v.id = std::string(id);
    v.kind = std::string(kind);
    v.status = "running";
    v.machine = "local";
    return v;
  }
  Result<std::optional<ShardView>> Get(std::string_view id) override {
    calls.push_back("get " + std::string(id));
    return std::optional<ShardView>();
  }
  Result<std::vector<ShardView>> List(std::string_view) override {
    return std::vector<ShardView>{};
  }
  Result<std::string> Ticket(std::string_view id, std::string_view subscriber,
                             std::string_view claims, int64_t ttl) override {
    calls.push_back("ticket " + std::string(id) + " " +
                    std::string(subscriber) + " " + std::string(claims) + " " +
                    std::to_string(ttl));
    return std::string("ticket-for-") + std::string(subscriber);
  }
  Status Send(std::string_view id, std::string_view input) override {
    calls.push_back("send " + std::string(id) + " " + std::string(input));
    if (during_send) during_send();
    return Status::Ok();
  }
  Status Publish(std::string_view target, std::string_view topic,
                 std::string_view data) override {
    calls.push_back("publish " + std::string(target) + " " +
                    std::string(topic) + " " + std::string(data));
    return Status::Ok();
  }
  Status Transfer(std::string_view, std::string_view, std::string_view,
                  std::string_view) override {
    return Status(StatusCode::kFailedPrecondition,
                  "SHARD_TRANSFER_REFUSED: the target refused");
  }
  Status Stop(std::string_view id) override {
    return NotFound("SHARD_NOT_FOUND: no shard \"" + std::string(id) + "\"");
  }
  std::vector<std::string> calls;
  std::function<void()> during_send;
};

json Op(const std::string& api, const std::string& op, const json& req) {
  return {{"api", api}, {"op", op}, {"req", req.dump()}};
}

class DataEngineTest : public EngineTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_engine_data_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    Result<std::unique_ptr<data::DataStore>> opened =
        store::OpenDataStore("sqlite:" + (dir_ / "data.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    data_ = std::move(opened).value();
    Result<data::DataSchema> schema = data::ParseDataSchema(kSchema, "test");
    ASSERT_TRUE(schema.ok()) << schema.status().ToString();
    ASSERT_TRUE(data_->ApplySchema(*schema).ok());
    EngineOptions options = Options();
    options.data = data_.get();
    options.shards = &shards_;
    engine_ = std::make_unique<ComputeEngine>(options);
    ASSERT_TRUE(engine_->Start().ok());
  }
  void TearDown() override {
    EngineTest::TearDown();
    engine_.reset();
    data_.reset();
    fs::remove_all(dir_);
  }

  // Invoke "run" of `module` with `ops`, ending as `end`.
  Result<InvokeResult> Script(const std::string& module, json ops,
                              const std::string& end = "ok") {
    json params = {{"ops", std::move(ops)}, {"end", end}};
    return Call(module, "run", params.dump());
  }
  static json Results(const Result<InvokeResult>& r) {
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return json::array();
    return json::parse(r->result)["results"];
  }

  std::vector<data::Row> Rows(const std::string& type) {
    Result<std::unique_ptr<data::DataTxn>> txn =
        data_->Begin(data::TxnMode::kRead);
    EXPECT_TRUE(txn.ok());
    Result<data::Page> page = (*txn)->List(type, {}, "", 1000);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? page->rows : std::vector<data::Row>{};
  }
  // The event inputs the watcher module recorded (Seen rows), oldest first.
  std::vector<json> Seen() {
    std::vector<json> out;
    for (const data::Row& row : Rows("Seen")) {
      out.push_back(json::parse(
          json::parse(row.fields_json)["input"].get<std::string>()));
    }
    return out;
  }
  static TriggerRecord OnData(const std::string& on_event,
                              const std::string& entity_type = "",
                              const std::string& field_name = "",
                              const std::string& function_name = "",
                              int64_t debounce_ms = 0) {
    TriggerRecord t;
    t.type = TriggerType::kEvent;
    t.on_event = on_event;
    t.entity_type = entity_type;
    t.field_name = field_name;
    t.function_name = function_name;
    t.debounce_ms = debounce_ms;
    return t;
  }

  fs::path dir_;
  std::unique_ptr<data::DataStore> data_;
  RecordingShards shards_;
};

json Insert(const std::string& name, int qty) {
  return Op("data", "insert",
            {{"type", "Item"},
             {"id", name},
             {"fields", {{"name", name}, {"qty", qty}}}});
}

TEST_F(DataEngineTest, AnInvokeCommitsItsWritesAndTheRunRowCountsThem) {
  Ready("shop", "data", {Invoke("run")});
  json results = Results(Script(
      "shop", {Insert("sword", 1), Insert("shield", 2),
               Op("data", "get", {{"type", "Item"}, {"id", "sword"}}),
               Op("data", "lookup",
                  {{"type", "Item"}, {"field", "name"}, {"value", "shield"}}),
               Op("data", "count", {{"type", "Item"}}),
               Op("data", "list",
                  {{"type", "Item"}, {"where", {{"qty", {{"gt", 1}}}}}})}));
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(results[0]["reply"]["row"]["id"], "sword");
  EXPECT_EQ(results[0]["reply"]["row"]["version"], 1);
  EXPECT_EQ(results[2]["reply"]["row"]["qty"], 1);
  EXPECT_EQ(results[3]["reply"]["row"]["id"], "shield");
  EXPECT_EQ(results[4]["reply"]["count"], 2);
  ASSERT_EQ(results[5]["reply"]["rows"].size(), 1u);
  EXPECT_EQ(results[5]["reply"]["rows"][0]["name"], "shield");
  EXPECT_EQ(results[5]["reply"]["nextCursor"], "");
  EXPECT_EQ(Rows("Item").size(), 2u);

  json update = Results(Script(
      "shop", {Op("data", "update",
                  {{"type", "Item"}, {"id", "sword"}, {"set", {{"qty", 5}}}}),
               Op("data", "delete", {{"type", "Item"}, {"id", "shield"}}),
               Op("data", "delete", {{"type", "Item"}, {"id", "shield"}})}));
  EXPECT_EQ(update[0]["reply"]["row"]["qty"], 5);
  EXPECT_EQ(update[0]["reply"]["row"]["version"], 2);
  EXPECT_EQ(update[1]["reply"]["deleted"], true);
  EXPECT_EQ(update[2]["reply"]["deleted"], false);
  std::vector<data::Row> items = Rows("Item");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].id, "sword");

  std::vector<RunRecord> runs = RunsOf("shop");
  ASSERT_GE(runs.size(), 2u);
  EXPECT_EQ(runs[0].entry, "run");
  EXPECT_EQ(runs[0].data_reads, 0);
  EXPECT_EQ(runs[0].data_writes, 3);
  EXPECT_EQ(runs[1].data_reads, 4);
  EXPECT_EQ(runs[1].data_writes, 2);
}

TEST_F(DataEngineTest, AFailedRunCommitsNothingAndRaisesNothing) {
  ASSERT_TRUE(engine_->SetPolicy(R"({"fuelPerInvoke": 20000000})").ok());
  Ready("shop", "data", {Invoke("run")});
  Ready("watcher", "data",
        {OnData("row_created", "Item"), OnEvent("bought", 0)});
  Pass();
  const json ops = {
      Insert("sword", 1),
      Op("shards", "send", {{"id", "zone-1"}, {"input", {{"heal", 5}}}}),
      Op("shards", "publish",
         {{"target", "group:g"}, {"topic", "t"}, {"data", "d"}}),
      Op("emit", "bought", {{"item", "sword"}})};
  struct Case {
    std::string end;
    StatusCode code;
    std::string error;
  };
  for (const Case& c : {Case{"error", StatusCode::kTrap, "refused on purpose"},
                        Case{"trap", StatusCode::kTrap, "trap"},
                        Case{"spin", StatusCode::kResourceExhausted, "fuel"}}) {
    Result<InvokeResult> r = Script("shop", ops, c.end);
    ASSERT_FALSE(r.ok()) << c.end;
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    EXPECT_THAT(r.status().message(), HasSubstr(c.error));
  }
  Pass();
  Advance(1000);
  EXPECT_TRUE(Rows("Item").empty());
  EXPECT_TRUE(Seen().empty());
  EXPECT_TRUE(shards_.calls.empty());

  // The same ops in a run that succeeds: all of it happens, after the
  // commit.
  shards_.during_send = [&] { EXPECT_EQ(Rows("Item").size(), 1u); };
  ASSERT_TRUE(Script("shop", ops).ok());
  EXPECT_THAT(shards_.calls,
              ElementsAre("send zone-1 {\"heal\":5}", "publish group:g t d"));
  Pass();
  std::vector<json> seen = Seen();
  ASSERT_EQ(seen.size(), 2u);
  std::vector<std::string> events = {seen[0]["event"], seen[1]["event"]};
  EXPECT_THAT(events,
              ::testing::UnorderedElementsAre("row_created", "compute_event"));
}

TEST_F(DataEngineTest, DataErrorsAreStructuredCodesAndTheRestCommits) {
  Ready("shop", "data", {Invoke("run")});
  json results = Results(Script(
      "shop",
      {Insert("sword", 1),
       Op("data", "insert",
          {{"type", "Item"}, {"id", "other"}, {"fields", {{"name", "sword"}}}}),
       Op("data", "get", {{"type", "Nope"}, {"id", "x"}}),
       Op("data", "update",
          {{"type", "Item"}, {"id", "axe"}, {"set", {{"qty", 1}}}}),
       Op("data", "update", {{"type", "Item"}, {"set", {{"qty", 1}}}}),
       Op("data", "insert", {{"type", "Item"}, {"fields", {{"qty", "x"}}}}),
       Op("data", "lookup", {{"type", "Item"}, {"field", "qty"}, {"value", 1}}),
       Op("data", "explode", json::object()),
       Op("shards", "stop", {{"id", "z"}}),
       Op("shards", "transfer",
          {{"from", "a"}, {"subscriber", "p"}, {"to", "b"}}),
       Op("shards", "get", {{"id", "z"}}),
       Op("shards", "ticket", {{"id", "z"}, {"subscriber", "p1"}})}));
  ASSERT_EQ(results.size(), 12u);
  EXPECT_GT(results[0]["code"], 0);  // the reply's size
  const int data = compute_abi::kErrData, shards = compute_abi::kErrShards;
  auto failed = [&](size_t i, int code, const std::string& name) {
    EXPECT_EQ(results[i]["code"], code) << i;
    EXPECT_EQ(results[i]["error"], name) << i;
  };
  failed(1, data, "UNIQUE_VIOLATION");
  failed(2, data, "UNKNOWN_TYPE");
  failed(3, data, "ROW_NOT_FOUND");
  failed(4, data, "BAD_REQUEST");
  failed(5, data, "BAD_VALUE");
  failed(6, data, "NO_INDEX");
  failed(7, compute_abi::kErrInvalid, "invalid");
  failed(8, shards, "SHARD_NOT_FOUND");
  failed(9, shards, "SHARD_TRANSFER_REFUSED");
  EXPECT_TRUE(results[10]["reply"]["shard"].is_null());
  EXPECT_EQ(results[11]["reply"]["ticket"], "ticket-for-p1");
  EXPECT_EQ(shards_.calls.back(), "ticket z p1 {} 600");
  ASSERT_EQ(Rows("Item").size(), 1u);

  // A request nesting deeper than the host reads is refused as a whole.
  std::string deep = "1";
  for (int i = 0; i < 100; ++i) deep = "[" + deep + "]";
  json nested = Results(
      Script("shop",
             {{{"api", "data"},
               {"op", "insert"},
               {"req", R"({"type":"Item","fields":{"name":)" + deep + "}}"}}}));
  EXPECT_EQ(nested[0]["error"], "BAD_REQUEST");
}

TEST_F(DataEngineTest, DataOpsPerCallAreCappedByThePolicy) {
  ASSERT_TRUE(engine_->SetPolicy(R"({"maxDbOpsPerTick": 3})").ok());
  Ready("shop", "data", {Invoke("run")});
  json ops = json::array();
  for (int i = 0; i < 5; ++i) ops.push_back(Insert("i" + std::to_string(i), i));
  json results = Results(Script("shop", ops));
  ASSERT_EQ(results.size(), 5u);
  for (int i = 0; i < 3; ++i) EXPECT_GT(results[i]["code"], 0) << i;
  for (int i = 3; i < 5; ++i) {
    EXPECT_EQ(results[i]["code"], compute_abi::kErrDataOps);
    EXPECT_EQ(results[i]["error"], "DATA_OPS");
  }
  EXPECT_EQ(Rows("Item").size(), 3u);
  // The cap is per entry call.
  EXPECT_GT(Results(Script("shop", {Insert("again", 1)}))[0]["code"], 0);
}

TEST_F(DataEngineTest, EachDataEventReachesItsTriggersWithItsPayload) {
  Ready("shop", "data", {Invoke("run")});
  Ready(
      "watcher", "data",
      {OnData("row_created", "Item"), OnData("field_changed", "Item", "qty"),
       OnData("row_deleted"), OnData("function_invoked", "", "", "shop.run")});
  Pass();
  ASSERT_TRUE(Script("shop", {Insert("sword", 1)}).ok());
  ASSERT_TRUE(Script("shop", {Op("data", "update",
                                 {{"type", "Item"},
                                  {"id", "sword"},
                                  {"set", {{"qty", 4}, {"name", "blade"}}}})})
                  .ok());
  ASSERT_TRUE(Script("shop", {Op("data", "delete",
                                 {{"type", "Item"}, {"id", "sword"}})})
                  .ok());
  Pass();
  std::vector<json> seen = Seen();
  // Per invoke: its data events, then function_invoked. The name change
  // has no trigger (fieldName qty).
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0]["event"], "row_created");
  EXPECT_EQ(seen[0]["name"], "row_created");
  EXPECT_EQ(seen[0]["sourceModule"], "shop");
  EXPECT_EQ(seen[0]["depth"], 1);
  const json& created = seen[0]["payload"];
  EXPECT_EQ(created["type"], "Item");
  EXPECT_EQ(created["id"], "sword");
  EXPECT_EQ(created["row"]["qty"], 1);
  EXPECT_EQ(created["origin"], "module:shop");
  EXPECT_EQ(seen[1]["event"], "function_invoked");
  EXPECT_EQ(seen[1]["payload"]["function"], "shop.run");
  EXPECT_EQ(seen[1]["payload"]["module"], "shop");
  EXPECT_EQ(seen[1]["payload"]["export"], "run");
  EXPECT_EQ(seen[1]["payload"]["callerShardId"], "");
  EXPECT_EQ(seen[1]["payload"]["flowId"], seen[0]["flowId"]);
  EXPECT_EQ(seen[2]["event"], "field_changed");
  EXPECT_EQ(seen[2]["payload"], json({{"type", "Item"},
                                      {"id", "sword"},
                                      {"field", "qty"},
                                      {"oldValue", 1},
                                      {"newValue", 4},
                                      {"origin", "module:shop"}}));
  EXPECT_EQ(seen[3]["event"], "function_invoked");
  EXPECT_EQ(seen[4]["event"], "row_deleted");
  EXPECT_EQ(seen[4]["payload"]["row"]["name"], "blade");
  EXPECT_EQ(seen[5]["event"], "function_invoked");
}

TEST_F(DataEngineTest, TriggerFiltersMustApplyToTheirEventAndAreItsKey) {
  Ready("watcher", "data", {});
  auto upsert = [&](TriggerRecord t) {
    return engine_->UpsertTrigger({"watcher", t});
  };
  EXPECT_FALSE(upsert(OnData("row_created", "Item", "qty")).ok());
  EXPECT_FALSE(upsert(OnData("function_invoked", "Item")).ok());
  EXPECT_FALSE(upsert(OnData("row_deleted", "", "", "shop.run")).ok());
  EXPECT_FALSE(upsert(OnData("property_changed")).ok());
  TriggerRecord named = OnEvent("x", 0);
  named.entity_type = "Item";
  Result<TriggerRecord> refused = upsert(named);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(
      refused.status().message(),
      HasSubstr("entityType does not apply to onEvent \"compute_event\""));
  ASSERT_TRUE(upsert(OnData("row_created", "Item")).ok());
  ASSERT_TRUE(upsert(OnData("row_created", "Seen")).ok());
  ASSERT_TRUE(upsert(OnData("row_created", "Item", "", "", 50)).ok());
  ASSERT_TRUE(upsert(OnData("field_changed", "Item", "qty")).ok());
  Result<std::vector<TriggerRecord>> all = engine_->Triggers("watcher");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].entity_type, "Item");
  EXPECT_EQ((*all)[0].debounce_ms, 50);
  EXPECT_EQ((*all)[2].field_name, "qty");
}

TEST_F(DataEngineTest, InvokeInTxnUsesTheCallersTransactionAndAfterCommit) {
  Ready("shop", "data", {Invoke("run")});
  Ready("watcher", "data",
        {OnData("row_created", "Item"), OnData("function_invoked")});
  Pass();
  const json ops = {Insert("sword", 1),
                    Op("shards", "send", {{"id", "zone-1"}, {"input", 7}})};
  InvokeRequest request;
  request.module = "shop";
  request.export_name = "run";
  request.params_json = json({{"ops", ops}}).dump();
  request.management = true;
  request.caller_shard_id = "zone-1";
  {
    // Rolled back by the caller: nothing happens.
    Result<std::unique_ptr<data::DataTxn>> txn =
        data_->Begin(data::TxnMode::kWrite);
    ASSERT_TRUE(txn.ok());
    Deferred deferred;
    ASSERT_TRUE(engine_->InvokeInTxn(**txn, request, &deferred).ok());
    EXPECT_FALSE(deferred.empty());
  }
  Pass();
  EXPECT_TRUE(Rows("Item").empty());
  EXPECT_TRUE(shards_.calls.empty());
  EXPECT_TRUE(Seen().empty());

  Result<std::unique_ptr<data::DataTxn>> txn =
      data_->Begin(data::TxnMode::kWrite);
  ASSERT_TRUE(txn.ok());
  Deferred deferred;
  Result<InvokeResult> r = engine_->InvokeInTxn(**txn, request, &deferred);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(shards_.calls.empty());  // not before the commit
  Result<std::vector<data::ChangeEvent>> changes = (*txn)->Commit();
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  txn->reset();
  engine_->AfterCommit(std::move(deferred), *changes, r->flow_id);
  EXPECT_THAT(shards_.calls, ElementsAre("send zone-1 7"));
  Pass();
  std::vector<json> seen = Seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0]["event"], "function_invoked");
  EXPECT_EQ(seen[0]["payload"]["callerShardId"], "zone-1");
  EXPECT_EQ(seen[0]["flowId"], r->flow_id);
  EXPECT_EQ(seen[1]["event"], "row_created");
  EXPECT_EQ(Rows("Item").size(), 1u);

  // The caller's shard reaches the module; a disabled module is a
  // transient refusal.
  request.export_name = "caller";
  ASSERT_TRUE(engine_->UpsertTrigger({"shop", Invoke("caller")}).ok());
  Result<std::unique_ptr<data::DataTxn>> again =
      data_->Begin(data::TxnMode::kWrite);
  ASSERT_TRUE(again.ok());
  Deferred more;
  Result<InvokeResult> caller = engine_->InvokeInTxn(**again, request, &more);
  ASSERT_TRUE(caller.ok()) << caller.status().ToString();
  EXPECT_EQ(json::parse(caller->result)["shard"], "zone-1");
  ASSERT_TRUE(engine_->SetEnabled("shop", false).ok());
  Result<InvokeResult> off = engine_->InvokeInTxn(**again, request, &more);
  EXPECT_EQ(off.status().code(), StatusCode::kUnavailable);
}

TEST_F(DataEngineTest, ResolveFunctionFindsModuleExportsAndBareNames) {
  Ready("shop", "data", {Invoke("run"), Invoke("caller")});
  Ready("bank", "data", {Invoke("run")});
  Result<FunctionRef> full = engine_->ResolveFunction("bank.run");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->module, "bank");
  EXPECT_EQ(full->export_name, "run");
  Result<FunctionRef> bare = engine_->ResolveFunction("caller");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->module, "shop");
  Result<FunctionRef> ambiguous = engine_->ResolveFunction("run");
  EXPECT_EQ(ambiguous.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ambiguous.status().message(), HasSubstr("BAD_REQUEST:"));
  EXPECT_THAT(ambiguous.status().message(), HasSubstr("bank, shop"));
  for (const char* missing : {"nope", "bank.caller", "vault.run"}) {
    Result<FunctionRef> r = engine_->ResolveFunction(missing);
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << missing;
    EXPECT_THAT(r.status().message(), HasSubstr("FUNCTION_NOT_FOUND:"));
  }
  EXPECT_EQ(engine_->ResolveFunction("").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(engine_->ResolveFunction("a b").status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(DataEngineTest, TicksAndEventsAreTransactionsToo) {
  Ready("ticker", "data", {Tick(10)});
  Ready("watcher", "data", {OnEvent("poke", 0)});
  Pass();
  Advance(100'000);
  Advance(100'000);
  std::vector<data::Row> ticked = Rows("Ticked");
  ASSERT_EQ(ticked.size(), 2u);
  for (const data::Row& row : ticked) {
    EXPECT_EQ(json::parse(row.fields_json)["dtMs"], 100);
  }
  engine_->RaiseEvent("compute_event", "poke", R"({"fail": false})", "");
  engine_->RaiseEvent("compute_event", "poke", R"({"fail": true})", "");
  Pass();
  std::vector<json> seen = Seen();
  ASSERT_EQ(seen.size(), 1u);  // the failed event's insert rolled back
  EXPECT_EQ(seen[0]["payload"]["fail"], false);
  std::vector<RunRecord> runs = RunsOf("watcher");
  ASSERT_GE(runs.size(), 2u);
  EXPECT_FALSE(runs[0].success);
  EXPECT_EQ(runs[0].data_reads, 1);
  EXPECT_EQ(runs[0].data_writes, 1);
}

TEST_F(DataEngineTest, DataEventsDebounceAndComeFromOutsideChangesToo) {
  Ready("shop", "data", {Invoke("run")});
  Ready("watcher", "data", {OnData("row_created", "Item", "", "", 100)});
  Pass();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Script("shop", {Insert("i" + std::to_string(i), i)}).ok());
  }
  Pass();
  EXPECT_TRUE(Seen().empty());
  Advance(100'000);
  std::vector<json> seen = Seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["coalesced"], 3);
  EXPECT_EQ(seen[0]["payload"]["id"], "i2");

  data::ChangeEvent admin;
  admin.op = data::ChangeOp::kCreated;
  admin.type = "Item";
  admin.id = "gift";
  admin.row_json = R"({"id":"gift","name":"gift","qty":1})";
  admin.origin = "admin";
  engine_->OnDataChanges({admin}, "");
  Advance(100'000);
  seen = Seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1]["payload"]["origin"], "admin");
  EXPECT_EQ(seen[1]["sourceModule"], "");
}

TEST_F(DataEngineTest, ACascadeOfDataEventsStopsAtTheDepthLimit) {
  // Every Seen row the watcher inserts raises the event that runs it again.
  Ready("shop", "data", {Invoke("run")});
  Ready("watcher", "data", {OnData("row_created")});
  Pass();
  ASSERT_TRUE(Script("shop", {Insert("sword", 1)}).ok());
  for (int i = 0; i < 12; ++i) Pass();
  std::vector<json> seen = Seen();
  ASSERT_EQ(seen.size(), compute_abi::kMaxEventDepth);
  EXPECT_EQ(seen.back()["depth"], compute_abi::kMaxEventDepth);
  bool warned = false;
  for (const LogRecord& log : LogsOf("watcher")) {
    warned |= log.message.find("event depth limit") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST_F(DataEngineTest, ModulesWithoutDataNeverTakeTheWriter) {
  Ready("plain", "echo", {Invoke("echo")});
  Result<std::unique_ptr<data::DataTxn>> held =
      data_->Begin(data::TxnMode::kWrite);
  ASSERT_TRUE(held.ok());
  Result<InvokeResult> r = Call("plain", "echo", R"({"x":1})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

}  // namespace
}  // namespace tessera::compute::testing
