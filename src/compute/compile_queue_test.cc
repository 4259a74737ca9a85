// The compile queue over MemoryComputeStore: pending -> compiling ->
// succeeded | failed, oldest first, the artifact cache, resume after a
// restart, shutdown. Fake compilers stand in for the toolchain except where
// a real compile is the point (the cache's "no second compile").
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "app/build_test_support.h"
#include "compute/memory_compute_store.h"
#include "compute/source_compiler.h"
#include "compute/test_modules.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kNowUs = 1'700'000'000'000'000;

// Counts Done callbacks and waits for a number of them.
class DoneWaiter {
 public:
  CompileQueue::Done Callback() {
    return [this](const VersionRecord& v) {
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back(v);
      cv_.notify_all();
    };
  }
  // The finished versions once `n` have finished (fails the test after a
  // generous bound instead of hanging).
  std::vector<VersionRecord> WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::minutes(5),
                             [&] { return done_.size() >= n; }))
        << "only " << done_.size() << " of " << n << " versions finished";
    return done_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<VersionRecord> done_;
};

// Succeeds for sources whose file "ok" says "ok" (writing a fake module
// under `dir`), fails otherwise; records what it saw.
class ScriptedCompiler : public SourceCompiler {
 public:
  ScriptedCompiler(ComputeStore* store, fs::path dir)
      : store_(store), dir_(std::move(dir)) {}
  CompileResult Compile(const VersionRecord& v) override {
    Result<VersionRecord> stored =
        store_->GetVersion(v.module_id, v.version_no);
    {
      std::lock_guard<std::mutex> lock(mu_);
      order.push_back(v.version_no);
      status_during.push_back(stored.ok() ? stored->status
                                          : CompileStatus::kPending);
    }
    CompileResult r;
    if (v.files.count("ok.h") == 0 || v.files.at("ok.h") != "ok") {
      r.log = "ok.h:1:1: error: not ok\n";
      return r;
    }
    fs::create_directories(dir_);
    r.wasm = dir_ / (v.source_hash + ".wasm");
    std::ofstream(r.wasm, std::ios::binary) << "\0asm module";
    r.ok = true;
    r.size_bytes = 11;
    r.log = "built " + std::to_string(v.version_no) + "\n";
    return r;
  }
  std::vector<int64_t> Order() {
    std::lock_guard<std::mutex> lock(mu_);
    return order;
  }

  std::mutex mu_;
  std::vector<int64_t> order;
  std::vector<CompileStatus> status_during;

 private:
  ComputeStore* store_;
  fs::path dir_;
};

// Wraps a compiler, counting the compiles.
class CountingCompiler : public SourceCompiler {
 public:
  explicit CountingCompiler(SourceCompiler* inner) : inner_(inner) {}
  CompileResult Compile(const VersionRecord& v) override {
    ++calls;
    return inner_->Compile(v);
  }
  std::atomic<int> calls{0};

 private:
  SourceCompiler* inner_;
};

