// Native tests of the C++ SDK's keyed call and entity write support
// (tessera/calls.h, tessera/detail/calls_export.h): the exports driven as
// the host drives them (the JSON of docs/guest-abi.md "Keyed calls and
// entity writes"), and which members TESSERA_SHARD accepts.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "guest_calls.h"
#include "tessera/shard_sdk.h"

namespace calls_test {

using sdk_test::Arg;
using sdk_test::Output;
namespace abi = tessera::abi;

struct Params {};
TESSERA_FIELDS(Params);
struct Noop {};
TESSERA_FIELDS(Noop);
using Input = std::variant<Noop>;
struct Snap {
  int n = 0;
};
TESSERA_FIELDS(Snap, n);

// Every call and write member.
class Loot {
 public:
  static tessera::Result<Loot> init(std::string_view, Params) { return Loot(); }
  tessera::Status apply_input(std::string_view, Input) { return {}; }
  void tick(double) {}
  Snap snapshot() const { return Snap{}; }

  std::vector<tessera::Call> calls() { return waiting; }
  void on_call_result(std::string_view key,
                      const tessera::CallOutcome& outcome) {
    got.push_back(
        std::string(key) + (outcome.ok ? " ok " : " error ") +
        std::string(outcome.ok ? outcome.result_json : outcome.error));
  }
  std::vector<tessera::Write> writes() { return std::exchange(pending, {}); }

  std::vector<tessera::Call> waiting;
  std::vector<tessera::Write> pending;
  std::vector<std::string> got;
};

// Writes only.
class Mover {
 public:
  static tessera::Result<Mover> init(std::string_view, Params) {
    return Mover();
  }
  tessera::Status apply_input(std::string_view, Input) { return {}; }
  void tick(double) {}
  Snap snapshot() const { return Snap{}; }
  std::vector<tessera::Write> writes() { return {}; }
};

}  // namespace calls_test

TESSERA_SHARD(calls_test::Loot);
TESSERA_SHARD(calls_test::Mover);

namespace calls_test {
namespace {

using tessera::detail::CallsExports;
using tessera::detail::Exports;
using tessera::detail::WritesExport;

// Members TESSERA_SHARD would refuse (checked without instantiating it).
struct OnlyCalls {
  std::vector<tessera::Call> calls();
};
struct OnlyResults {
  void on_call_result(std::string_view, const tessera::CallOutcome&);
};
struct BadResult {
  std::vector<tessera::Call> calls();
  void on_call_result(std::string_view, bool);
};
struct BadWrites {
  std::vector<std::string> writes();
};
struct DataMembers {
  std::vector<tessera::Call> calls;
  int writes = 0;
};
static_assert(tessera::HasCalls<Loot> && tessera::HasOnCallResult<Loot> &&
              tessera::HasWrites<Loot> && tessera::CallsComplete<Loot>);
static_assert(!tessera::HasCalls<Mover> && tessera::HasWrites<Mover> &&
              tessera::CallsComplete<Mover>);
static_assert(!tessera::CallsComplete<OnlyCalls>);
static_assert(!tessera::CallsComplete<OnlyResults>);
static_assert(tessera::DeclaresOnCallResult<BadResult> &&
              !tessera::HasOnCallResult<BadResult>);
static_assert(tessera::DeclaresWrites<BadWrites> &&
              !tessera::HasWrites<BadWrites>);
static_assert(!tessera::DeclaresCalls<DataMembers> &&
              !tessera::DeclaresWrites<DataMembers>);

Loot& TheLoot() { return *tessera::detail::shard_instance<Loot>(); }

int Deliver(std::string_view arg) {
  const Arg<Loot> a(arg);
  return CallsExports<Loot>::on_call_result(a.ptr, a.len);
}

class CallsExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Exports<Loot>::reset_for_testing();
    ASSERT_EQ(sdk_test::Init<Loot>(abi::kCodecMsgpack, "z", ""), abi::kOk);
  }
};

TEST_F(CallsExportTest, CallsAreAJsonArrayWithTheArgsAsGiven) {
  EXPECT_EQ(CallsExports<Loot>::calls(), abi::kNoState);
  TheLoot().waiting = {
      {"loot:1", "items.grant", R"({"item": "sword", "n": 1})"},
      {"k\"2", "ping"},
      {"k3", "m.e", ""},
  };
  ASSERT_EQ(CallsExports<Loot>::calls(), abi::kOk) << Output<Loot>();
  EXPECT_EQ(Output<Loot>(),
            R"([{"key":"loot:1","function":"items.grant","args":{"item": )"
            R"("sword", "n": 1}},{"key":"k\"2","function":"ping","args":null},)"
            R"({"key":"k3","function":"m.e","args":null}])");
}

TEST_F(CallsExportTest, OnCallResultGetsTheRawResultOrTheError) {
  ASSERT_EQ(Deliver(R"({"key":"loot:1","ok":true,"result": {"a": [1, 2]} })"),
            abi::kOk)
      << Output<Loot>();
  ASSERT_EQ(Deliver(R"({"ok":false,"key":"k2","error":"KEY_REUSED: no"})"),
            abi::kOk);
  ASSERT_EQ(Deliver(R"({"key":"k3","ok":true})"), abi::kOk);  // result: null
  ASSERT_EQ(Deliver(R"({"key":"k4","ok":true,"result":"x","extra":[{}]})"),
            abi::kOk);
  EXPECT_EQ(TheLoot().got,
            (std::vector<std::string>{R"(loot:1 ok {"a": [1, 2]})",
                                      "k2 error KEY_REUSED: no", "k3 ok null",
                                      R"(k4 ok "x")"}));
}

TEST_F(CallsExportTest, AMalformedArgumentIsRefusedWithoutACall) {
  for (std::string_view arg :
       {"", "[]", R"({"key":"k","ok":true)", R"({"key":"k"})", R"({"ok":true})",
        R"({"key":1,"ok":true})", R"({"key":"k","ok":"yes"})",
        R"({"key":"k","ok":true,"result":})", R"({"key":"k","ok":true} x)"}) {
    EXPECT_EQ(Deliver(arg), abi::kError) << arg;
    EXPECT_EQ(Output<Loot>().rfind("tessera_on_call_result: malformed "
                                   "argument: ",
                                   0),
              0u)
        << Output<Loot>();
  }
  EXPECT_TRUE(TheLoot().got.empty());
}

TEST_F(CallsExportTest, WritesAreAJsonArrayTakenOnce) {
  EXPECT_EQ(WritesExport<Loot>::writes(), abi::kNoState);
  TheLoot().pending = {{"Character", "c1", R"({"x": 1.5})"},
                       {"Character", "c\n2", R"({"hp":3})"}};
  ASSERT_EQ(WritesExport<Loot>::writes(), abi::kOk);
  EXPECT_EQ(Output<Loot>(),
            R"([{"entity":"Character","id":"c1","set":{"x": 1.5}},)"
            R"({"entity":"Character","id":"c\n2","set":{"hp":3}}])");
  EXPECT_EQ(WritesExport<Loot>::writes(), abi::kNoState);
}

}  // namespace
}  // namespace calls_test
