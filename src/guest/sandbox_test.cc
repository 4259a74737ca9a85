// Sandbox over small modules of a made-up ABI: host functions bound by
// name, logs, buffers, size caps, shared fuel budgets and failures.
#include "guest/sandbox.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "guest/watchdog.h"
#include "wasm/abi_spec.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::guest {
namespace {

using ::testing::HasSubstr;
using V = wasm::ValType;

int g_add_calls = 0;

// demo_v1.add(a, b) -> a + b: a host function of this test's ABI.
void Add(wasm::Instance&, void*, const uint64_t* args, uint64_t* results) {
  ++g_add_calls;
  results[0] = static_cast<uint32_t>(args[0] + args[1]);
}

const HostFunctionTable& DemoFunctions() {
  static const auto* table = new HostFunctionTable(
      {Sandbox::LogFunction("log"),
       HostFunction{"add", {{V::kI32, V::kI32}, {V::kI32}}, &Add}});
  return *table;
}

const wasm::AbiSpec& DemoAbi() {
  static const auto* abi = [] {
    auto* a = new wasm::AbiSpec;
    a->import_prefix = "demo_v";
    a->version = 1;
    a->host_functions = DemoFunctions().Specs();
    a->marker_prefix = "demo_abi_v";
    a->memory_export = true;
    a->module_noun = "demo module";
    a->build_hint = "a test module";
    return a;
  }();
  return *abi;
}

// A module of the demo ABI: `body` is spliced in after the buffer exports.
// Memory: the output buffer is (out_ptr, out_len) globals.
std::string DemoModule(std::string_view body) {
  return std::string(R"((module
    (import "demo_v1" "log" (func $log (param i32 i32 i32)))
    (import "demo_v1" "add" (func $add (param i32 i32) (result i32)))
    (memory (export "memory") 1)
    (global $out_ptr (mut i32) (i32.const 0))
    (global $out_len (mut i32) (i32.const 0))
    (func (export "demo_abi_v1"))
    (func (export "alloc") (param i32) (result i32) (i32.const 1024))
    (func (export "out_ptr") (result i32) (global.get $out_ptr))
    (func (export "out_len") (result i32) (global.get $out_len))
    (data (i32.const 16) "hello\ff\0a")
  )") + std::string(body) +
         ")";
}

std::shared_ptr<const wasm::CompiledModule> Load(std::string_view wat) {
  static const std::string cache = [] {
    auto dir = std::filesystem::temp_directory_path() / "tessera_sandbox_test";
    std::filesystem::create_directories(dir);
    return dir.string();
  }();
  wasm::LoadOptions o;
  o.check.abi = &DemoAbi();
  o.cache_dir = cache;
  auto m = wasm::LoadModule(wasm::testing::Wat(wat), o);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : nullptr;
}

SandboxOptions DemoOptions() {
  SandboxOptions o;
  o.import_module = "demo_v1";
  o.alloc_export = "alloc";
  o.output_ptr_export = "out_ptr";
  o.output_len_export = "out_len";
  o.max_log_line_bytes = 64;
  return o;
}

std::unique_ptr<Sandbox> New(std::string_view body, SandboxEnv env = {},
                             int64_t fuel = 1'000'000) {
  auto module = Load(DemoModule(body));
  if (!module) return nullptr;
  auto sb = Sandbox::Create(module, DemoFunctions(), DemoOptions(),
                            std::move(env), fuel, "init");
  EXPECT_TRUE(sb.ok()) << sb.status().ToString();
  return sb.ok() ? std::move(*sb) : nullptr;
}

int Func(const Sandbox& sb, const char* name, int params) {
  wasm::FuncSig sig;
  sig.params.assign(static_cast<size_t>(params), V::kI32);
  sig.results = {V::kI32};
  return sb.FindFunc(name, sig);
}

TEST(SandboxTest, BindsHostFunctionsByName) {
  auto sb = New(R"((func (export "run") (param i32) (result i32)
                     (call $add (local.get 0) (i32.const 40))))");
  ASSERT_NE(sb, nullptr);
  g_add_calls = 0;
  const uint64_t args[] = {2};
  Result<uint32_t> r = sb->Call(Func(*sb, "run", 1), args, "run");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 42u);
  EXPECT_EQ(g_add_calls, 1);
}

