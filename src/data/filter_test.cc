// ParseFilter and Matches: the filters of the admin API's ?where= and of the
// host data API's list/count, with their reference semantics.
#include <gtest/gtest.h>

#include "data/schema.h"

namespace tessera::data {
namespace {

EntityType Character() {
  auto schema = ParseDataSchema(R"({"types": [{"name": "Character", "fields": [
    {"name": "name", "type": "string"},
    {"name": "hp", "type": "int"},
    {"name": "speed", "type": "float"},
    {"name": "alive", "type": "bool"},
    {"name": "bag", "type": "json"}]}]})",
                                "t");
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  return schema->types[0];
}

std::string FilterError(const std::string& text) {
  auto r = ParseFilter(Character(), text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

bool Match(const std::string& filter, const std::string& fields,
           const std::string& id = "r1") {
  EntityType c = Character();
  auto f = ParseFilter(c, filter);
  EXPECT_TRUE(f.ok()) << filter << ": " << f.status().message();
  Row row{"Character", id, 1, 1, 1, fields};
  return f.ok() && Matches(c, row, *f);
}

TEST(ParseFilter, ReadsEveryShape) {
  EntityType c = Character();
  auto f =
      ParseFilter(c, R"({"hp": {"gt": 3, "le": 10}, "name": {"in": ["a", "b"]},
                              "alive": null, "id": "x", "speed": 1})");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->conditions.size(), 6u);
  // nlohmann orders keys: alive, hp(gt, le), id, name, speed.
  EXPECT_EQ(f->conditions[0].op, FilterOp::kIsNull);
  EXPECT_EQ(f->conditions[1].op, FilterOp::kGt);
  EXPECT_EQ(f->conditions[1].values_json, std::vector<std::string>{"3"});
  EXPECT_EQ(f->conditions[2].op, FilterOp::kLe);
  EXPECT_EQ(f->conditions[3].field, "id");
  EXPECT_EQ(f->conditions[4].op, FilterOp::kIn);
  EXPECT_EQ(f->conditions[4].values_json,
            (std::vector<std::string>{"\"a\"", "\"b\""}));
  EXPECT_EQ(f->conditions[5].values_json, std::vector<std::string>{"1.0"});
  EXPECT_TRUE(ParseFilter(c, "{}")->conditions.empty());
  EXPECT_TRUE(ParseFilter(c, "")->conditions.empty());
}

TEST(ParseFilter, ErrorsNameTheField) {
  EXPECT_EQ(FilterError("{"), "BAD_FILTER: Character: the filter is not JSON");
  EXPECT_EQ(FilterError("[]"),
            "BAD_FILTER: Character: the filter must be a JSON object "
            "{\"field\": value or {\"op\": value}}");
  EXPECT_EQ(FilterError(R"({"mana": 1})"),
            "UNKNOWN_FIELD: Character has no field \"mana\"");
  EXPECT_EQ(FilterError(R"({"hp": {"gte": 1}})"),
            "BAD_FILTER: Character.hp: unknown op \"gte\" (ops: eq ne lt le "
            "gt ge in)");
  EXPECT_EQ(FilterError(R"({"hp": {}})"),
            "BAD_FILTER: Character.hp: an empty condition (ops: eq ne lt le gt "
            "ge in)");
  EXPECT_EQ(FilterError(R"({"hp": "x"})"),
            "BAD_FILTER: Character.hp: expected int, got string \"x\"");
  EXPECT_EQ(FilterError(R"({"alive": {"lt": true}})"),
            "BAD_FILTER: Character.alive: lt does not apply to a bool field "
            "(eq ne in)");
  EXPECT_EQ(FilterError(R"({"hp": {"in": []}})"),
            "BAD_FILTER: Character.hp: in takes an array of 1..100 values");
  std::string many = "[";
  for (int i = 0; i <= 100; ++i) many += (i ? "," : "") + std::to_string(i);
  EXPECT_EQ(FilterError(R"({"hp": {"in": )" + many + "]}}"),
            "BAD_FILTER: Character.hp: in takes an array of 1..100 values");
  EXPECT_EQ(FilterError(R"({"hp": {"eq": null}})"),
            "BAD_FILTER: Character.hp: null only as {\"hp\": null}");
  EXPECT_EQ(FilterError(R"({"id": 3})"),
            "BAD_FILTER: Character.id: expected string, got int 3");
}

TEST(Matches, ComparesByType) {
  std::string row =
      R"({"name":"bob","hp":5,"speed":1.5,"alive":true,"bag":{"a":1}})";
  EXPECT_TRUE(Match("{}", row));
  EXPECT_TRUE(Match(R"({"hp": 5})", row));
  EXPECT_FALSE(Match(R"({"hp": 6})", row));
  EXPECT_TRUE(Match(R"({"hp": {"gt": 3, "le": 5}})", row));
  EXPECT_FALSE(Match(R"({"hp": {"gt": 3, "lt": 5}})", row));
  EXPECT_TRUE(Match(R"({"hp": {"ne": 4}})", row));
  EXPECT_TRUE(Match(R"({"hp": {"in": [1, 5]}})", row));
  EXPECT_FALSE(Match(R"({"hp": {"in": [1, 2]}})", row));
  EXPECT_TRUE(Match(R"({"speed": {"ge": 1.5}})", row));
  EXPECT_TRUE(Match(R"({"speed": {"lt": 2}})", row));
  EXPECT_TRUE(Match(R"({"name": {"lt": "bz"}})", row));
  EXPECT_FALSE(Match(R"({"name": {"lt": "Bz"}})", row));  // bytes: 'B' < 'b'
  EXPECT_TRUE(Match(R"({"alive": true})", row));
  EXPECT_FALSE(Match(R"({"alive": false})", row));
  EXPECT_TRUE(Match(R"({"bag": {"eq": {"a": 1}}})", row));
  EXPECT_FALSE(Match(R"({"bag": {"eq": {"a": 2}}})", row));
  EXPECT_TRUE(Match(R"({"id": "r1"})", row));
  EXPECT_TRUE(Match(R"({"id": {"gt": "r0"}})", row));
  EXPECT_FALSE(Match(R"({"id": "r2"})", row));
}

TEST(Matches, NullsMatchOnlyTheNullTest) {
  std::string row = R"({"name":"bob"})";
  EXPECT_TRUE(Match(R"({"hp": null})", row));
  EXPECT_FALSE(Match(R"({"name": null})", row));
  EXPECT_FALSE(Match(R"({"hp": {"ne": 3}})", row));  // as SQL: NULL <> 3
  EXPECT_FALSE(Match(R"({"hp": {"lt": 3}})", row));
  EXPECT_FALSE(Match(R"({"hp": {"in": [3]}})", row));
}

}  // namespace
}  // namespace tessera::data
