// Test-only linking (CheckOptions::link_any_imports) and the runtime fixes the
// spec conformance runner drove: trap kinds, instantiation order, 4 GiB
// memories, start functions under fuel.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "wasm/abi_spec.h"
#include "wasm/instance.h"
#include "wasm/loader.h"
#include "wasm/rt/wasm-rt.h"
#include "wasm/testing/wat.h"

namespace tessera::wasm {
namespace {

namespace fs = std::filesystem;

std::string CacheDir() {
  static std::string dir = [] {
    auto d = fs::temp_directory_path() /
             ("tessera-link-test-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d.string();
  }();
  return dir;
}

std::shared_ptr<const CompiledModule> Load(std::string_view wat) {
  LoadOptions o;
  o.check.link_any_imports = true;
  o.cache_dir = CacheDir();
  auto m = LoadModule(testing::Wat(wat), o);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : nullptr;
}

std::unique_ptr<Instance> Link(const std::shared_ptr<const CompiledModule>& m,
                               std::vector<Extern> imports = {}) {
  auto i = Instance::CreateLinked(m, std::move(imports));
  EXPECT_TRUE(i.ok()) << i.status().ToString();
  return i.ok() ? std::move(*i) : nullptr;
}

Extern Get(const Instance& i, const std::string& name) {
  auto x = i.Export(name);
  EXPECT_TRUE(x.ok()) << x.status().ToString();
  return x.ok() ? *x : Extern{};
}

uint32_t CallI32(Instance& i, const char* name,
                 std::vector<uint64_t> args = {}) {
  uint64_t r[1] = {0};
  Status st = i.Call(i.info().FindFunc(name), args, r);
  EXPECT_TRUE(st.ok()) << name << ": " << st.ToString();
  return static_cast<uint32_t>(r[0]);
}

int g_host_calls = 0;
void HostDouble(void* ctx, const uint64_t* args, uint64_t* results) {
  ++g_host_calls;
  results[0] = (args[0] * 2 + reinterpret_cast<uintptr_t>(ctx)) & 0xffffffff;
}

const char kProvider[] = R"((module
  (func (export "add") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1)))
  (global (export "g") (mut i32) (i32.const 5))
  (memory (export "mem") 1 3)
  (table (export "tab") 4 funcref)
  (func (export "call") (param i32) (result i32)
    (call_indirect (result i32) (local.get 0)))
  (func (export "peek") (param i32) (result i32) (i32.load8_u (local.get 0)))
))";

TEST(Link, ImportsFunctionsGlobalsMemoriesAndTablesOfAnotherInstance) {
  auto provider_module = Load(kProvider);
  ASSERT_NE(provider_module, nullptr);
  auto provider = Link(provider_module);
  auto consumer_module = Load(R"((module
    (import "p" "add" (func $add (param i32 i32) (result i32)))
    (import "h" "double" (func $double (param i32) (result i32)))
    (import "p" "g" (global $g (mut i32)))
    (import "p" "mem" (memory 1))
    (import "p" "tab" (table 4 funcref))
    (func $seven (result i32) (i32.const 7))
    (func $h21 (result i32) (call $double (i32.const 10)))
    (elem (i32.const 1) $seven $h21)
    (data (i32.const 100) "\2a")
    (func (export "sum") (result i32)
      (call $add (global.get $g) (call $double (i32.const 3))))
    (func (export "bump") (global.set $g (i32.add (global.get $g) (i32.const 1))))
  ))");
  ASSERT_NE(consumer_module, nullptr);
  Extern dbl;
  dbl.type.kind = ExternKind::kFunc;
  dbl.type.func = {{ValType::kI32}, {ValType::kI32}};
  dbl.fn = HostDouble;
  dbl.ctx = reinterpret_cast<void*>(uintptr_t{1});
  auto consumer =
      Link(consumer_module, {Get(*provider, "add"), dbl, Get(*provider, "g"),
                             Get(*provider, "mem"), Get(*provider, "tab")});
  ASSERT_NE(consumer, nullptr);
  EXPECT_EQ(CallI32(*consumer, "sum"), 5u + 7u);
  ASSERT_TRUE(consumer->Call(consumer->info().FindFunc("bump"), {}, {}).ok());
  EXPECT_EQ(*static_cast<uint32_t*>(Get(*provider, "g").ptr), 6u);
  // The consumer's data landed in the provider's memory, its elements in
  // the provider's table: a defined function and an import's trampoline,
  // both callable from the provider.
  EXPECT_EQ(CallI32(*provider, "peek", {100}), 42u);
  EXPECT_EQ(CallI32(*provider, "call", {1}), 7u);
  g_host_calls = 0;
  EXPECT_EQ(CallI32(*provider, "call", {2}), 21u);
  EXPECT_EQ(g_host_calls, 1);
}