TEST(SandboxTest, RefusesAnImportTheTableLacks) {
  auto module = Load(DemoModule(""));
  ASSERT_NE(module, nullptr);
  HostFunctionTable log_only({Sandbox::LogFunction("log")});
  auto sb = Sandbox::Create(module, log_only, DemoOptions(), {}, 1000, "init");
  ASSERT_FALSE(sb.ok());
  EXPECT_EQ(sb.status().code(), StatusCode::kRefused);
  EXPECT_THAT(sb.status().message(), HasSubstr("`demo_v1.add`"));
}

TEST(SandboxTest, RefusesAModuleWithoutTheBufferExports) {
  auto module = Load(DemoModule(""));
  ASSERT_NE(module, nullptr);
  SandboxOptions o = DemoOptions();
  o.alloc_export = "malloc";
  auto sb = Sandbox::Create(module, DemoFunctions(), o, {}, 1000, "init");
  ASSERT_FALSE(sb.ok());
  EXPECT_EQ(sb.status().code(), StatusCode::kRefused);
  EXPECT_THAT(sb.status().message(), HasSubstr("exports no malloc (i32)"));
}

TEST(SandboxTest, LogLinesAreKeptAsValidUtf8AndForwarded) {
  std::vector<std::string> forwarded;
  SandboxEnv env;
  env.log_lines = 2;
  env.forward_log = [&](int, std::string_view text) {
    forwarded.emplace_back(text);
  };
  // "hello\xff\n" at 16; level 1, then a panic (level 4).
  auto sb = New(R"((func (export "run") (param i32) (result i32)
                     (call $log (i32.const 1) (i32.const 16) (i32.const 7))
                     (call $log (i32.const 4) (i32.const 16) (i32.const 5))
                     (i32.const 0)))",
                std::move(env));
  ASSERT_NE(sb, nullptr);
  const uint64_t args[] = {0};
  ASSERT_TRUE(sb->Call(Func(*sb, "run", 1), args, "run").ok());
  ASSERT_EQ(forwarded.size(), 2u);
  EXPECT_EQ(forwarded[0], "hello\xEF\xBF\xBD\n");  // U+FFFD for the 0xff
  std::vector<LogLine> lines = sb->recent_log();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].level, 4);
  EXPECT_EQ(sb->last_panic(), "hello");
}

TEST(SandboxTest, ALogOutsideMemoryTrapsTheCall) {
  auto sb = New(R"((func (export "run") (param i32) (result i32)
                     (call $log (i32.const 1) (i32.const 65530) (i32.const 64))
                     (i32.const 0)))");
  ASSERT_NE(sb, nullptr);
  const uint64_t args[] = {0};
  Result<uint32_t> r = sb->Call(Func(*sb, "run", 1), args, "the run");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(sb->failure(), "trap: out of bounds memory access in the run");
  EXPECT_EQ(sb->memory_bytes(), 0u);  // released
  // Every later call reports the same failure without entering the guest.
  Result<uint32_t> again = sb->Call(Func(*sb, "run", 1), args, "the run");
  EXPECT_EQ(again.status().message(), sb->failure());
}

TEST(SandboxTest, OutputsArePassedAndCapped) {
  // run(len) sets the output to (1024, len): what Pass wrote there.
  auto sb = New(R"((func (export "run") (param i32) (result i32)
                     (global.set $out_ptr (i32.const 1024))
                     (global.set $out_len (local.get 0))
                     (i32.const 0)))");
  ASSERT_NE(sb, nullptr);
  Result<GuestBytes> in = sb->Pass("abcdef", "the run");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(in->ptr, 1024u);
  const uint64_t six[] = {6};
  ASSERT_TRUE(sb->Call(Func(*sb, "run", 1), six, "run").ok());
  Result<std::string> out = sb->ReadOutput("run", 6);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "abcdef");
  Result<std::string> capped = sb->ReadOutput("run", 5);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(sb->failure(),
            "limit: the output of run is 6 bytes, over the cap of 5 bytes");
}

TEST(SandboxTest, AnOutputOutsideMemoryFailsTheSandbox) {
  auto sb = New(R"((func (export "run") (param i32) (result i32)
                     (global.set $out_ptr (i32.const 65000))
                     (global.set $out_len (i32.const 1000))
                     (i32.const 0)))");
  ASSERT_NE(sb, nullptr);
  const uint64_t args[] = {0};
  ASSERT_TRUE(sb->Call(Func(*sb, "run", 1), args, "run").ok());
  EXPECT_FALSE(sb->ReadOutput("run", 1 << 20).ok());
  EXPECT_THAT(sb->failure(), HasSubstr("abi: output of run at (65000, 1000)"));
}

