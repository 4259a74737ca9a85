// Test-only fixture of compute_engine_test: a ComputeEngine over a
// MemoryComputeStore with a fake clock and wall clock, a manual worker pool
// (RunPass drives ticks), a test SourceCompiler whose "compile" of a C++
// upload naming a test module (`// test module: counter`) returns
// that prebuilt module (tests/guests/compute_*), and a NotifySink that
// records what was sent and reports a session count the test sets.
#ifndef TESSERA_COMPUTE_ENGINE_TEST_FIXTURE_H_
#define TESSERA_COMPUTE_ENGINE_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "compute/compute_test_guests.h"
#include "compute/engine.h"
#include "compute/memory_compute_store.h"
#include "compute/notify_sink.h"
#include "guest/worker_pool.h"

namespace tessera::compute::testing {

// Compiles an upload {"module.cc": "// test module: <name>\n..."} to the
// prebuilt test module <name>; "// test module: broken" fails with a log.
class TestCompiler final : public SourceCompiler {
 public:
  explicit TestCompiler(std::filesystem::path dir) : dir_(std::move(dir)) {}
  CompileResult Compile(const VersionRecord& version) override {
    CompileResult result;
    auto it = version.files.find("module.cc");
    const std::string marker = "// test module: ";
    if (it == version.files.end() || it->second.rfind(marker, 0) != 0) {
      result.log = "module.cc: no test module named";
      return result;
    }
    std::string name = it->second.substr(marker.size());
    name = name.substr(0, name.find('\n'));
    if (name == "broken") {
      result.log = "module.cc:1:1: error: this module is broken on purpose";
      return result;
    }
    Result<std::vector<uint8_t>> bytes = ComputeGuestBytes(name);
    if (!bytes.ok()) {
      result.log = bytes.status().ToString();
      return result;
    }
    std::filesystem::create_directories(dir_);
    result.wasm = dir_ / (name + ".wasm");
    std::ofstream(result.wasm, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
    result.ok = true;
    result.log = "compiled " + name;
    result.size_bytes = static_cast<int64_t>(bytes->size());
    ++compiles;
    return result;
  }
  std::atomic<int> compiles{0};

 private:
  std::filesystem::path dir_;
};

struct SentNote {
  std::string module, channel, payload, flow_id, shard;
};

class FakeNotify final : public NotifySink {
 public:
  HostCallResult NotifyChannel(const Notification& note) override {
    if (during_emit) during_emit();
    std::lock_guard<std::mutex> lock(mu);
    sent.push_back({std::string(note.module), std::string(note.channel),
                    std::string(note.payload), std::string(note.flow_id), ""});
    cv.notify_all();
    return HostCallResult::Ok(reached);
  }
  HostCallResult NotifySpatial(std::string_view shard, float, float, float,
                               const Notification& note) override {
    std::lock_guard<std::mutex> lock(mu);
    sent.push_back({std::string(note.module), std::string(note.channel),
                    std::string(note.payload), std::string(note.flow_id),
                    std::string(shard)});
    return HostCallResult::Ok(reached);
  }
  size_t SessionCount() const override { return sessions.load(); }
  // Blocks until `n` notifications were sent in all.
  void WaitSent(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return sent.size() >= n; });
  }

  std::mutex mu;
  std::condition_variable cv;
  std::vector<SentNote> sent;
  int32_t reached = 1;
  std::atomic<size_t> sessions{0};
  std::function<void()> during_emit;
};

inline SourceFiles ModuleFiles(const std::string& guest) {
  return {{"module.cc", "// test module: " + guest + "\nint unused_symbol;\n"}};
}

inline guest::WorkerPoolOptions ManualPool(const Clock* clock) {
  guest::WorkerPoolOptions options;
  options.threads = 0;
  options.clock = clock;
  return options;
}

class EngineTest : public ::testing::Test {
 protected:
  static constexpr int64_t kStartUnixUs = 1'800'000'000'000'000;  // 2027

  void SetUp() override { Boot(); }
  void TearDown() override {
    if (engine_) engine_->Shutdown();
  }

  EngineOptions Options() {
    EngineOptions options;
    options.store = &store_;
    options.compiler = &compiler_;
    options.notify = &notify_;
    options.workers = &pool_;
    options.clock = &clock_;
    options.wall_clock = &wall_;
    options.cache_dir = TESSERA_COMPUTE_TEST_CACHE;
    options.ceilings = ceilings_;
    options.templates_dir = templates_dir_;
    options.forward_log = [this](std::string_view, int, std::string_view text) {
      if (on_log) on_log(text);
    };
    options.on_compiled = [this](const VersionRecord& v) {
      std::lock_guard<std::mutex> lock(compiled_mu_);
      compiled_.push_back(v);
      compiled_cv_.notify_all();
    };
    return options;
  }

  void Boot() {
    engine_ = std::make_unique<ComputeEngine>(Options());
    ASSERT_TRUE(engine_->Start().ok());
  }

  // Waits for the compile queue to have finished `n` versions in all.
  VersionRecord WaitCompiled(size_t n) {
    std::unique_lock<std::mutex> lock(compiled_mu_);
    compiled_cv_.wait(lock, [&] { return compiled_.size() >= n; });
    return compiled_[n - 1];
  }