TEST(Link, RefusesImportsOfTheWrongType) {
  auto provider = Link(Load(kProvider));
  auto wants_f64 = Load(R"((module (import "p" "g" (global (mut f64)))))");
  auto r = Instance::CreateLinked(wants_f64, {Get(*provider, "g")});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("incompatible import type"),
            std::string::npos);
  auto wants_big = Load(R"((module (import "p" "mem" (memory 2))))");
  EXPECT_FALSE(Instance::CreateLinked(wants_big, {Get(*provider, "mem")}).ok());
  auto wants_max = Load(R"((module (import "p" "mem" (memory 1 2))))");
  EXPECT_FALSE(Instance::CreateLinked(wants_max, {Get(*provider, "mem")}).ok());
  auto wants_func = Load(R"((module (import "p" "g" (func))))");
  EXPECT_FALSE(Instance::CreateLinked(wants_func, {Get(*provider, "g")}).ok());
}

TEST(Link, ElementsStayWhenADataSegmentTrapsInstantiation) {
  auto provider = Link(Load(kProvider));
  auto m = Load(R"((module
    (import "p" "tab" (table 4 funcref))
    (func $f (result i32) (i32.const 9))
    (elem (i32.const 3) $f)
    (memory 1)
    (data (i32.const 65535) "ab")))");
  auto inst = Instance::CreateLinked(m, {Get(*provider, "tab")});
  ASSERT_TRUE(inst.ok()) << inst.status().ToString();
  EXPECT_TRUE((*inst)->dead());
  EXPECT_EQ((*inst)->last_trap(), TrapKind::kOutOfBounds);
  EXPECT_EQ(CallI32(*provider, "call", {3}), 9u);  // $f, in the dead instance
}

TEST(Link, CallIndirectTrapsSayWhichCheckFailed) {
  auto m = Load(R"((module
    (table 2 funcref)
    (func $v)
    (elem (i32.const 0) $v)
    (func (export "ci") (param i32) (result i32)
      (call_indirect (result i32) (local.get 0)))))");
  auto inst = Link(m);
  int ci = inst->info().FindFunc("ci");
  uint64_t r[1];
  const std::pair<uint64_t, const char*> cases[] = {
      {5, "undefined element"},
      {1, "uninitialized element"},
      {0, "indirect call type mismatch"}};
  for (const auto& [index, message] : cases) {
    uint64_t args[1] = {index};
    Status st = inst->Call(ci, args, r);
    EXPECT_EQ(st.message(), message);
    EXPECT_EQ(inst->last_trap(), TrapKind::kIndirectCall);
    inst->ClearTrap();
  }
}

TEST(Link, FourGiBMemoryHasItsFullSize) {
  auto m = Load(R"((module
    (memory (export "m") 65536)
    (func (export "fill") (param i32)
      (memory.fill (i32.const 0xfffffff0) (i32.const 1) (local.get 0)))
    (func (export "last") (result i32) (i32.load8_u (i32.const 0xffffffff)))))");
  auto inst = Link(m);
  EXPECT_EQ(inst->memory().size(), uint64_t{1} << 32);
  ASSERT_TRUE(inst->Call(inst->info().FindFunc("fill"), {{16}}, {}).ok());
  EXPECT_EQ(CallI32(*inst, "last"), 1u);
  Status st = inst->Call(inst->info().FindFunc("fill"), {{17}}, {});
  EXPECT_EQ(inst->last_trap(), TrapKind::kOutOfBounds) << st.ToString();
}

TEST(Link, StartFunctionRunsWithFuelInstrumentation) {
  auto m = Load(R"((module
    (global $n (export "n") (mut i32) (i32.const 0))
    (func $start (loop $l
      (global.set $n (i32.add (global.get $n) (i32.const 1)))
      (br_if $l (i32.lt_u (global.get $n) (i32.const 1000)))))
    (start $start)))");
  auto inst = Link(m);
  ASSERT_FALSE(inst->dead()) << inst->last_trap_message();
  EXPECT_EQ(*static_cast<uint32_t*>(Get(*inst, "n").ptr), 1000u);
}

TEST(Link, AModuleMayExportItsOwnGlobalNamedFuel) {
  auto m = Load(R"((module (global (export "fuel") i32 (i32.const 3))
                           (func (export "intr") (result i32) (i32.const 4))))");
  auto inst = Link(m);
  EXPECT_EQ(*static_cast<uint32_t*>(Get(*inst, "fuel").ptr), 3u);
  EXPECT_EQ(CallI32(*inst, "intr"), 4u);
}

TEST(Link, OnlyTheSpecTestModeAcceptsSuchImports) {
  auto wasm = testing::Wat(
      R"((module (import "spectest" "print_i32" (func (param i32)))))");
  AbiSpec abi;
  abi.import_prefix = "tessera_v";
  abi.host_functions = {{"log", {{ValType::kI32}, {}}}};
  const AbiSpec* const specs[] = {&abi, nullptr};
  for (const AbiSpec* spec : specs) {
    CheckOptions o;
    o.abi = spec;
    auto r = CheckModule(wasm, o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kRefused);
  }
  CheckOptions o;
  o.link_any_imports = true;
  EXPECT_TRUE(CheckModule(wasm, o).ok());
}

}  // namespace
}  // namespace tessera::wasm
