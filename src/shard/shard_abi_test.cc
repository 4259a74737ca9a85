// Every refusal of the loader for shard modules (the shard ABI as data,
// ShardAbiSpec), with its message.
#include "shard/shard_abi.h"

#include <gtest/gtest.h>

#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::wasm {
namespace {

using testing::ShardWat;
using testing::Wat;

Status Check(const std::vector<uint8_t>& wasm, uint32_t cap_pages = 1024) {
  CheckOptions o = shard::ShardCheckOptions(0);
  o.memory_cap_pages = cap_pages;
  auto r = CheckModule(wasm, o);
  return r.ok() ? Status::Ok() : r.status();
}

void ExpectRefused(const std::vector<uint8_t>& wasm, const std::string& part,
                   uint32_t cap_pages = 1024) {
  Status st = Check(wasm, cap_pages);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
}

TEST(CheckModule, AcceptsMinimalShardAndDescribesIt) {
  auto wasm =
      ShardWat("", R"((import "tessera_v1" "log" (func (param i32 i32 i32))))");
  CheckOptions o = shard::ShardCheckOptions(64);
  auto info = CheckModule(wasm, o);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->imports, std::vector<std::string>{"tessera_v1.log"});
  EXPECT_GE(info->FindFunc("tessera_tick"), 0);
  EXPECT_EQ(info->initial_pages, 1u);
}

TEST(CheckModule, RefusesBytesThatAreNotWebAssembly) {
  std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r'};
  ExpectRefused(text, "not a WebAssembly module");
  ExpectRefused({}, "not a WebAssembly module");
}

TEST(CheckModule, RefusesUnknownBinaryVersion) {
  std::vector<uint8_t> v2 = {0, 'a', 's', 'm', 2, 0, 0, 0};
  ExpectRefused(v2, "binary version 2");
}

TEST(CheckModule, RefusesInvalidModules) {
  auto wasm = ShardWat();
  wasm.resize(wasm.size() - 3);  // truncated
  ExpectRefused(wasm, "invalid module");
  // Type error: i32.add of an i64.
  ExpectRefused(
      Wat(R"((module (func (result i32) (i32.add (i32.const 1) (i64.const 2)))))"),
      "invalid module");
}

TEST(CheckModule, RefusesWasi) {
  ExpectRefused(
      ShardWat(
          "",
          R"((import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))))"),
      "WASI function `wasi_snapshot_preview1.fd_write`");
}

TEST(CheckModule, RefusesOtherImports) {
  ExpectRefused(ShardWat("", R"((import "env" "now" (func (result f64))))"),
                "imports `env.now`");
  ExpectRefused(ShardWat("", R"((import "tessera_v1" "spawn" (func)))"),
                "tessera_v1 does not provide");
  ExpectRefused(
      ShardWat("", R"((import "tessera_v1" "log" (func (param i32))))"),
      "expected (i32, i32, i32) -> ()");
}

TEST(CheckModule, RefusesStartFunction) {
  ExpectRefused(ShardWat("(func $s) (start $s)"), "start function");
}

TEST(CheckModule, RefusesSimdThreadsAndTailCalls) {
  ExpectRefused(ShardWat(R"((func (result v128) (v128.const i32x4 1 2 3 4)))"),
                "SIMD");
  ExpectRefused(ShardWat("", "", "(memory 1 1 shared)"), "threads");
  ExpectRefused(ShardWat(R"((func $a (result i32) (return_call $a)))"),
                "tail calls");
}

TEST(CheckModule, RefusesInitialMemoryAboveCap) {
  ExpectRefused(ShardWat("", "", "(memory 2000)"),
                "initial memory of 2000 pages (125 MiB) is above the memory "
                "cap of 64 MiB",
                1024);
  EXPECT_TRUE(Check(ShardWat("", "", "(memory 1024)"), 1024).ok());
}

TEST(CheckModule, RefusesUnknownAbiVersion) {
  ExpectRefused(
      ShardWat("", R"((import "tessera_v2" "log" (func (param i32 i32 i32))))"),
      "unknown ABI version");
  ExpectRefused(ShardWat(R"((func (export "tessera_abi_v7")))"),
                "unknown ABI version 7");
}

TEST(CheckModule, RefusesMissingRequiredExports) {
  ExpectRefused(Wat(R"((module (memory (export "memory") 1)))"),
                "missing required export `tessera_abi_v1`");
  auto no_tick = Wat(R"((module
    (memory (export "memory") 1)
    (func (export "tessera_abi_v1"))
    (func (export "tessera_alloc") (param i32) (result i32) (i32.const 0))
    (func (export "tessera_init") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
    (func (export "tessera_apply_input") (param i32 i32 i32 i32) (result i32) (i32.const 0))
    (func (export "tessera_snapshot") (result i32) (i32.const 0))
    (func (export "tessera_output_ptr") (result i32) (i32.const 0))
    (func (export "tessera_output_len") (result i32) (i32.const 0))))");
  ExpectRefused(no_tick,
                "missing required export `tessera_tick` (i64) -> (i32)");
  ExpectRefused(
      ShardWat(
          R"((func (export "tessera_save") (param i32) (result i32) (i32.const 0)))"),
      "export `tessera_save` has signature (i32) -> (i32)");
}

}  // namespace
}  // namespace tessera::wasm
