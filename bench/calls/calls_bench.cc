// calls_bench: what the shards' keyed calls and entity writes cost on this
// machine (issue 15 "Done when"; bench/calls/README.md), each figure
// against a baseline measured in the same run, the report also as JSON
// (--json PATH, default calls_bench.json):
//
//   calls   keyed calls per second from one shard run to a trivial export
//           (the calls test app's fns.noop) through the server's CallRunner
//           (group commit: one durable SQLite commit per batch, a savepoint,
//           GetCall, the function in the sandbox and PutCall per call) on
//           the real SQLite data store (WAL, synchronous=FULL), and the
//           process CPU per call; baseline: the same number of single
//           durable commits of the same store, one per call (Begin, PutCall,
//           Commit), which is what a runner without group commit would do
//           at least.
//   writes  1,000 players moving at 20 Hz (every player writes {x, y} every
//           tick) through the EntityWriter, flushed every 2 s: CPU per
//           flush and per second of play (taking the writes and flushing);
//           baseline: the same moves written as they come, one transaction
//           of 1,000 updates per tick.
//
// --quick (the ctest smoke run) makes both small. Correctness alone decides
// the exit status (a call not answered, a row not written), never timing.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "compute/engine.h"
#include "compute/memory_compute_store.h"
#include "data/schema.h"
#include "guest/worker_pool.h"
#include "server/call_runner.h"
#include "server/entity_writer.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/test_guests.h"
#include "store/store.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kSchema[] = R"({"types": [
  {"name": "Pos", "fields": [{"name": "x", "type": "float"},
                             {"name": "y", "type": "float"}]}]})";

double WallUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// User + system CPU of the whole process, µs.
double ProcessCpuUs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec +
         u.ru_stime.tv_usec;
}
double ThreadCpuUs() {
  return static_cast<double>(ThreadCpuClock::Get()->NowUs());
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "calls_bench: %s\n", why.c_str());
  return 1;
}

class FnsCompiler final : public compute::SourceCompiler {
 public:
  explicit FnsCompiler(fs::path dir) : dir_(std::move(dir)) {}
  compute::CompileResult Compile(const compute::VersionRecord&) override {
    compute::CompileResult result;
    fs::create_directories(dir_);
    result.wasm = dir_ / "fns.wasm";
    std::error_code ec;
    fs::copy_file(TESSERA_CALLS_FNS_WASM, result.wasm,
                  fs::copy_options::overwrite_existing, ec);
    result.ok = !ec;
    result.log = ec ? ec.message() : "fns";
    return result;
  }

 private:
  fs::path dir_;
};

// A no-op shard sink.
class NoSink final : public shard::ShardSink {
 public:
  void OnFrame(std::string_view, uint64_t, std::string_view,
               const std::vector<shard::InputResult>&) override {}
  void OnStopped(std::string_view, shard::StopReason,
                 std::string_view) override {}
};

Result<std::unique_ptr<data::DataStore>> OpenData(const fs::path& db) {
  Result<std::unique_ptr<data::DataStore>> store =
      store::OpenDataStore("sqlite:" + db.string());
  if (!store.ok()) return store.status();
  Result<data::DataSchema> schema = data::ParseDataSchema(kSchema, "bench");
  if (!schema.ok()) return schema.status();
  TESSERA_RETURN_IF_ERROR((*store)->ApplySchema(*schema));
  return store;
}

// ---- calls ---------------------------------------------------------------

