// The sandbox: traps of every kind, fuel, interrupts, memory caps, traps on
// many threads at once, and the compile cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "wasm/instance.h"
#include "wasm/loader.h"
#include "wasm/rt/guard.h"
#include "wasm/testing/wat.h"

namespace tessera::wasm {
namespace {

namespace fs = std::filesystem;

const char kModule[] = R"((module
  (memory (export "memory") 1)
  (func (export "add") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1)))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "div") (param i32 i32) (result i32)
    (i32.div_s (local.get 0) (local.get 1)))
  (func (export "boom") unreachable)
  (func $rec (export "recurse") (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.const 0))
      (else (i32.add (i32.const 1) (call $rec (i32.sub (local.get 0) (i32.const 1)))))))
  (func (export "spin") (loop $l (br $l)))
  (func (export "count") (param i32) (result i32) (local i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get 1) (local.get 0)))
      (local.set 1 (i32.add (local.get 1) (i32.const 1)))
      (br $l)))
    (local.get 1))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  (func (export "f64mul") (param f64 f64) (result f64) (f64.mul (local.get 0) (local.get 1)))
  (func (export "pair") (result i32 i64) (i32.const 7) (i64.const -2))
))";

class RuntimeTest : public ::testing::Test {
 protected:
  static std::string CacheDir() {
    static std::string dir = [] {
      auto d = fs::temp_directory_path() /
               ("tessera-rt-test-" + std::to_string(getpid()));
      fs::create_directories(d);
      return d.string();
    }();
    return dir;
  }
  static std::shared_ptr<const CompiledModule> Load(
      const std::vector<uint8_t>& wasm, uint32_t cap_pages = 16,
      LoadStats* stats = nullptr) {
    LoadOptions o;
    o.check.memory_cap_pages = cap_pages;
    o.cache_dir = CacheDir();
    auto m = LoadModule(wasm, o, stats);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : nullptr;
  }
  static std::unique_ptr<Instance> New(
      const std::shared_ptr<const CompiledModule>& m) {
    auto i = Instance::Create(m);
    EXPECT_TRUE(i.ok()) << i.status().ToString();
    return i.ok() ? std::move(*i) : nullptr;
  }
  int Fn(Instance& i, const char* name) { return i.info().FindFunc(name); }

  void SetUp() override {
    static std::shared_ptr<const CompiledModule> shared =
        Load(testing::Wat(kModule));
    module_ = shared;
    ASSERT_NE(module_, nullptr);
  }
  std::shared_ptr<const CompiledModule> module_;
};

TEST_F(RuntimeTest, CallsReturnValuesOfEveryType) {
  auto inst = New(module_);
  uint64_t args[2] = {40, 2};
  auto r = inst->CallI32(Fn(*inst, "add"), args);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42u);
  double a = 1.5, b = -4.0, out;
  uint64_t fargs[2], res[1];
  memcpy(&fargs[0], &a, 8);
  memcpy(&fargs[1], &b, 8);
  ASSERT_TRUE(inst->Call(Fn(*inst, "f64mul"), fargs, res).ok());
  memcpy(&out, &res[0], 8);
  EXPECT_EQ(out, -6.0);
  uint64_t pair[2];
  ASSERT_TRUE(inst->Call(Fn(*inst, "pair"), {}, pair).ok());
  EXPECT_EQ(pair[0], 7u);
  EXPECT_EQ(static_cast<int64_t>(pair[1]), -2);
}

TEST_F(RuntimeTest, OutOfBoundsLoadTrapsAndKillsTheInstance) {
  auto inst = New(module_);
  uint64_t in_bounds[1] = {65532};
  EXPECT_TRUE(inst->CallI32(Fn(*inst, "load"), in_bounds).ok());
  uint64_t oob[1] = {65533};
  auto r = inst->CallI32(Fn(*inst, "load"), oob);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(inst->last_trap(), TrapKind::kOutOfBounds);
  EXPECT_EQ(r.status().message(), "out of bounds memory access");
  EXPECT_TRUE(inst->dead());
  uint64_t args[2] = {1, 2};
  EXPECT_FALSE(inst->CallI32(Fn(*inst, "add"), args).ok());
  // Far out of bounds (past 4 GiB of address + offset) still traps.
  auto inst2 = New(module_);
  uint64_t far[1] = {0xfffffff0u};
  EXPECT_FALSE(inst2->CallI32(Fn(*inst2, "load"), far).ok());
  EXPECT_EQ(inst2->last_trap(), TrapKind::kOutOfBounds);
}

TEST_F(RuntimeTest, ArithmeticTraps) {
  auto inst = New(module_);
  uint64_t zero[2] = {1, 0};
  EXPECT_FALSE(inst->CallI32(Fn(*inst, "div"), zero).ok());
  EXPECT_EQ(inst->last_trap(), TrapKind::kDivByZero);
  auto inst2 = New(module_);
  uint64_t overflow[2] = {0x80000000u, 0xffffffffu};
  EXPECT_FALSE(inst2->CallI32(Fn(*inst2, "div"), overflow).ok());
  EXPECT_EQ(inst2->last_trap(), TrapKind::kIntOverflow);
  auto inst3 = New(module_);
  EXPECT_FALSE(inst3->Call(Fn(*inst3, "boom"), {}, {}).ok());
  EXPECT_EQ(inst3->last_trap(), TrapKind::kUnreachable);
}

TEST_F(RuntimeTest, DeepRecursionTrapsCleanly) {
  auto inst = New(module_);
  inst->SetFuel(int64_t{1} << 50);
  uint64_t shallow[1] = {1000};
  auto ok = inst->CallI32(Fn(*inst, "recurse"), shallow);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, 1000u);
  uint64_t deep[1] = {100000000};
  auto r = inst->CallI32(Fn(*inst, "recurse"), deep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(inst->last_trap(), TrapKind::kStackExhausted);
  // The thread is fine afterwards.
  auto inst2 = New(module_);
  inst2->SetFuel(1 << 20);
  EXPECT_TRUE(inst2->CallI32(Fn(*inst2, "recurse"), shallow).ok());
}

