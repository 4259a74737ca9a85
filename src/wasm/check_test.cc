// The loader's checks that do not depend on an ABI, and an ABI described
// as data (AbiSpec): its host functions, versions, marker and exports.
#include <gtest/gtest.h>

#include "wasm/abi_spec.h"
#include "wasm/loader.h"
#include "wasm/testing/wat.h"

namespace tessera::wasm {
namespace {

using testing::Wat;

void ExpectRefused(const std::vector<uint8_t>& wasm, const std::string& part,
                   const CheckOptions& o = {}) {
  auto r = CheckModule(wasm, o);
  ASSERT_FALSE(r.ok()) << "accepted";
  EXPECT_NE(r.status().message().find(part), std::string::npos)
      << r.status().message();
}

// A made-up ABI with two host functions and one required export, to show
// the loader follows the data and nothing shard-specific.
AbiSpec DemoAbi() {
  AbiSpec abi;
  abi.import_prefix = "demo_v";
  abi.version = 2;
  abi.host_functions = {
      {"now", {{}, {ValType::kI64}}},
      {"emit", {{ValType::kI32, ValType::kI32}, {}}},
  };
  abi.marker_prefix = "demo_abi_v";
  abi.exports = {{"run", {{ValType::kI32}, {ValType::kI32}}, true},
                 {"stop", {{}, {}}, false}};
  abi.memory_export = false;
  abi.module_noun = "demo module";
  abi.build_hint = "build it with the demo recipe";
  return abi;
}

std::vector<uint8_t> DemoWat(std::string_view imports,
                             std::string_view exports) {
  std::string text = "(module " + std::string(imports) +
                     R"( (func (export "demo_abi_v2")) )" +
                     std::string(exports) + ")";
  return Wat(text);
}

constexpr char kRun[] =
    R"((func (export "run") (param i32) (result i32) (local.get 0)))";

TEST(AbiSpec, AcceptsWhatTheSpecAllows) {
  const AbiSpec abi = DemoAbi();
  CheckOptions o;
  o.abi = &abi;
  auto info =
      CheckModule(DemoWat(R"((import "demo_v2" "now" (func (result i64)))
                 (import "demo_v2" "emit" (func (param i32 i32))))",
                          kRun),
                  o);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->imports,
            (std::vector<std::string>{"demo_v2.now", "demo_v2.emit"}));
}

TEST(AbiSpec, RefusesWhatTheSpecDoesNotList) {
  const AbiSpec abi = DemoAbi();
  CheckOptions o;
  o.abi = &abi;
  ExpectRefused(DemoWat(R"((import "demo_v2" "spawn" (func)))", kRun),
                "`demo_v2.spawn`, which demo_v2 does not provide (it "
                "provides only the functions demo_v2.now and demo_v2.emit)",
                o);
  ExpectRefused(
      DemoWat(R"((import "demo_v2" "now" (func (result i32))))", kRun),
      "imports demo_v2.now with signature () -> (i32), expected () "
      "-> (i64)",
      o);
  ExpectRefused(
      DemoWat(R"((import "demo_v3" "now" (func (result i64))))", kRun),
      "unknown ABI version: imports `demo_v3.now` from demo_v3, but "
      "this host speaks demo_v2",
      o);
  ExpectRefused(DemoWat(R"((import "env" "f" (func)))", kRun),
                "imports `env.f`: tessera modules may import only "
                "demo_v2.now and demo_v2.emit",
                o);
  ExpectRefused(DemoWat(R"((import "wasi_unstable" "f" (func)))", kRun),
                "(build it with the demo recipe)", o);
}

TEST(AbiSpec, ChecksTheMarkerAndTheExports) {
  const AbiSpec abi = DemoAbi();
  CheckOptions o;
  o.abi = &abi;
  ExpectRefused(Wat(std::string("(module ") + kRun + ")"),
                "missing required export `demo_abi_v2`: this is not a demo "
                "module (build it with the demo recipe)",
                o);
  ExpectRefused(Wat(R"((module (func (export "demo_abi_v9"))))"),
                "unknown ABI version 9 (export `demo_abi_v9`); this host "
                "speaks version 2",
                o);
  ExpectRefused(DemoWat("", ""), "missing required export `run` (i32) -> (i32)",
                o);
  ExpectRefused(
      DemoWat("", std::string(kRun) + R"((func (export "stop") (param i32)))"),
      "export `stop` has signature (i32) -> (), expected () -> ()", o);
  EXPECT_TRUE(CheckModule(DemoWat("", kRun), o).ok());
}

TEST(AbiSpec, BareModulesImportNothing) {
  ExpectRefused(
      DemoWat(R"((import "demo_v2" "now" (func (result i64))))", kRun),
      "imports `demo_v2.now`; this loader mode allows none");
  EXPECT_TRUE(CheckModule(DemoWat("", kRun), CheckOptions{}).ok());
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
  EXPECT_TRUE(CheckModule(Binary({12, 1, 0}), CheckOptions{}).ok());
  ExpectRefused(Wat(R"((module (type (func)) (table 1 externref)
                         (func (call_indirect (type 0) (i32.const 0)))))"),
                "type mismatch");
}

}  // namespace
}  // namespace tessera::wasm