Result<json> BenchCalls(const fs::path& dir, int calls) {
  Result<std::unique_ptr<data::DataStore>> data = OpenData(dir / "calls.db");
  if (!data.ok()) return data.status();

  compute::MemoryComputeStore compute_store;
  FnsCompiler compiler(dir / "fns");
  guest::WorkerPoolOptions pool_options;
  pool_options.threads = 0;
  guest::WorkerPool pool(pool_options);
  compute::EngineOptions engine_options;
  engine_options.store = &compute_store;
  engine_options.compiler = &compiler;
  engine_options.data = data->get();
  engine_options.workers = &pool;
  engine_options.cache_dir = dir / "cache";
  fs::create_directories(engine_options.cache_dir);
  std::mutex mu;
  std::condition_variable cv;
  bool compiled = false;
  engine_options.on_compiled = [&](const compute::VersionRecord&) {
    std::lock_guard<std::mutex> lock(mu);
    compiled = true;
    cv.notify_all();
  };
  compute::ComputeEngine engine(engine_options);
  TESSERA_RETURN_IF_ERROR(engine.Start());
  if (Result<compute::ModuleRecord> m = engine.UpsertModule("fns", "", true);
      !m.ok()) {
    return m.status();
  }
  compute::DeployRequest deploy;
  deploy.module = "fns";
  deploy.files = {{"module.cc", "// fns\n"}};
  deploy.language = compute::Language::kCpp;
  if (Result<compute::VersionRecord> v = engine.DeployVersion(deploy);
      !v.ok()) {
    return v.status();
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return compiled; });
  }
  compute::TriggerRecord trigger;
  trigger.type = compute::TriggerType::kInvoke;
  trigger.export_name = "noop";
  if (Result<compute::TriggerRecord> t = engine.UpsertTrigger({"fns", trigger});
      !t.ok()) {
    return t.status();
  }
  if (Result<compute::ModuleRecord> on = engine.SetEnabled("fns", true);
      !on.ok()) {
    return on.status();
  }

  // One shard run (the `calls` guest) whose calls the runner answers.
  Result<std::shared_ptr<const wasm::CompiledModule>> guest =
      shard::testing::LoadGuest("calls", 64);
  if (!guest.ok()) return guest.status();
  shard::KindRegistry kinds;
  shard::KindConfig kind;
  kind.name = "calls";
  kind.codec = shard::Codec::kJson;
  kind.idle_shutdown_secs = 0;
  TESSERA_RETURN_IF_ERROR(kinds.Add(kind, *guest));
  server::CallRunnerOptions runner_options;
  server::CallRunner runner(data->get(), runner_options);
  NoSink sink;
  shard::HostOptions host_options;
  host_options.workers = 0;
  host_options.calls = &runner;
  shard::ShardHost host(&kinds, &sink, nullptr, host_options);
  TESSERA_RETURN_IF_ERROR(host.Create("calls", "bench", ""));
  const uint64_t run_id = host.Get("bench")->run_id;
  runner.Attach(&engine, &host);

  auto submit = [&](const std::string& prefix) {
    for (int i = 0; i < calls; ++i) {
      shard::ShardCall call;
      call.shard_id = "bench";
      call.kind = "calls";
      call.run_id = run_id;
      call.key = prefix + std::to_string(i);
      call.function = "fns.noop";
      call.args_json = R"({"i":)" + std::to_string(i) + "}";
      runner.Submit(std::move(call));
    }
  };
  auto wait_answered = [&](uint64_t n) {
    for (;;) {
      server::CallRunner::Counts c = runner.counts();
      if (c.ok + c.error + c.replayed >= n) return c;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  };
  // Warm-up (the module's instance loads, SQLite's pages).
  runner.Start();
  submit("warm:");
  wait_answered(static_cast<uint64_t>(calls));

  const double w0 = WallUs();
  const double c0 = ProcessCpuUs();
  submit("call:");
  server::CallRunner::Counts done = wait_answered(2ull * calls);
  const double wall_us = WallUs() - w0;
  const double cpu_us = ProcessCpuUs() - c0;
  runner.Stop();
  if (done.ok != 2ull * calls) {
    return Status(StatusCode::kInternal,
                  std::to_string(done.error) + " calls failed");
  }

  // Baseline: one durable commit per call.
  const double bw0 = WallUs();
  const double bc0 = ProcessCpuUs();
  for (int i = 0; i < calls; ++i) {
    Result<std::unique_ptr<data::DataTxn>> txn =
        (*data)->Begin(data::TxnMode::kWrite);
    if (!txn.ok()) return txn.status();
    data::StoredCall stored;
    stored.key = "base:" + std::to_string(i);
    stored.function = "fns.noop";
    stored.args_hash = "x";
    stored.result_json = "{}";
    TESSERA_RETURN_IF_ERROR((*txn)->PutCall(stored));
    Result<std::vector<data::ChangeEvent>> c = (*txn)->Commit();
    if (!c.ok()) return c.status();
  }
  const double base_wall_us = WallUs() - bw0;
  const double base_cpu_us = ProcessCpuUs() - bc0;
  host.Shutdown();
  engine.Shutdown();

  const double per_sec = calls / (wall_us / 1e6);
  const double base_per_sec = calls / (base_wall_us / 1e6);
  json out = {
      {"calls", calls},
      {"batches", done.batches},
      {"calls_per_sec", per_sec},
      {"cpu_us_per_call", cpu_us / calls},
      {"baseline_commits_per_sec", base_per_sec},
      {"baseline_cpu_us_per_commit", base_cpu_us / calls},
      {"speedup_vs_baseline", per_sec / base_per_sec},
      {"target_calls_per_sec", 5000},
  };
  std::printf(
      "calls   %d keyed calls to fns.noop: %.0f calls/s (%.1f us CPU per "
      "call, %llu batches)\n"
      "        baseline, one durable commit per call: %.0f commits/s "
      "(%.1f us CPU each) -> %.1fx; target >= 5,000 calls/s: %s\n",
      calls, per_sec, cpu_us / calls,
      static_cast<unsigned long long>(done.batches), base_per_sec,
      base_cpu_us / calls, per_sec / base_per_sec,
      per_sec >= 5000 ? "met" : "NOT met");
  return out;
}

