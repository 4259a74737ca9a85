// The JSON of keyed calls and entity writes (calls_json.h): what a guest's
// tessera_calls / tessera_writes may return, and the argument of
// tessera_on_call_result.
#include "shard/calls_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tessera/abi.h"

namespace tessera::shard {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ParseCalls, TakesEveryWellFormedCallInOrder) {
  ParsedCalls parsed = ParseCalls(
      R"([{"key":"loot:1","function":"items.grant","args":{"item":"sword",
           "n":1}},
          {"key":"k2","function":"ping"},
          {"key":"k3","function":"m.e","args":[1, 2.5, "x", null]}])");
  EXPECT_THAT(parsed.refusals, IsEmpty());
  ASSERT_EQ(parsed.calls.size(), 3u);
  EXPECT_EQ(parsed.calls[0].key, "loot:1");
  EXPECT_EQ(parsed.calls[0].function, "items.grant");
  EXPECT_EQ(json::parse(parsed.calls[0].args_json),
            json({{"item", "sword"}, {"n", 1}}));
  EXPECT_EQ(parsed.calls[1].args_json, "null");  // absent
  EXPECT_EQ(parsed.calls[2].args_json, R"([1,2.5,"x",null])");
}

TEST(ParseCalls, AnEmptyListIsNoCalls) {
  ParsedCalls parsed = ParseCalls(" [ ] ");
  EXPECT_THAT(parsed.calls, IsEmpty());
  EXPECT_THAT(parsed.refusals, IsEmpty());
  EXPECT_EQ(parsed.refused, 0u);
}

TEST(ParseCalls, AKeyListedTwiceIsOneCall) {
  ParsedCalls parsed = ParseCalls(
      R"([{"key":"a","function":"f","args":1},
          {"key":"a","function":"f","args":2}])");
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.calls[0].args_json, "1");
  EXPECT_THAT(parsed.refusals, IsEmpty());
}

TEST(ParseCalls, AnOutputThatIsNotAJsonArrayIsRefusedWhole) {
  for (const char* text :
       {"", "nope!", "{\"key\":\"a\",\"function\":\"f\"}", "[1,", "[] []",
        "\"calls\"", "[{\"key\":\"a\",\"function\":\"f\"},]", "[\"\xff\"]"}) {
    ParsedCalls parsed = ParseCalls(text);
    EXPECT_THAT(parsed.calls, IsEmpty()) << text;
    ASSERT_EQ(parsed.refusals.size(), 1u) << text;
    EXPECT_THAT(parsed.refusals[0], HasSubstr("tessera_calls output refused"))
        << text;
    EXPECT_EQ(parsed.refused, 1u);
  }
}

TEST(ParseCalls, DeepNestingIsRefusedWhole) {
  std::string deep = R"([{"key":"a","function":"f","args":)";
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  deep += "}]";
  ParsedCalls parsed = ParseCalls(deep);
  EXPECT_THAT(parsed.calls, IsEmpty());
  ASSERT_EQ(parsed.refusals.size(), 1u);
  EXPECT_THAT(parsed.refusals[0], HasSubstr("nested deeper than 64"));
}

TEST(ParseCalls, EachBadCallIsRefusedWithItsReasonAndTheOthersTaken) {
  const std::string long_key(abi::kMaxCallKeyBytes + 1, 'k');
  const std::string long_function(abi::kMaxCallFunctionBytes + 1, 'f');
  const std::string big_args =
      "\"" + std::string(abi::kMaxCallArgsBytes, 'x') + "\"";
  const std::string text =
      R"([{"key":"ok1","function":"f"},
          5,
          {"function":"f"},
          {"key":"","function":"f"},
          {"key":7,"function":"f"},
          {"key":")" +
      long_key + R"(","function":"f"},
          {"key":"a","function":""},
          {"key":"b","function":")" +
      long_function + R"("},
          {"key":"c","function":"f","args":)" +
      big_args + R"(},
          {"key":"d","function":"f","argz":1},
          {"key":"e","function":"f","key":"e2"},
          {"key":"ok2","function":"g"}])";
  ParsedCalls parsed = ParseCalls(text);
  ASSERT_EQ(parsed.calls.size(), 2u);
  EXPECT_EQ(parsed.calls[0].key, "ok1");
  EXPECT_EQ(parsed.calls[1].key, "ok2");
  EXPECT_EQ(parsed.refused, 10u);
  EXPECT_THAT(
      parsed.refusals,
      ElementsAre(
          "call 1 refused: is number, not an object",
          "call 2 refused: key missing", "call 3 refused: key is empty",
          "call 4 refused: key is number, not a string",
          "call 5 refused: key is 129 bytes, over 128",
          "call 6 (key \"a\") refused: function is empty",
          "call 7 (key \"b\") refused: function is 257 bytes, over 256",
          "call 8 (key \"c\") refused: args are 65538 bytes of JSON, over "
          "65536",
          "call 9 refused: has an unknown member \"argz\"",
          "call 10 refused: has a member given twice"));
}

TEST(ParseCalls, ArgsAtTheLimitAreTaken) {
  const std::string args =
      "\"" + std::string(abi::kMaxCallArgsBytes - 2, 'x') + "\"";
  ParsedCalls parsed =
      ParseCalls(R"([{"key":"a","function":"f","args":)" + args + "}]");
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.calls[0].args_json.size(), abi::kMaxCallArgsBytes);
}

