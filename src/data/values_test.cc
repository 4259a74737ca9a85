// CheckFields, CheckId, RowJson, CanonicalJsonHash, NewRowId and the error
// codes: what an insert or update reports to its caller.
#include <gtest/gtest.h>

#include <set>

#include "data/schema.h"

namespace tessera::data {
namespace {

EntityType Character() {
  auto schema = ParseDataSchema(R"({"types": [{"name": "Character", "fields": [
    {"name": "name", "type": "string", "required": true},
    {"name": "hp", "type": "int", "default": 100},
    {"name": "speed", "type": "float"},
    {"name": "alive", "type": "bool"},
    {"name": "bag", "type": "json"}]}]})",
                                "t");
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  return schema->types[0];
}

std::string Error(const EntityType& type, const std::string& fields,
                  bool insert) {
  Result<std::string> r = CheckFields(type, fields, insert);
  EXPECT_FALSE(r.ok()) << fields;
  return r.ok() ? "" : r.status().message();
}

TEST(CheckFields, InsertFillsDefaultsAndCompacts) {
  EntityType c = Character();
  auto r =
      CheckFields(c, R"({ "name": "Ann", "speed": 2, "bag": {"b":1,"a":[1]},
                              "alive": null })",
                  true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, R"({"bag":{"a":[1],"b":1},"hp":100,"name":"Ann","speed":2.0})");
}

TEST(CheckFields, UpdateKeepsNullsToClearAndAddsNoDefaults) {
  EntityType c = Character();
  auto r = CheckFields(c, R"({"hp": 3, "alive": null})", false);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, R"({"alive":null,"hp":3})");
  EXPECT_EQ(CheckFields(c, "{}", false).value(), "{}");
}

TEST(CheckFields, ErrorsCarryCodes) {
  EntityType c = Character();
  EXPECT_EQ(Error(c, R"({"hp": "x", "name": "a"})", true),
            "BAD_VALUE: Character.hp: expected int, got string \"x\"");
  EXPECT_EQ(Error(c, R"({"hp": 1.5})", false),
            "BAD_VALUE: Character.hp: expected int, got float 1.5");
  EXPECT_EQ(Error(c, R"({"hp": 9007199254740993})", false),
            "BAD_VALUE: Character.hp: int out of range (|v| <= 2^53), got "
            "9007199254740993");
  EXPECT_EQ(Error(c, R"({"alive": 1})", false),
            "BAD_VALUE: Character.alive: expected bool, got int 1");
  EXPECT_EQ(Error(c, R"({"speed": "fast"})", false),
            "BAD_VALUE: Character.speed: expected float, got string \"fast\"");
  EXPECT_EQ(Error(c, R"({"name": 7})", false),
            "BAD_VALUE: Character.name: expected string, got int 7");
  EXPECT_EQ(Error(c, R"({"mana": 1})", false),
            "UNKNOWN_FIELD: Character has no field \"mana\"");
  EXPECT_EQ(Error(c, R"({"id": "x"})", false),
            "BAD_VALUE: Character.id: \"id\" is set by the store");
  EXPECT_EQ(Error(c, R"({"hp": 1})", true),
            "BAD_VALUE: Character.name: required");
  EXPECT_EQ(Error(c, R"({"name": null})", false),
            "BAD_VALUE: Character.name: required, cannot be null");
  EXPECT_EQ(Error(c, "[1]", false),
            "BAD_VALUE: Character: the fields must be a JSON object");
  EXPECT_EQ(Error(c, "{", false),
            "BAD_VALUE: Character: the fields must be a JSON object");
  std::string big(kMaxStringBytes + 1, 'a');
  EXPECT_EQ(Error(c, R"({"name": ")" + big + "\"}", false),
            "BAD_VALUE: Character.name: a string is at most 65536 bytes");
  EXPECT_EQ(CheckFields(c, R"({"hp": "x"})", false).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CheckId, AllowsTheIdAlphabetOnly) {
  EXPECT_TRUE(CheckId("player-1:sword_2.b").ok());
  EXPECT_TRUE(CheckId(std::string(kMaxIdBytes, 'a')).ok());
  EXPECT_EQ(CheckId("").message(), "BAD_VALUE: id: empty");
  EXPECT_EQ(CheckId(std::string(kMaxIdBytes + 1, 'a')).message(),
            "BAD_VALUE: id: longer than 128 bytes");
  EXPECT_EQ(CheckId("a/b").message(),
            "BAD_VALUE: id \"a/b\": only letters, digits and _ . : - are "
            "allowed");
}

TEST(RowJson, PutsSystemFieldsFirstAndNullsMissingOnes) {
  EntityType c = Character();
  Row row{"Character", "r1", 10, 20, 3, R"({"name":"Ann","hp":7})"};
  EXPECT_EQ(RowJson(c, row),
            R"({"id":"r1","createdAt":10,"updatedAt":20,"version":3,)"
            R"("name":"Ann","hp":7,"speed":null,"alive":null,"bag":null})");
}

TEST(CanonicalJsonHash, IgnoresKeyOrderAndSpaces) {
  auto a = CanonicalJsonHash(R"({"a":1,"b":[1,2]})");
  auto b = CanonicalJsonHash(" { \"b\": [1, 2], \"a\": 1 } ");
  auto c = CanonicalJsonHash(R"({"a":1,"b":[2,1]})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(a->size(), 64u);
  // SHA-256 of "null".
  EXPECT_EQ(CanonicalJsonHash("null").value(),
            "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b");
  EXPECT_EQ(CanonicalJsonHash("{nope").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(NewRowId, TimeOrderedAndUnique) {
  std::string a = NewRowId(1700000000000);
  std::string b = NewRowId(1700000000001);
  ASSERT_EQ(a.size(), 20u);
  EXPECT_LT(a, b);
  EXPECT_EQ(a.substr(0, 9), "0loyw3v28");  // 1700000000000 in base 36
  EXPECT_TRUE(CheckId(a).ok());
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(NewRowId(5));
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(DataError, MapsCodesToStatus) {
  EXPECT_EQ(DataError(codes::kRowNotFound, "Character x").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(DataError(codes::kUnknownType, "Foo").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(DataError(codes::kRowExists, "x").code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(DataError(codes::kUniqueViolation, "x").code(),
            StatusCode::kAlreadyExists);
  Status s = DataError(codes::kBadValue, "Character.hp: nope");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "BAD_VALUE: Character.hp: nope");
  EXPECT_EQ(ErrorCodeOf(s.message()), "BAD_VALUE");
  EXPECT_EQ(ErrorCodeOf("KEY_REUSED: other args"), "KEY_REUSED");
  EXPECT_EQ(ErrorCodeOf("no code here"), "");
  EXPECT_EQ(ErrorCodeOf("Lower: x"), "");
  EXPECT_EQ(ErrorCodeOf("CODE"), "");
  EXPECT_EQ(ErrorCodeOf(""), "");
}

}  // namespace
}  // namespace tessera::data