// ---- writes --------------------------------------------------------------

Result<json> BenchWrites(const fs::path& dir, int players, int seconds) {
  Result<std::unique_ptr<data::DataStore>> data = OpenData(dir / "writes.db");
  if (!data.ok()) return data.status();
  {
    Result<std::unique_ptr<data::DataTxn>> txn =
        (*data)->Begin(data::TxnMode::kWrite);
    if (!txn.ok()) return txn.status();
    for (int p = 0; p < players; ++p) {
      Result<data::Row> row = (*txn)->Insert("Pos", "p" + std::to_string(p),
                                             R"({"x":0,"y":0})", "bench");
      if (!row.ok()) return row.status();
    }
    Result<std::vector<data::ChangeEvent>> c = (*txn)->Commit();
    if (!c.ok()) return c.status();
  }
  constexpr int kHz = 20;
  constexpr uint32_t kFlushMs = 2000;
  const int ticks = seconds * kHz;
  auto moves = [&](int tick) {
    std::vector<shard::EntityWrite> w;
    w.reserve(players);
    for (int p = 0; p < players; ++p) {
      w.push_back({"Pos", "p" + std::to_string(p),
                   R"({"x":)" + std::to_string(tick + p) + R"(,"y":)" +
                       std::to_string(tick * 2 + p) + "}"});
    }
    return w;
  };

  FakeClock clock(1'000'000);
  server::EntityWriterOptions options;
  options.clock = &clock;
  server::EntityWriter writer(data->get(), options);
  double write_cpu = 0, flush_cpu = 0, flush_wall = 0;
  int flushes = 0;
  for (int t = 1; t <= ticks; ++t) {
    std::vector<shard::EntityWrite> w = moves(t);
    double c = ThreadCpuUs();
    writer.Write("zone", kFlushMs, std::move(w));
    write_cpu += ThreadCpuUs() - c;
    clock.Advance(1'000'000 / kHz);
    c = ThreadCpuUs();
    const double wt = WallUs();
    const size_t flushed = writer.FlushDue();
    if (flushed > 0) {
      flush_cpu += ThreadCpuUs() - c;
      flush_wall += WallUs() - wt;
      flushes += static_cast<int>(flushed);
    }
  }
  writer.Stop();
  if (writer.counts().refused != 0 || flushes == 0) {
    return Status(StatusCode::kInternal, "entity writes were refused");
  }
  // The last tick's values are in the rows.
  {
    Result<std::unique_ptr<data::DataTxn>> txn =
        (*data)->Begin(data::TxnMode::kRead);
    if (!txn.ok()) return txn.status();
    Result<std::optional<data::Row>> row = (*txn)->Get("Pos", "p0");
    if (!row.ok() || !row->has_value() ||
        json::parse((*row)->fields_json).value("x", -1.0) != ticks) {
      return Status(StatusCode::kInternal, "the last moves were not written");
    }
  }

  // Baseline: every tick's moves written as they come.
  double base_cpu = 0;
  const int base_ticks = std::min(ticks, kHz * 2);  // 2 s of play suffice
  for (int t = 1; t <= base_ticks; ++t) {
    std::vector<shard::EntityWrite> w = moves(t);
    const double c = ThreadCpuUs();
    Result<std::unique_ptr<data::DataTxn>> txn =
        (*data)->Begin(data::TxnMode::kWrite);
    if (!txn.ok()) return txn.status();
    for (const shard::EntityWrite& e : w) {
      Result<data::Row> r = (*txn)->Update(e.entity, e.id, e.set_json, "b");
      if (!r.ok()) return r.status();
    }
    Result<std::vector<data::ChangeEvent>> done = (*txn)->Commit();
    if (!done.ok()) return done.status();
    base_cpu += ThreadCpuUs() - c;
  }
  const double per_sec = (write_cpu + flush_cpu) / seconds;
  const double base_per_sec =
      base_cpu / (base_ticks / static_cast<double>(kHz));
  json out = {
      {"players", players},
      {"hz", kHz},
      {"seconds", seconds},
      {"flush_ms", kFlushMs},
      {"flushes", flushes},
      {"cpu_ms_per_flush", flush_cpu / flushes / 1000},
      {"wall_ms_per_flush", flush_wall / flushes / 1000},
      {"cpu_ms_per_sec_taking_writes", write_cpu / seconds / 1000},
      {"cpu_ms_per_sec", per_sec / 1000},
      {"baseline_cpu_ms_per_sec", base_per_sec / 1000},
      {"baseline_cpu_ms_per_tick", base_cpu / base_ticks / 1000},
      {"saving_vs_baseline", base_per_sec / per_sec},
  };
  std::printf(
      "writes  %d players at %d Hz, flushed every %u ms: %.2f ms CPU per "
      "flush (%.2f ms wall), %.1f ms CPU per second of play (%.1f ms of it "
      "taking the writes)\n"
      "        baseline, each tick's moves written at once: %.1f ms CPU per "
      "second (%.2f ms per tick) -> %.1fx less\n",
      players, kHz, kFlushMs, flush_cpu / flushes / 1000,
      flush_wall / flushes / 1000, per_sec / 1000, write_cpu / seconds / 1000,
      base_per_sec / 1000, base_cpu / base_ticks / 1000,
      base_per_sec / per_sec);
  return out;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) {
  using namespace tessera::bench;  // NOLINT
  bool quick = false;
  std::string json_path = "calls_bench.json";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--json PATH]\n", argv[0]);
      return 2;
    }
  }
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() /
                       ("tessera-calls-bench-" + std::to_string(getpid()) +
                        "-" + std::to_string(rd()));
  fs::create_directories(dir);
  nlohmann::json report;
  int status = 0;
  tessera::Result<nlohmann::json> calls = BenchCalls(dir, quick ? 500 : 20000);
  if (calls.ok()) {
    report["calls"] = *calls;
  } else {
    status = Fail("calls: " + calls.status().ToString());
  }
  tessera::Result<nlohmann::json> writes =
      BenchWrites(dir, 1000, quick ? 4 : 20);
  if (writes.ok()) {
    report["writes"] = *writes;
  } else {
    status = Fail("writes: " + writes.status().ToString());
  }
  std::ofstream(json_path) << report.dump(2) << "\n";
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status;
}