// spin(n) loops n times: fuel grows with n.
constexpr char kSpin[] = R"((func (export "run") (param i32) (result i32)
    (block $done (loop $again
      (br_if $done (i32.eqz (local.get 0)))
      (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
      (br $again)))
    (i32.const 0)))";

// The fuel of one call of `func` with `args`, with fuel to spare.
int64_t CallFuel(Sandbox& sb, int func, std::span<const uint64_t> args) {
  sb.StartBudget(int64_t{1} << 40, "probe");
  const int64_t before = sb.fuel_used();
  EXPECT_TRUE(sb.Call(func, args, "run").ok());
  return sb.fuel_used() - before;
}

TEST(SandboxTest, CallsShareTheBudgetTheyAreGiven) {
  auto sb = New(kSpin);
  ASSERT_NE(sb, nullptr);
  const int run = Func(*sb, "run", 1);
  const uint64_t thousand[] = {1000};
  const int64_t one = CallFuel(*sb, run, thousand);
  ASSERT_GT(one, 1000);

  // Two calls fit a budget of 2.5 calls; the third overdraws it.
  const int64_t budget = one * 5 / 2;
  sb->StartBudget(budget, "the group");
  EXPECT_TRUE(sb->Call(run, thousand, "run").ok());
  EXPECT_TRUE(sb->Call(run, thousand, "run").ok());
  EXPECT_LT(sb->fuel_left(), one);
  Result<uint32_t> third = sb->Call(run, thousand, "run");
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(sb->failure(), "fuel exhausted: the group used more than " +
                               std::to_string(budget) + " fuel");
}

TEST(SandboxTest, ANewBudgetStartsWhole) {
  auto sb = New(kSpin);
  ASSERT_NE(sb, nullptr);
  const int run = Func(*sb, "run", 1);
  const uint64_t thousand[] = {1000};
  const int64_t one = CallFuel(*sb, run, thousand);
  for (int k = 0; k < 5; ++k) {
    sb->StartBudget(one * 3 / 2, "the tick");
    ASSERT_TRUE(sb->Call(run, thousand, "run").ok()) << k;
  }
}

// The owner's hook sees each line (cut as stored), and the owner pointer
// comes back to it; no hook before set_owner.
TEST(SandboxTest, TheOwnerHookReceivesLogLines) {
  struct Seen {
    std::vector<std::string> lines;
  } seen;
  auto sb = New(R"((func (export "run") (param i32) (result i32)
                     (call $log (i32.const 2) (i32.const 16) (i32.const 5))
                     (i32.const 0)))");
  ASSERT_NE(sb, nullptr);
  const uint64_t args[] = {0};
  ASSERT_TRUE(sb->Call(Func(*sb, "run", 1), args, "run").ok());
  EXPECT_EQ(sb->owner(), nullptr);
  sb->set_owner(&seen, [](void* owner, int level, std::string_view text) {
    static_cast<Seen*>(owner)->lines.push_back(std::to_string(level) + ":" +
                                               std::string(text));
  });
  EXPECT_EQ(sb->owner(), &seen);
  ASSERT_TRUE(sb->Call(Func(*sb, "run", 1), args, "run").ok());
  EXPECT_THAT(seen.lines, ::testing::ElementsAre("2:hello"));
  sb->set_owner(nullptr);
  ASSERT_TRUE(sb->Call(Func(*sb, "run", 1), args, "run").ok());
  EXPECT_EQ(seen.lines.size(), 1u);
}

// A per-call deadline replaces the option's: a call that never ends is
// stopped by the watchdog, and the failure names the deadline in force.
TEST(SandboxTest, SetMaxRunMsArmsTheWatchdogWithIt) {
  Watchdog watchdog(RealClock::Get());
  watchdog.Start();
  SandboxEnv env;
  env.watchdog = &watchdog;
  auto sb = New(R"((func (export "run") (param i32) (result i32)
                     (loop $l (br $l)) (i32.const 0)))",
                std::move(env));
  ASSERT_NE(sb, nullptr);
  EXPECT_EQ(sb->max_run_ms(), 200u);
  sb->set_max_run_ms(3);
  sb->StartBudget(wasm::kUnlimitedFuel, "the loop");
  const uint64_t args[] = {0};
  Result<uint32_t> r = sb->Call(Func(*sb, "run", 1), args, "run");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(sb->failure(),
            "watchdog: call ran longer than maxRunMs 3 ms (run)");
}

}  // namespace
}  // namespace tessera::guest
