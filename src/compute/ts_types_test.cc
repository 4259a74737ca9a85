#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compute/contract.h"

namespace tessera::compute {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Contract MustParse(const std::string& json) {
  auto r = ParseContract(json);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Contract{};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The exports of the golden file (testdata/ts_types_golden.ts), given out
// of order: the output is sorted by module, then export.
std::vector<ExportContract> GoldenExports() {
  return {
      {"world-sim", "get_forecast",
       MustParse(
           R"({"description": "The weather for a day.\nDays count from 0.",
          "params": {"day": {"type": "int", "required": true,
                             "description": "Which day"}},
          "result": {"rain": {"type": "float", "required": true},
                     "notes": {"type": "array"}}})")},
      {"shop", "buy", MustParse(R"({
          "description": "Spend gold and place the block atomically",
          "params": {"amount": {"type": "int", "required": true},
                     "targetId": {"type": "string"},
                     "options": {"type": "object"},
                     "dry-run": {"type": "bool"}},
          "result": {"placed": {"type": "bool"}}})")},
      {"shop", "list_items", MustParse("{}")},
  };
}

// TESSERA_UPDATE_GOLDEN=1 rewrites the golden file instead (then review
// the diff; ctest compute_policies_ts_compiles type-checks it).
TEST(TsTypesTest, MatchesTheGoldenFile) {
  const std::string path =
      std::string(TESSERA_COMPUTE_TESTDATA) + "/ts_types_golden.ts";
  const std::string ts = GenerateTypeScript(GoldenExports());
  if (std::getenv("TESSERA_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << ts;
  }
  const std::string golden = ReadFile(path);
  ASSERT_FALSE(golden.empty()) << path;
  EXPECT_EQ(ts, golden);
}

TEST(TsTypesTest, DeterministicWhateverTheInputOrder) {
  std::vector<ExportContract> exports = GoldenExports();
  const std::string first = GenerateTypeScript(exports);
  std::reverse(exports.begin(), exports.end());
  EXPECT_EQ(GenerateTypeScript(exports), first);
  EXPECT_EQ(GenerateTypeScript(exports), GenerateTypeScript(exports));
}

TEST(TsTypesTest, NamesArePascalCasedFromKebabAndSnake) {
  const std::string ts =
      GenerateTypeScript({{"npc-brain_v2", "on_player--near", MustParse("{}")},
                          {"a", "9lives", MustParse("{}")},
                          {"9", "x", MustParse("{}")}});
  EXPECT_THAT(ts, HasSubstr("export interface NpcBrainV2OnPlayerNearParams {"));
  EXPECT_THAT(ts, HasSubstr("export interface NpcBrainV2OnPlayerNearResult {"));
  EXPECT_THAT(ts,
              HasSubstr("export async function invokeNpcBrainV2OnPlayerNear("));
  EXPECT_THAT(ts, HasSubstr("client.invoke(\"npc-brain_v2\", "
                            "\"on_player--near\", params)"));
  EXPECT_THAT(ts, HasSubstr("export interface A9livesParams {"));
  EXPECT_THAT(ts, HasSubstr("export interface X9XParams {"));
}

TEST(TsTypesTest, OptionalFieldsAndTypes) {
  const std::string ts = GenerateTypeScript({{"m", "e", MustParse(R"({
      "params": {"i": {"type": "int", "required": true}, "f": {"type": "float"},
                 "s": {"type": "string"}, "b": {"type": "bool", "required": false},
                 "o": {"type": "object", "required": true}, "a": {"type": "array"}},
      "result": {"ok": {"type": "bool", "required": true}}})")}});
  EXPECT_THAT(ts, HasSubstr("  i: number;\n"));
  EXPECT_THAT(ts, HasSubstr("  f?: number;\n"));
  EXPECT_THAT(ts, HasSubstr("  s?: string;\n"));
  EXPECT_THAT(ts, HasSubstr("  b?: boolean;\n"));
  EXPECT_THAT(ts, HasSubstr("  o: Record<string, unknown>;\n"));
  EXPECT_THAT(ts, HasSubstr("  a?: unknown[];\n"));
  EXPECT_THAT(ts, HasSubstr("  ok: boolean;\n"));
}

TEST(TsTypesTest, CollidingNamesAreNumbered) {
  const std::string ts = GenerateTypeScript(
      {{"a-b", "c", MustParse("{}")}, {"a", "b_c", MustParse("{}")}});
  // Sorted: ("a", "b_c") first, then ("a-b", "c").
  EXPECT_THAT(ts, HasSubstr("invokeABC(\n"));
  EXPECT_THAT(ts, HasSubstr("invokeABC2(\n"));
  EXPECT_THAT(ts, HasSubstr("client.invoke(\"a-b\", \"c\", params);\n"
                            "  return response.result as ABC2Result;"));
}

TEST(TsTypesTest, DuplicateExportsAppearOnce) {
  const std::string ts = GenerateTypeScript(
      {{"m", "e", MustParse("{}")}, {"m", "e", MustParse("{}")}});
  EXPECT_EQ(ts.find("invokeME("), ts.rfind("invokeME("));
}

TEST(TsTypesTest, DescriptionsCannotCloseTheComment) {
  const std::string ts = GenerateTypeScript({{"m", "e", MustParse(R"({
      "description": "ends */ here",
      "params": {"p": {"type": "int", "description": "a */ b"}}})")}});
  EXPECT_THAT(ts, HasSubstr("ends *\\/ here"));
  EXPECT_THAT(ts, HasSubstr("  /** a *\\/ b */\n"));
  EXPECT_THAT(ts, Not(HasSubstr("ends */")));
}

TEST(TsTypesTest, NoExportsIsJustTheClientInterface) {
  const std::string ts = GenerateTypeScript({});
  EXPECT_THAT(ts, HasSubstr("export interface ComputeInvoker {"));
  EXPECT_THAT(ts, Not(HasSubstr("export async function")));
}

}  // namespace
}  // namespace tessera::compute
