// Every refusal of the loader, with its message.
#include <gtest/gtest.h>

#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::wasm {
namespace {

using testing::ShardWat;
using testing::Wat;

Status Check(const std::vector<uint8_t>& wasm, uint32_t cap_pages = 1024) {
  CheckOptions o;
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
  auto wasm = ShardWat("", R"((import "tessera_v1" "log" (func (param i32 i32 i32))))");
  CheckOptions o;
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
  ExpectRefused(Wat(R"((module (func (result i32) (i32.add (i32.const 1) (i64.const 2)))))"),
                "invalid module");
}

TEST(CheckModule, RefusesWasi) {
  ExpectRefused(ShardWat("", R"((import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32))))"),
                "WASI function `wasi_snapshot_preview1.fd_write`");
}

TEST(CheckModule, RefusesOtherImports) {
  ExpectRefused(ShardWat("", R"((import "env" "now" (func (result f64))))"),
                "imports `env.now`");
  ExpectRefused(ShardWat("", R"((import "tessera_v1" "spawn" (func)))"),
                "tessera_v1 does not provide");
  ExpectRefused(ShardWat("", R"((import "tessera_v1" "log" (func (param i32))))"),
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
  ExpectRefused(ShardWat("", R"((import "tessera_v2" "log" (func (param i32 i32 i32))))"),
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
  ExpectRefused(no_tick, "missing required export `tessera_tick` (i64) -> (i32)");
  ExpectRefused(ShardWat(R"((func (export "tessera_save") (param i32) (result i32) (i32.const 0)))"),
                "export `tessera_save` has signature (i32) -> (i32)");
}

std::vector<uint8_t> Binary(std::initializer_list<uint8_t> sections) {
  std::vector<uint8_t> b = {0, 'a', 's', 'm', 1, 0, 0, 0};
  for (uint8_t byte : sections) b.push_back(byte);
  return b;
}

// Modules wabt 1.0.32 reads although the spec calls them malformed or
// invalid (from the spec tests binary.wast, binary-leb128.wast, custom.wast,
// call_indirect.wast).
TEST(CheckModule, RefusesWhatWabtIsLenientAbout) {
  // Custom section whose name length is a 6-byte LEB128.
  ExpectRefused(
      Binary({0, 10, 0x83, 0x80, 0x80, 0x80, 0x80, 0, '1', '2', '3', '4'}),
      "integer representation too long");
  // ... whose name length has bits past 32.
  ExpectRefused(
      Binary({0, 9, 0x83, 0x80, 0x80, 0x80, 0x40, '1', '2', '3', '4'}),
      "integer too large");
  ExpectRefused(Binary({0, 0}), "unexpected end");
  ExpectRefused(Binary({0, 3, 2, 0xc0, 0x80}), "malformed UTF-8");
  // A global initializer without its end.
  ExpectRefused(Binary({1, 4,    1, 0x60, 0, 0,  3, 2, 1, 0, 6,   5,
                        1, 0x7f, 0, 0x41, 0, 10, 4, 1, 2, 0, 0x0b}),
                "unexpected end of section or function");
  // A data count of 1 and no data section.
  ExpectRefused(Binary({5, 3, 1, 0, 1, 12, 1, 1}),
                "data count and data section have inconsistent lengths");
  EXPECT_TRUE(CheckModule(Binary({12, 1, 0}), {ImportPolicy::kBare}).ok());
  ExpectRefused(Wat(R"((module (type (func)) (table 1 externref)
                         (func (call_indirect (type 0) (i32.const 0)))))"),
                "type mismatch");
}

}  // namespace
}  // namespace tessera::wasm
