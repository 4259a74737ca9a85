// Test-only fixture of the server's call runner, entity writer and onStop
// functions: the real pieces on one thread, without sleeping:
//   - the app's data: the real SQLite data store (store::OpenDataStore) in
//     a scratch directory, with the types Item {name, owner}, Stop {shard,
//     kind, reason} and Pos {x, y};
//   - a real ComputeEngine (MemoryComputeStore, a manual worker pool, fake
//     clocks) running module "fns": tests/apps/calls-app's functions
//     (calls-fns/fns.cc, built as a wasm module; the "compile" returns it)
//     with invoke triggers grant, refuse, trap, noop, onStop, caller;
//   - a real ShardHost (workers = 0, StepForTest on the fake clock) whose
//     kind "calls" runs the `calls` test guest (tests/guests/calls: inputs
//     {"call": {key, function, args}} and {"write": {entity, id, set}};
//     snapshot {"waiting", "events", "ticks"}), with the CallRunner and the
//     EntityWriter as its HostOptions::calls / writes and StopFunctions
//     among its observers.
#ifndef TESSERA_SERVER_CALLS_TEST_FIXTURE_H_
#define TESSERA_SERVER_CALLS_TEST_FIXTURE_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "compute/engine.h"
#include "compute/memory_compute_store.h"
#include "data/schema.h"
#include "guest/worker_pool.h"
#include "server/call_runner.h"
#include "server/entity_writer.h"
#include "server/stop_functions.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/shard_sink.h"
#include "shard/test_guests.h"
#include "store/store.h"

namespace tessera::server::testing {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline constexpr char kCallsSchema[] = R"({"types": [
  {"name": "Item", "fields": [{"name": "name", "type": "string", "required": true},
                              {"name": "owner", "type": "string"}]},
  {"name": "Stop", "fields": [{"name": "shard", "type": "string", "required": true},
                              {"name": "kind", "type": "string"},
                              {"name": "reason", "type": "string"}]},
  {"name": "Pos", "fields": [{"name": "x", "type": "float"},
                             {"name": "y", "type": "float"}]}]})";

// "Compiles" every version to the built fns module.
class FnsCompiler final : public compute::SourceCompiler {
 public:
  explicit FnsCompiler(fs::path dir) : dir_(std::move(dir)) {}
  compute::CompileResult Compile(const compute::VersionRecord& v) override {
    compute::CompileResult result;
    fs::create_directories(dir_);
    result.wasm = dir_ / ("fns-" + std::to_string(v.version_no) + ".wasm");
    std::error_code ec;
    fs::copy_file(TESSERA_CALLS_FNS_WASM, result.wasm,
                  fs::copy_options::overwrite_existing, ec);
    result.ok = !ec;
    result.log = ec ? "cannot copy " + std::string(TESSERA_CALLS_FNS_WASM) +
                          ": " + ec.message()
                    : "fns";
    result.size_bytes = result.ok ? fs::file_size(result.wasm) : 0;
    return result;
  }

 private:
  fs::path dir_;
};

// The last snapshot of each shard (the kind's codec is JSON).
class SnapshotSink final : public shard::ShardSink {
 public:
  void OnFrame(std::string_view shard_id, uint64_t, std::string_view snapshot,
               const std::vector<shard::InputResult>&) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_[std::string(shard_id)] = std::string(snapshot);
  }
  void OnStopped(std::string_view, shard::StopReason,
                 std::string_view) override {}
  json Last(const std::string& shard_id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_.find(shard_id);
    if (it == last_.end()) return nullptr;
    return json::parse(it->second, nullptr, false);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> last_;
};