TEST(ParseCalls, KeysInRefusalLinesAreEscaped) {
  ParsedCalls parsed = ParseCalls(R"([{"key":"line\nbreak","function":""}])");
  ASSERT_EQ(parsed.refusals.size(), 1u);
  EXPECT_EQ(parsed.refusals[0],
            "call 0 (key \"line\\nbreak\") refused: function is empty");
}

TEST(ParseWrites, TakesEveryWellFormedWrite) {
  ParsedWrites parsed = ParseWrites(
      R"([{"entity":"Character","id":"c1","set":{"x":1.5,"y":-2}},
          {"entity":"Character","id":"c2","set":{"name":"Ann","bag":[1,2]}}])");
  EXPECT_THAT(parsed.refusals, IsEmpty());
  ASSERT_EQ(parsed.writes.size(), 2u);
  EXPECT_EQ(parsed.writes[0].entity, "Character");
  EXPECT_EQ(parsed.writes[0].id, "c1");
  EXPECT_EQ(parsed.writes[0].set_json, R"({"x":1.5,"y":-2})");
  EXPECT_EQ(parsed.writes[1].set_json, R"({"bag":[1,2],"name":"Ann"})");
}

TEST(ParseWrites, EachBadWriteIsRefusedWithItsReason) {
  ParsedWrites parsed = ParseWrites(
      R"([{"entity":"","id":"a","set":{"x":1}},
          {"entity":"T","id":"","set":{"x":1}},
          {"entity":"T","id":"a"},
          {"entity":"T","id":"a","set":[1]},
          {"entity":"T","id":"a","set":{}},
          {"entity":"T","id":"a","set":{"x":1},"more":1},
          "write",
          {"entity":"T","id":"ok","set":{"x":1}}])");
  ASSERT_EQ(parsed.writes.size(), 1u);
  EXPECT_EQ(parsed.writes[0].id, "ok");
  EXPECT_EQ(parsed.refused, 7u);
  EXPECT_THAT(parsed.refusals,
              ElementsAre("write 0 refused: entity is empty",
                          "write 1 refused: id is empty",
                          "write 2 (\"T\" \"a\") refused: set missing",
                          "write 3 (\"T\" \"a\") refused: set is array, not "
                          "an object",
                          "write 4 (\"T\" \"a\") refused: set is an empty "
                          "object",
                          "write 5 refused: has an unknown member \"more\"",
                          "write 6 refused: is string, not an object"));
}

TEST(ParseWrites, AtMostTheTickLimitIsTakenAndTheRestRefusedAndCounted) {
  std::string text = "[";
  const size_t n = abi::kMaxWritesPerTick + 3;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) text += ",";
    text +=
        R"({"entity":"T","id":"r)" + std::to_string(i) + R"(","set":{"x":1}})";
  }
  text += "]";
  ParsedWrites parsed = ParseWrites(text);
  EXPECT_EQ(parsed.writes.size(), abi::kMaxWritesPerTick);
  EXPECT_EQ(parsed.refused, 3u);
  EXPECT_THAT(parsed.refusals,
              ElementsAre("3 writes refused: one tick gives at most 4096"));
}

TEST(ParseWrites, NotAnArrayIsRefusedWhole) {
  ParsedWrites parsed = ParseWrites(R"({"entity":"T"})");
  EXPECT_THAT(parsed.writes, IsEmpty());
  ASSERT_EQ(parsed.refusals.size(), 1u);
  EXPECT_EQ(parsed.refusals[0],
            "tessera_writes output refused: not a JSON array (object)");
}

TEST(CallResultArgument, OkCarriesTheResultAsJson) {
  CallResult r;
  r.key = "loot:1";
  r.result_json = R"({"granted": ["sword"]})";
  EXPECT_EQ(json::parse(CallResultArgument(r)),
            json({{"key", "loot:1"},
                  {"ok", true},
                  {"result", {{"granted", {"sword"}}}}}));
}

TEST(CallResultArgument, AnErrorCarriesItsText) {
  CallResult r;
  r.key = "k";
  r.ok = false;
  r.error = "KEY_REUSED: key \"k\" was used with other args";
  EXPECT_EQ(json::parse(CallResultArgument(r)),
            json({{"key", "k"}, {"ok", false}, {"error", r.error}}));
}

TEST(CallResultArgument, AResultTheGuestCouldNotReadBecomesAnError) {
  CallResult bad;
  bad.key = "k";
  bad.result_json = "{not json";
  json arg = json::parse(CallResultArgument(bad));
  EXPECT_EQ(arg["ok"], false);
  EXPECT_EQ(arg["error"], "BAD_RESULT: the result is not JSON");

  CallResult big;
  big.key = "k";
  big.result_json = "\"" + std::string(abi::kMaxCallResultBytes, 'x') + "\"";
  arg = json::parse(CallResultArgument(big));
  EXPECT_EQ(arg["ok"], false);
  EXPECT_THAT(arg["error"].get<std::string>(),
              HasSubstr("RESULT_TOO_LARGE: the result is 1048578 bytes"));
}

}  // namespace
}  // namespace tessera::shard
