#include "loadtest/input_template.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera::loadtest {
namespace {

using json = nlohmann::json;

json RenderOnce(const std::string& text, int64_t bot = 7,
                const std::string& sid = "bot-7", uint64_t seed = 1) {
  Result<InputTemplate> tpl = InputTemplate::Parse(text);
  EXPECT_TRUE(tpl.ok()) << tpl.status().ToString();
  if (!tpl.ok()) return nullptr;
  std::mt19937_64 rng(seed);
  return tpl->Render(rng, TemplateContext{bot, sid});
}

std::string ErrorOf(const std::string& text) {
  Result<InputTemplate> tpl = InputTemplate::Parse(text);
  EXPECT_FALSE(tpl.ok()) << text;
  return tpl.ok() ? "" : tpl.status().message();
}

TEST(InputTemplateTest, AimTokensBecomeTheDrawnPosition) {
  Result<InputTemplate> tpl = InputTemplate::Parse(
      R"({"shoot":{"aim":["$aim:x","$aim:y"]},"at":"z=$aim:z"})");
  ASSERT_TRUE(tpl.ok()) << tpl.status().ToString();
  EXPECT_TRUE(tpl->aims());
  std::mt19937_64 rng(1);
  TemplateContext context{3, "bot-3"};
  context.aim[0] = 412.25;
  context.aim[1] = -0.125;
  context.aim[2] = 2.5;
  const json v = tpl->Render(rng, context);
  EXPECT_EQ(v["shoot"]["aim"], json::parse("[412.25,-0.125]"));
  EXPECT_EQ(v["at"], "z=2.5");
  EXPECT_FALSE(InputTemplate::Parse(R"({"x":"$rand:0:1"})")->aims());
  EXPECT_NE(ErrorOf(R"({"x":"$aim:w"})").find("expected $aim:x"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"x":"$aim"})").find("expected $aim:x"),
            std::string::npos);
}

TEST(InputTemplateTest, WholeStringTokensBecomeNumbers) {
  const json v = RenderOnce(
      R"({"move_to":{"x":"$rand:10:700","y":"$int:3:4"},"who":"$bot",)"
      R"("sid":"$sid"})");
  ASSERT_TRUE(v.is_object());
  ASSERT_TRUE(v["move_to"]["x"].is_number_float());
  EXPECT_GE(v["move_to"]["x"].get<double>(), 10);
  EXPECT_LT(v["move_to"]["x"].get<double>(), 700);
  ASSERT_TRUE(v["move_to"]["y"].is_number_integer());
  EXPECT_TRUE(v["who"].is_number_integer());
  EXPECT_EQ(v["who"], 7);
  EXPECT_EQ(v["sid"], "bot-7");
}

TEST(InputTemplateTest, TokensInsideTextAreSubstituted) {
  const json v = RenderOnce(
      R"(["name-$bot", "$sid/$int:5:5", "cost $5", "$$bot", "x=$rand:1:1"])");
  ASSERT_TRUE(v.is_array());
  EXPECT_EQ(v[0], "name-7");
  EXPECT_EQ(v[1], "bot-7/5");
  EXPECT_EQ(v[2], "cost $5");
  EXPECT_EQ(v[3], "$bot");
  EXPECT_EQ(v[4], "x=1");
}

TEST(InputTemplateTest, OtherValuesAndKeysAreKept) {
  const json v = RenderOnce(R"({"$bot": [1, 2.5, true, null, "plain"]})");
  EXPECT_EQ(v, json::parse(R"({"$bot": [1, 2.5, true, null, "plain"]})"));
  EXPECT_EQ(RenderOnce(R"("join")"), "join");
}

TEST(InputTemplateTest, IntRangeIsInclusiveAndCovered) {
  Result<InputTemplate> tpl = InputTemplate::Parse(R"("$int:-2:3")");
  ASSERT_TRUE(tpl.ok());
  std::mt19937_64 rng(42);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const json v = tpl->Render(rng, {});
    ASSERT_TRUE(v.is_number_integer());
    seen.insert(v.get<int64_t>());
  }
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1, 0, 1, 2, 3}));
}

TEST(InputTemplateTest, RandStaysInRange) {
  Result<InputTemplate> tpl = InputTemplate::Parse(R"("$rand:-1.5:2.25")");
  ASSERT_TRUE(tpl.ok());
  std::mt19937_64 rng(3);
  double low = 1e9, high = -1e9;
  for (int i = 0; i < 5000; ++i) {
    const double v = tpl->Render(rng, {}).get<double>();
    low = std::min(low, v);
    high = std::max(high, v);
  }
  EXPECT_GE(low, -1.5);
  EXPECT_LT(high, 2.25);
  EXPECT_LT(low, -1.4);  // spread over the range
  EXPECT_GT(high, 2.1);
}

TEST(InputTemplateTest, BadTemplatesAreRefusedWithTheReason) {
  EXPECT_NE(ErrorOf(R"("$int:5:1")")
                .find("lower bound 5 is above the upper "
                      "bound 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"("$rand:9:2")").find("above"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("$int:1.5:3")").find("integers"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("$int:1:2.5")").find("integers"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("$rand:a:b")").find("$rand:A:B"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("$int:5")").find("$int:A:B"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("$int")").find("$int:A:B"), std::string::npos);
  EXPECT_NE(ErrorOf(R"("$bots")").find("unknown token $bots"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"a": ["$foo"]})").find("known tokens"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"move_to": )").find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"("$int:1:99999999999999999999")").find("out of range"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::loadtest