  // Creates module `name` running test module `guest`, compiled, with
  // `triggers`, enabled. Returns its id.
  int64_t Ready(const std::string& name, const std::string& guest,
                std::vector<TriggerRecord> triggers, bool always_on = true) {
    Result<ModuleRecord> m = engine_->UpsertModule(name, "test", always_on);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (!m.ok()) return 0;
    DeployRequest deploy;
    deploy.module = name;
    deploy.files = ModuleFiles(guest);
    Result<VersionRecord> v = engine_->DeployVersion(deploy);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    VersionRecord done = WaitCompiled(++deployed_);
    EXPECT_EQ(done.status, CompileStatus::kSucceeded) << done.compile_log;
    for (TriggerRecord t : triggers) {
      Result<TriggerRecord> r = engine_->UpsertTrigger({name, t});
      EXPECT_TRUE(r.ok()) << r.status().ToString();
    }
    Result<ModuleRecord> on = engine_->SetEnabled(name, true);
    EXPECT_TRUE(on.ok()) << on.status().ToString();
    return m->id;
  }

  static TriggerRecord Tick(double hz) {
    TriggerRecord t;
    t.type = TriggerType::kTick;
    t.tick_hz = hz;
    return t;
  }
  static TriggerRecord Invoke(
      const std::string& export_name,
      const std::string& policy = R"({"type":"anyone"})",
      const std::string& contract = "") {
    TriggerRecord t;
    t.type = TriggerType::kInvoke;
    t.export_name = export_name;
    t.invoke_policy_json = policy;
    t.contract_json = contract;
    return t;
  }
  static TriggerRecord OnEvent(const std::string& name, int64_t debounce_ms) {
    TriggerRecord t;
    t.type = TriggerType::kEvent;
    t.event_name = name;
    t.debounce_ms = debounce_ms;
    return t;
  }

  // One pass of the manual pool at the current time.
  void Pass() { pool_.RunPass(clock_.NowUs()); }
  // Both clocks move by `us`, then one pass.
  void Advance(int64_t us) {
    clock_.Advance(us);
    wall_.Advance(us);
    Pass();
  }

  Result<InvokeResult> Call(const std::string& module,
                            const std::string& export_name,
                            const std::string& params = "{}",
                            bool management = true,
                            const std::string& caller = "") {
    InvokeRequest request;
    request.module = module;
    request.export_name = export_name;
    request.params_json = params;
    request.management = management;
    request.caller_user_id = caller;
    return engine_->Invoke(request);
  }

  std::vector<RunRecord> RunsOf(const std::string& module) {
    Result<std::vector<RunRecord>> runs = engine_->Runs(module, RunFilter{});
    EXPECT_TRUE(runs.ok()) << runs.status().ToString();
    return runs.ok() ? *runs : std::vector<RunRecord>{};
  }
  std::vector<LogRecord> LogsOf(const std::string& module) {
    LogFilter filter;
    filter.limit = 1000;
    Result<std::vector<LogRecord>> logs = engine_->Logs(module, filter);
    EXPECT_TRUE(logs.ok()) << logs.status().ToString();
    return logs.ok() ? *logs : std::vector<LogRecord>{};
  }
  ModuleView ViewOf(const std::string& module) {
    Result<std::vector<ModuleView>> all = engine_->Modules();
    EXPECT_TRUE(all.ok());
    for (const ModuleView& v : *all) {
      if (v.record.name == module) return v;
    }
    ADD_FAILURE() << "no module " << module;
    return {};
  }
  UsageRow UsageTotal(const std::string& module) {
    Result<std::vector<UsageRow>> rows = engine_->Usage(module, 0);
    EXPECT_TRUE(rows.ok());
    UsageRow total;
    for (const UsageRow& r : *rows) {
      total.ticks += r.ticks;
      total.runs += r.runs;
      total.failures += r.failures;
      total.fuel_used += r.fuel_used;
      total.egress_msgs += r.egress_msgs;
      total.egress_bytes += r.egress_bytes;
    }
    return total;
  }

  // High fuel ceilings so a test can let the watchdog stop a call first.
  static Policy TestCeilings() {
    Policy p;
    p.fuel_per_tick = 1'000'000'000'000;
    p.fuel_per_invoke = 1'000'000'000'000;
    return p;
  }
  Policy ceilings_ = TestCeilings();
  std::filesystem::path templates_dir_;
  FakeClock clock_{1'000'000};
  FakeWallClock wall_{kStartUnixUs};
  MemoryComputeStore store_{&wall_};
  TestCompiler compiler_{std::filesystem::path(TESSERA_COMPUTE_TEST_CACHE) /
                         "engine_artifacts"};
  FakeNotify notify_;
  guest::WorkerPool pool_{ManualPool(&clock_)};
  std::function<void(std::string_view)> on_log;
  std::unique_ptr<ComputeEngine> engine_;

  std::mutex compiled_mu_;
  std::condition_variable compiled_cv_;
  std::vector<VersionRecord> compiled_;
  size_t deployed_ = 0;
};

}  // namespace tessera::compute::testing

#endif  // TESSERA_COMPUTE_ENGINE_TEST_FIXTURE_H_