// Blocks inside Compile until released (to stop the queue mid-compile).
class BlockingCompiler : public SourceCompiler {
 public:
  explicit BlockingCompiler(SourceCompiler* inner) : inner_(inner) {}
  CompileResult Compile(const VersionRecord& v) override {
    std::unique_lock<std::mutex> lock(mu_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
    lock.unlock();
    return inner_->Compile(v);
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return entered_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  SourceCompiler* inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false, released_ = false;
};

SourceFiles Files(bool ok, const std::string& salt) {
  return {{"main.cc", "int f() { return 0; } // " + salt + "\n"},
          {"ok.h", ok ? "ok" : "no"}};
}

class CompileQueueTest : public app::testing::ScratchBuildTest {
 protected:
  void SetUp() override {
    MakeRoot("tessera_compile_queue_test");
    module_a_ = store_.UpsertModule("a", "", false)->id;
    module_b_ = store_.UpsertModule("b", "", false)->id;
  }

  int64_t Deploy(int64_t module_id, const SourceFiles& files) {
    VersionRecord v;
    v.module_id = module_id;
    v.language = Language::kCpp;
    v.sdk_version = compute_abi::kSdkVersion;
    v.abi_version = compute_abi::kAbiVersion;
    v.files = files;
    v.source_hash = SourceHash(v.language, v.sdk_version, files);
    Result<int64_t> no = store_.AddVersion(v);
    EXPECT_TRUE(no.ok()) << no.status().ToString();
    return no.ok() ? *no : 0;
  }
  VersionRecord Get(int64_t module_id, int64_t version_no) {
    Result<VersionRecord> v = store_.GetVersion(module_id, version_no);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : VersionRecord{};
  }

  FakeWallClock wall_{kNowUs};
  MemoryComputeStore store_{&wall_};
  int64_t module_a_ = 0, module_b_ = 0;
  DoneWaiter waiter_;
};

TEST_F(CompileQueueTest, MovesVersionsToSucceededOrFailed) {
  ScriptedCompiler compiler(&store_, root_ / "artifacts");
  CompileQueue queue(&store_, &compiler, waiter_.Callback(), &wall_);
  ASSERT_TRUE(queue.Start().ok());
  const int64_t good = Deploy(module_a_, Files(true, "1"));
  const int64_t bad = Deploy(module_a_, Files(false, "2"));
  EXPECT_EQ(Get(module_a_, good).status, CompileStatus::kPending);
  queue.Enqueue(module_a_, good);
  queue.Enqueue(module_a_, bad);
  std::vector<VersionRecord> done = waiter_.WaitFor(2);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(queue.pending(), 0u);

  VersionRecord g = Get(module_a_, good);
  EXPECT_EQ(g.status, CompileStatus::kSucceeded);
  EXPECT_EQ(g.compile_log, "built 1\n");
  EXPECT_EQ(g.compiled_size_bytes, 11);
  EXPECT_EQ(g.artifact_path,
            (root_ / "artifacts" / (g.source_hash + ".wasm")).string());
  EXPECT_FALSE(g.cache_hit);
  EXPECT_EQ(g.compiled_ms, kNowUs / 1000);
  VersionRecord b = Get(module_a_, bad);
  EXPECT_EQ(b.status, CompileStatus::kFailed);
  EXPECT_EQ(b.compile_log, "ok.h:1:1: error: not ok\n");
  EXPECT_EQ(b.compiled_size_bytes, 0);
  EXPECT_EQ(b.artifact_path, "");
  // The store said "compiling" while each compile ran; Done saw the end.
  std::lock_guard<std::mutex> lock(compiler.mu_);
  EXPECT_EQ(compiler.status_during,
            (std::vector<CompileStatus>{CompileStatus::kCompiling,
                                        CompileStatus::kCompiling}));
  EXPECT_EQ(done[0].status, CompileStatus::kSucceeded);
  EXPECT_EQ(done[1].status, CompileStatus::kFailed);
}

TEST_F(CompileQueueTest, StartResumesUnfinishedVersionsOldestFirst) {
  const int64_t v1 = Deploy(module_b_, Files(true, "1"));
  const int64_t v2 = Deploy(module_a_, Files(true, "2"));
  const int64_t v3 = Deploy(module_b_, Files(true, "3"));
  // A crash left v2 compiling.
  VersionRecord crashed = Get(module_a_, v2);
  crashed.status = CompileStatus::kCompiling;
  ASSERT_TRUE(store_.UpdateVersionCompile(crashed).ok());

  ScriptedCompiler compiler(&store_, root_ / "artifacts");
  CompileQueue queue(&store_, &compiler, waiter_.Callback(), &wall_);
  ASSERT_TRUE(queue.Start().ok());
  queue.Enqueue(module_b_, v3);  // already resumed: compiled once
  waiter_.WaitFor(3);
  queue.Shutdown();
  EXPECT_EQ(compiler.Order(), (std::vector<int64_t>{v1, v2, v3}));
  EXPECT_EQ(Get(module_b_, v1).status, CompileStatus::kSucceeded);
  EXPECT_EQ(Get(module_a_, v2).status, CompileStatus::kSucceeded);
  EXPECT_EQ(Get(module_b_, v3).status, CompileStatus::kSucceeded);
}

TEST_F(CompileQueueTest, ShutdownFinishesTheRunningCompileAndLeavesTheRest) {
  ScriptedCompiler scripted(&store_, root_ / "artifacts");
  BlockingCompiler blocking(&scripted);
  const int64_t v1 = Deploy(module_a_, Files(true, "1"));
  const int64_t v2 = Deploy(module_a_, Files(true, "2"));
  const int64_t v3 = Deploy(module_a_, Files(true, "3"));
  {
    CompileQueue queue(&store_, &blocking, waiter_.Callback(), &wall_);
    ASSERT_TRUE(queue.Start().ok());
    blocking.WaitEntered();  // v1 compiling, v2 and v3 queued
    EXPECT_EQ(queue.pending(), 3u);
    std::thread stopper([&] { queue.Shutdown(); });
    // Shutdown drops the queued versions first, then waits for v1.
    while (queue.pending() != 1) std::this_thread::yield();
    blocking.Release();
    stopper.join();
    queue.Shutdown();              // idempotent
    queue.Enqueue(module_a_, v2);  // after shutdown: stays pending
    EXPECT_EQ(queue.pending(), 0u);
  }
  EXPECT_EQ(Get(module_a_, v1).status, CompileStatus::kSucceeded);
  EXPECT_EQ(Get(module_a_, v2).status, CompileStatus::kPending);
  EXPECT_EQ(Get(module_a_, v3).status, CompileStatus::kPending);

  // "Restart": a new queue over the same store compiles what was left.
  CompileQueue queue(&store_, &scripted, waiter_.Callback(), &wall_);
  ASSERT_TRUE(queue.Start().ok());
  waiter_.WaitFor(3);
  EXPECT_EQ(Get(module_a_, v2).status, CompileStatus::kSucceeded);
  EXPECT_EQ(Get(module_a_, v3).status, CompileStatus::kSucceeded);
  EXPECT_EQ(scripted.Order(), (std::vector<int64_t>{v1, v2, v3}));
}

TEST_F(CompileQueueTest, TheSameSourceHitsTheArtifactCache) {
  ScriptedCompiler scripted(&store_, root_ / "artifacts");
  CountingCompiler counting(&scripted);
  CompileQueue queue(&store_, &counting, waiter_.Callback(), &wall_);
  ASSERT_TRUE(queue.Start().ok());
  const int64_t first = Deploy(module_a_, Files(true, "same"));
  queue.Enqueue(module_a_, first);
  waiter_.WaitFor(1);
  // Redeployed as another module's version: no second compile.
  const int64_t again = Deploy(module_b_, Files(true, "same"));
  queue.Enqueue(module_b_, again);
  waiter_.WaitFor(2);
  EXPECT_EQ(counting.calls.load(), 1);
  VersionRecord a = Get(module_a_, first), b = Get(module_b_, again);
  EXPECT_EQ(b.status, CompileStatus::kSucceeded);
  EXPECT_TRUE(b.cache_hit);
  EXPECT_EQ(b.compile_log, a.compile_log);
  EXPECT_EQ(b.artifact_path, a.artifact_path);
  EXPECT_EQ(b.compiled_size_bytes, a.compiled_size_bytes);

  // A failed source is not cached: it compiles (and fails) every time.
  queue.Enqueue(module_a_, Deploy(module_a_, Files(false, "x")));
  queue.Enqueue(module_b_, Deploy(module_b_, Files(false, "x")));
  waiter_.WaitFor(4);
  EXPECT_EQ(counting.calls.load(), 3);

  // The artifact file gone: the same source compiles again.
  fs::remove(a.artifact_path);
  const int64_t third = Deploy(module_a_, Files(true, "same"));
  queue.Enqueue(module_a_, third);
  waiter_.WaitFor(5);
  EXPECT_EQ(counting.calls.load(), 4);
  EXPECT_FALSE(Get(module_a_, third).cache_hit);
  EXPECT_TRUE(fs::exists(a.artifact_path));
}

TEST_F(CompileQueueTest, RedeployOfARealModuleIsNotCompiledTwice) {
  ToolchainOptions options;
  options.work_dir = root_ / "work";
  std::unique_ptr<SourceCompiler> toolchain = MakeToolchainCompiler(options);
  CountingCompiler counting(toolchain.get());
  CompileQueue queue(&store_, &counting, waiter_.Callback(), &wall_);
  ASSERT_TRUE(queue.Start().ok());
  queue.Enqueue(module_a_, Deploy(module_a_, testing::CppModule()));
  queue.Enqueue(module_a_, Deploy(module_a_, testing::CppModule()));
  std::vector<VersionRecord> done = waiter_.WaitFor(2);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(counting.calls.load(), 1);
  EXPECT_EQ(done[0].status, CompileStatus::kSucceeded) << done[0].compile_log;
  EXPECT_FALSE(done[0].cache_hit);
  EXPECT_EQ(done[1].status, CompileStatus::kSucceeded);
  EXPECT_TRUE(done[1].cache_hit);
  EXPECT_GT(done[1].compiled_size_bytes, 0);
  EXPECT_EQ(done[1].artifact_path, done[0].artifact_path);
}

}  // namespace
}  // namespace tessera::compute