TEST_F(RuntimeTest, FuelStopsInfiniteLoopDeterministically) {
  int64_t used[2];
  for (int run = 0; run < 2; ++run) {
    auto inst = New(module_);
    inst->SetFuel(1000000);
    Status st = inst->Call(Fn(*inst, "spin"), {}, {});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(inst->last_trap(), TrapKind::kFuelExhausted);
    EXPECT_EQ(st.message(), "fuel exhausted");
    used[run] = 1000000 - inst->fuel();
  }
  EXPECT_EQ(used[0], used[1]);
  // A bounded loop uses fuel in proportion to its iterations, identically.
  auto a = New(module_), b = New(module_);
  a->SetFuel(1 << 30);
  b->SetFuel(1 << 30);
  uint64_t n[1] = {1000};
  ASSERT_TRUE(a->CallI32(Fn(*a, "count"), n).ok());
  ASSERT_TRUE(b->CallI32(Fn(*b, "count"), n).ok());
  EXPECT_EQ(a->fuel(), b->fuel());
  EXPECT_LT(a->fuel(), (1 << 30) - 1000);
}

// With fuel for centuries, only the interrupt can end the loop: the call
// returning at all is the check (how soon is bench/ material). The other
// thread keeps requesting until the call has returned, so no guess about
// when the loop has started is needed.
TEST_F(RuntimeTest, InterruptStopsALoopFromAnotherThread) {
  auto inst = New(module_);
  inst->SetFuel(int64_t{1} << 62);
  Instance* raw = inst.get();
  std::atomic<bool> returned{false};
  std::thread watchdog([raw, &returned] {
    while (!returned.load()) {
      raw->RequestInterrupt();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  Status st = inst->Call(Fn(*inst, "spin"), {}, {});
  returned = true;
  watchdog.join();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(inst->last_trap(), TrapKind::kInterrupted);
  EXPECT_GT(inst->fuel(), 0);  // stopped by the interrupt, not by fuel
}

TEST_F(RuntimeTest, MemoryCannotGrowPastTheCap) {
  auto inst = New(module_);  // cap 16 pages
  uint64_t grow15[1] = {15};
  auto r = inst->CallI32(Fn(*inst, "grow"), grow15);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 1u);  // old size
  uint64_t grow1[1] = {1};
  r = inst->CallI32(Fn(*inst, "grow"), grow1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 0xffffffffu);  // refused: -1
  EXPECT_EQ(inst->failed_grows(), 1u);
  EXPECT_EQ(inst->memory().size(), 16u * 65536);
  // The grown pages are usable, the page past them is not.
  uint64_t last[1] = {16 * 65536 - 4};
  EXPECT_TRUE(inst->CallI32(Fn(*inst, "load"), last).ok());
  uint64_t past[1] = {16 * 65536};
  EXPECT_FALSE(inst->CallI32(Fn(*inst, "load"), past).ok());
}

TEST_F(RuntimeTest, TrapsOnEveryThreadAtOnceDoNotCrashTheProcess) {
  const int threads = std::max(2u, std::thread::hardware_concurrency()) * 2;
  const int per_thread = 10000 / threads + 1;
  std::atomic<int> traps{0}, healthy_calls{0}, healthy_failures{0};
  std::atomic<bool> stop{false};
  // The healthy thread calls throughout: the trapping threads start after
  // its first call, and it stops only after they have all finished.
  std::thread healthy([&] {
    auto inst = New(module_);
    uint64_t args[2] = {1, 2};
    while (!stop) {
      auto r = inst->CallI32(Fn(*inst, "add"), args);
      if (r.ok() && *r == 3) {
        ++healthy_calls;
      } else {
        ++healthy_failures;
      }
    }
  });
  while (healthy_calls.load() == 0 && healthy_failures.load() == 0) {
    std::this_thread::yield();
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        auto inst = New(module_);
        uint64_t oob[1] = {1u << 20};
        uint64_t zero[2] = {1, 0};
        bool trapped = (i + t) % 2
                           ? !inst->CallI32(Fn(*inst, "load"), oob).ok()
                           : !inst->CallI32(Fn(*inst, "div"), zero).ok();
        if (trapped) ++traps;
      }
    });
  }
  for (auto& th : pool) th.join();
  stop = true;
  healthy.join();
  EXPECT_GE(traps.load(), 10000);
  EXPECT_GT(healthy_calls.load(), 0);
  EXPECT_EQ(healthy_failures.load(), 0);
  EXPECT_EQ(rt::LiveMemoryCount(), 0u);  // every reservation released
}

TEST_F(RuntimeTest, ModulesWithoutFuelRunAndIgnoreFuelCalls) {
  LoadOptions o;
  o.cache_dir = CacheDir();
  o.fuel = false;
  auto m = LoadModule(testing::Wat(kModule), o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto inst = New(*m);
  inst->SetFuel(5);
  EXPECT_EQ(inst->fuel(), 0);
  uint64_t n[1] = {100000};
  auto r = inst->CallI32(inst->info().FindFunc("count"), n);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 100000u);
}

TEST_F(RuntimeTest, SecondLoadHitsTheCompileCache) {
  auto wasm = testing::Wat(
      R"((module (func (export "seven") (result i32) (i32.const 7))))");
  LoadStats first, second;
  Load(wasm, 16, &first);
  Load(wasm, 16, &second);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.compile_ms, 0);
}

}  // namespace
}  // namespace tessera::wasm