class CallsTest : public ::testing::Test {
 protected:
  static constexpr int64_t kStartUnixUs = 1'800'000'000'000'000;
  static constexpr int64_t kTickUs = 50'000;  // the kind's 20 Hz

  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("tessera-calls-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir_);
    Result<std::unique_ptr<data::DataStore>> opened =
        store::OpenDataStore("sqlite:" + (dir_ / "app.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    data_ = std::move(opened).value();
    Result<data::DataSchema> schema =
        data::ParseDataSchema(kCallsSchema, "test");
    ASSERT_TRUE(schema.ok()) << schema.status().ToString();
    ASSERT_TRUE(data_->ApplySchema(*schema).ok());

    compute::EngineOptions engine;
    engine.store = &compute_store_;
    engine.compiler = &compiler_;
    engine.data = data_.get();
    engine.workers = &pool_;
    engine.clock = &clock_;
    engine.wall_clock = &wall_;
    engine.cache_dir = dir_ / "cache";
    engine.ceilings.fuel_per_invoke = 1'000'000'000'000;
    engine.on_compiled = [this](const compute::VersionRecord&) {
      std::lock_guard<std::mutex> lock(compiled_mu_);
      ++compiled_;
      compiled_cv_.notify_all();
    };
    fs::create_directories(engine.cache_dir);
    engine_ = std::make_unique<compute::ComputeEngine>(engine);
    ASSERT_TRUE(engine_->Start().ok());
    ASSERT_NO_FATAL_FAILURE(DeployFns());

    TESSERA_LOAD_GUEST(calls, "calls", 64);
    shard::KindConfig kind;
    kind.name = "calls";
    kind.codec = shard::Codec::kJson;
    kind.idle_shutdown_secs = 0;
    kind.write_flush_ms = 2000;
    kind.on_stop = "fns.onStop";
    ASSERT_TRUE(kinds_.Add(kind, calls).ok());
    kind.name = "quiet";  // no onStop
    kind.on_stop = "";
    ASSERT_TRUE(kinds_.Add(kind, calls).ok());

    CallRunnerOptions runner;
    runner.clock = &clock_;
    runner.metrics = &metrics_;
    runner.log = [this](const std::string& line) { AddLog(line); };
    runner_ = std::make_unique<CallRunner>(data_.get(), runner);
    EntityWriterOptions writer;
    writer.clock = &clock_;
    writer.metrics = &metrics_;
    writer.log = [this](const std::string& line) { AddLog(line); };
    writer_ = std::make_unique<EntityWriter>(data_.get(), writer);
    writer_->set_on_changes(
        [this](const std::vector<data::ChangeEvent>& changes) {
          std::lock_guard<std::mutex> lock(log_mu_);
          for (const data::ChangeEvent& c : changes) changes_.push_back(c);
        });

    shard::HostOptions host;
    host.workers = 0;
    host.clock = &clock_;
    host.save_interval_us = 0;
    host.calls = runner_.get();
    host.writes = writer_.get();
    host_ =
        std::make_unique<shard::ShardHost>(&kinds_, &observers_, nullptr, host);
    StopFunctionsOptions stops;
    stops.clock = &clock_;
    stops.log = [this](const std::string& line) { AddLog(line); };
    stop_functions_ = std::make_unique<StopFunctions>(*host_, kinds_, stops);
    stop_functions_->Attach(engine_.get());
    observers_.Add(&sink_);
    observers_.Add(stop_functions_.get());
    runner_->Attach(engine_.get(), host_.get());
  }

  void TearDown() override {
    if (host_) host_->Shutdown();
    if (writer_) writer_->Stop();
    if (runner_) runner_->Stop();
    if (stop_functions_) stop_functions_->Stop();
    if (engine_) engine_->Shutdown();
    host_.reset();
    engine_.reset();
    data_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void DeployFns() {
    Result<compute::ModuleRecord> m = engine_->UpsertModule("fns", "", true);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    compute::DeployRequest deploy;
    deploy.module = "fns";
    deploy.files = {{"module.cc", "// fns\n"}};
    deploy.language = compute::Language::kCpp;
    ASSERT_TRUE(engine_->DeployVersion(deploy).ok());
    {
      std::unique_lock<std::mutex> lock(compiled_mu_);
      compiled_cv_.wait(lock, [&] { return compiled_ >= 1; });
    }
    for (const char* name :
         {"grant", "refuse", "trap", "noop", "onStop", "caller"}) {
      compute::TriggerRecord t;
      t.type = compute::TriggerType::kInvoke;
      t.export_name = name;
      Result<compute::TriggerRecord> r = engine_->UpsertTrigger({"fns", t});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
    Result<compute::ModuleRecord> on = engine_->SetEnabled("fns", true);
    ASSERT_TRUE(on.ok()) << on.status().ToString();
  }

  void AddLog(const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu_);
    log_.push_back(line);
  }
  std::vector<std::string> Logs() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  // Starts shard `id` of `kind`.
  void Create(const std::string& id, const std::string& kind = "calls") {
    Status s = host_->Create(kind, id, "");
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Input(const std::string& shard, const json& input) {
    Status s = host_->SubmitInput(shard, "p1", ++seq_, input.dump());
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // The shard waits for call `key` to `function` with `args`.
  void Call(const std::string& shard, const std::string& key,
            const std::string& function, const json& args) {
    Input(shard, {{"call",
                   {{"key", key},
                    {"function", function},
                    {"args", args.is_null() ? "" : args.dump()}}}});
  }
  void WriteRow(const std::string& shard, const std::string& entity,
                const std::string& id, const json& set) {
    Input(shard,
          {{"write", {{"entity", entity}, {"id", id}, {"set", set.dump()}}}});
  }
  // One tick of every shard.
  void Step() {
    clock_.Advance(kTickUs);
    wall_.Advance(kTickUs);
    host_->StepForTest(clock_.NowUs());
  }
  // The shard's result events ("result:<key>:ok:<json>" /
  // "result:<key>:error:<error>").
  std::vector<std::string> Results(const std::string& shard) {
    std::vector<std::string> out;
    json snapshot = sink_.Last(shard);
    if (!snapshot.is_object()) return out;
    for (const json& e : snapshot.value("events", json::array())) {
      if (e.is_string() && e.get<std::string>().starts_with("result:")) {
        out.push_back(e.get<std::string>());
      }
    }
    return out;
  }
  json Waiting(const std::string& shard) {
    json snapshot = sink_.Last(shard);
    return snapshot.is_object() ? snapshot.value("waiting", json::array())
                                : json(nullptr);
  }

  int64_t Count(const std::string& type) {
    Result<std::unique_ptr<data::DataTxn>> txn =
        data_->Begin(data::TxnMode::kRead);
    EXPECT_TRUE(txn.ok()) << txn.status().ToString();
    if (!txn.ok()) return -1;
    Result<int64_t> n = (*txn)->Count(type, data::Filter{});
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : -1;
  }
  std::optional<data::Row> GetRow(const std::string& type,
                                  const std::string& id) {
    Result<std::unique_ptr<data::DataTxn>> txn =
        data_->Begin(data::TxnMode::kRead);
    if (!txn.ok()) return std::nullopt;
    Result<std::optional<data::Row>> row = (*txn)->Get(type, id);
    return row.ok() ? *row : std::nullopt;
  }
  std::optional<data::StoredCall> StoredCall(const std::string& key) {
    Result<std::unique_ptr<data::DataTxn>> txn =
        data_->Begin(data::TxnMode::kRead);
    if (!txn.ok()) return std::nullopt;
    Result<std::optional<data::StoredCall>> call = (*txn)->GetCall(key);
    return call.ok() ? *call : std::nullopt;
  }
  uint64_t Metric(const std::string& needle) {
    // The counter line "<name>{outcome="x"} N".
    const std::string text = metrics_.Render();
    size_t at = text.find(needle + " ");
    if (at == std::string::npos) return 0;
    return std::stoull(text.substr(at + needle.size() + 1));
  }

  fs::path dir_;
  FakeClock clock_{1'000'000};
  FakeWallClock wall_{kStartUnixUs};
  Metrics metrics_;
  std::unique_ptr<data::DataStore> data_;
  compute::MemoryComputeStore compute_store_{&wall_};
  // Per process: the test binaries run in parallel.
  FnsCompiler compiler_{fs::temp_directory_path() /
                        ("tessera-calls-fns-" + std::to_string(getpid()))};
  guest::WorkerPool pool_{[this] {
    guest::WorkerPoolOptions options;
    options.threads = 0;
    options.clock = &clock_;
    return options;
  }()};
  std::unique_ptr<compute::ComputeEngine> engine_;
  shard::KindRegistry kinds_;
  SnapshotSink sink_;
  shard::ShardObservers observers_;
  std::unique_ptr<CallRunner> runner_;
  std::unique_ptr<EntityWriter> writer_;
  std::unique_ptr<StopFunctions> stop_functions_;
  std::unique_ptr<shard::ShardHost> host_;
  uint64_t seq_ = 0;

  std::mutex compiled_mu_;
  std::condition_variable compiled_cv_;
  int compiled_ = 0;
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::vector<data::ChangeEvent> changes_;
};

}  // namespace tessera::server::testing

#endif  // TESSERA_SERVER_CALLS_TEST_FIXTURE_H_
