// ParseDataSchema, DataSchemaJson and DiffSchemas: the manifest's "data"
// section as a user writes it, and the migrations a boot accepts.
#include "data/schema.h"

#include <gtest/gtest.h>

namespace tessera::data {
namespace {

constexpr char kWhere[] = "app/tessera.json: data";

constexpr char kCharacters[] = R"({"types": [
  {"name": "Character",
   "fields": [
     {"name": "userId", "type": "string", "required": true},
     {"name": "name", "type": "string", "required": true},
     {"name": "hp", "type": "int", "default": 100},
     {"name": "speed", "type": "float", "default": 2},
     {"name": "alive", "type": "bool"},
     {"name": "bag", "type": "json"}],
   "indexes": [{"field": "name", "unique": true}, {"field": "hp"}],
   "owner": "userId"},
  {"name": "GmAction", "fields": [{"name": "note", "type": "string"}]}
]})";

DataSchema MustParse(const std::string& text) {
  Result<DataSchema> schema = ParseDataSchema(text, kWhere);
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  return schema.ok() ? schema.value() : DataSchema{};
}

std::string ErrorOf(const std::string& text) {
  Result<DataSchema> schema = ParseDataSchema(text, kWhere);
  EXPECT_FALSE(schema.ok()) << text;
  return schema.ok() ? "" : schema.status().message();
}

TEST(ParseDataSchema, ReadsTypesFieldsIndexesAndOwner) {
  DataSchema schema = MustParse(kCharacters);
  ASSERT_EQ(schema.types.size(), 2u);
  const EntityType* c = schema.Find("Character");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->fields.size(), 6u);
  EXPECT_EQ(c->fields[0].name, "userId");
  EXPECT_TRUE(c->fields[0].required);
  EXPECT_EQ(c->FindField("hp")->type, FieldType::kInt);
  EXPECT_EQ(c->FindField("hp")->default_json, "100");
  EXPECT_EQ(c->FindField("speed")->default_json, "2.0");  // stored as float
  EXPECT_EQ(c->FindField("bag")->type, FieldType::kJson);
  ASSERT_EQ(c->indexes.size(), 2u);
  EXPECT_TRUE(c->FindIndex("name")->unique);
  EXPECT_FALSE(c->FindIndex("hp")->unique);
  EXPECT_EQ(c->owner, "userId");
  EXPECT_NE(c->FindIndex("userId"), nullptr);  // the owner is indexed
  EXPECT_EQ(schema.Find("Nope"), nullptr);
}

TEST(ParseDataSchema, EmptyAndMissingTypes) {
  EXPECT_TRUE(MustParse("{}").empty());
  EXPECT_TRUE(MustParse(R"({"types": []})").empty());
}

TEST(ParseDataSchema, ErrorsNameThePath) {
  EXPECT_EQ(ErrorOf("[1]"),
            "app/tessera.json: data: must be an object {\"types\": [...]}");
  EXPECT_EQ(ErrorOf("{"), "app/tessera.json: data: not valid JSON");
  EXPECT_EQ(ErrorOf(R"({"tpyes": []})"),
            "app/tessera.json: data: unknown key \"tpyes\" (keys: types)");
  EXPECT_EQ(ErrorOf(R"({"types": {}})"),
            "app/tessera.json: data.types: must be an array");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "lower", "fields": []}]})"),
            "app/tessera.json: data.types[0].name: \"lower\" is not a type "
            "name ([A-Z][A-Za-z0-9_]{0,63})");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A"}]})"),
            "app/tessera.json: data.types[0]: \"fields\" is missing");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [], "own": "x"}]})"),
            "app/tessera.json: data.types[0]: unknown key \"own\" (keys: name, "
            "fields, indexes, owner)");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": []},
                                  {"name": "A", "fields": []}]})"),
            "app/tessera.json: data.types[1].name: type \"A\" declared twice");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "x", "type": "int"}, {"name": "y", "type": "integer"}]}]})"),
            "app/tessera.json: data.types[0].fields[1].type: unknown type "
            "\"integer\" (types: string, int, float, bool, json)");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "x", "type": "int"}, {"name": "x", "type": "int"}]}]})"),
            "app/tessera.json: data.types[0].fields[1].name: field \"x\" "
            "declared twice");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "version", "type": "int"}]}]})"),
            "app/tessera.json: data.types[0].fields[0].name: \"version\" is "
            "reserved (id, createdAt, updatedAt, version are every row's)");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "Hp", "type": "int"}]}]})"),
            "app/tessera.json: data.types[0].fields[0].name: \"Hp\" is not a "
            "field name ([a-z][A-Za-z0-9_]{0,63})");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "hp", "type": "int", "default": "full"}]}]})"),
            "app/tessera.json: data.types[0].fields[0].default: expected int, "
            "got string \"full\"");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "hp", "type": "int", "required": "yes"}]}]})"),
            "app/tessera.json: data.types[0].fields[0].required: must be true "
            "or false");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "hp", "type": "int"}], "indexes": [{"field": "mp"}]}]})"),
            "app/tessera.json: data.types[0].indexes[0].field: A has no field "
            "\"mp\"");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "hp", "type": "int"}],
        "indexes": [{"field": "hp"}, {"field": "hp", "unique": true}]}]})"),
            "app/tessera.json: data.types[0].indexes[1].field: field \"hp\" is "
            "indexed twice");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "j", "type": "json"}], "indexes": [{"field": "j"}]}]})"),
            "app/tessera.json: data.types[0].indexes[0].field: a json field "
            "cannot be indexed");
  EXPECT_EQ(ErrorOf(R"({"types": [{"name": "A", "fields": [
        {"name": "hp", "type": "int"}], "owner": "hp"}]})"),
            "app/tessera.json: data.types[0].owner: the owner field \"hp\" "
            "must be a string field");
  EXPECT_EQ(
      ErrorOf(R"({"types": [{"name": "A", "fields": [], "owner": "u"}]})"),
      "app/tessera.json: data.types[0].owner: A has no field \"u\"");
}

TEST(DataSchemaJson, RoundTrips) {
  DataSchema schema = MustParse(kCharacters);
  std::string text = DataSchemaJson(schema);
  DataSchema again = MustParse(text);
  EXPECT_EQ(DataSchemaJson(again), text);
  const EntityType* c = again.Find("Character");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->owner, "userId");
  EXPECT_EQ(c->FindField("hp")->default_json, "100");
  EXPECT_TRUE(c->FindIndex("name")->unique);
  EXPECT_EQ(DataSchemaJson(DataSchema{}), R"({"types":[]})");
}

DataSchema Schema(const std::string& fields, const std::string& extra = "") {
  return MustParse(R"({"types": [{"name": "Character", "fields": [)" + fields +
                   "]" + extra + "}]}");
}

std::string Refusal(const DataSchema& applied, const DataSchema& next) {
  auto diff = DiffSchemas(applied, next);
  EXPECT_FALSE(diff.ok());
  if (diff.ok()) return "";
  EXPECT_EQ(diff.status().code(), StatusCode::kFailedPrecondition);
  return diff.status().message();
}

TEST(DiffSchemas, AddsTypesFieldsIndexesAndOwner) {
  DataSchema applied = Schema(R"({"name": "hp", "type": "int"},
                                 {"name": "user", "type": "string"})");
  DataSchema next = MustParse(R"({"types": [
    {"name": "Character", "fields": [
      {"name": "hp", "type": "int"}, {"name": "user", "type": "string"},
      {"name": "mp", "type": "int", "required": true, "default": 5},
      {"name": "title", "type": "string"}],
     "indexes": [{"field": "hp"}], "owner": "user"},
    {"name": "Item", "fields": []}]})");
  auto diff = DiffSchemas(applied, next);
  ASSERT_TRUE(diff.ok()) << diff.status().message();
  std::vector<std::string> seen;
  for (const SchemaChange& c : *diff) {
    seen.push_back(std::to_string(static_cast<int>(c.kind)) + " " + c.type +
                   " " + c.field);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "1 Character mp", "1 Character title", "2 Character hp",
                      "3 Character user", "0 Item "}));
  auto none = DiffSchemas(next, next);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto first = DiffSchemas(DataSchema{}, next);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->size(), 2u);  // two new types
}

TEST(DiffSchemas, RefusesEachChangeByName) {
  DataSchema applied =
      Schema(R"({"name": "hp", "type": "int", "default": 1},
               {"name": "name", "type": "string"},
               {"name": "user", "type": "string"})",
             R"(, "indexes": [{"field": "name", "unique": true}],
                 "owner": "user")");
  EXPECT_EQ(Refusal(applied,
                    Schema(R"({"name": "hp", "type": "float", "default": 1},
               {"name": "name", "type": "string"},
               {"name": "user", "type": "string"})",
                           R"(, "indexes": [{"field": "name", "unique": true}],
                 "owner": "user")")),
            "data schema change refused: Character.hp: type int -> float; "
            "Character.hp: default 1 -> 1.0 (only new types, fields and "
            "indexes apply at boot)");
  EXPECT_EQ(Refusal(applied,
                    Schema(R"({"name": "hp", "type": "int", "required": true},
               {"name": "user", "type": "string"},
               {"name": "level", "type": "int", "required": true})")),
            "data schema change refused: Character.hp: required false -> "
            "true; Character.hp: default 1 -> none; Character.name: field "
            "removed; Character.name: index removed; Character: owner user -> "
            "none; Character.level: a new field must be optional or have a "
            "default (only new types, fields and indexes apply at boot)");
  EXPECT_EQ(Refusal(applied, DataSchema{}),
            "data schema change refused: Character: type removed (only new "
            "types, fields and indexes apply at boot)");
  EXPECT_EQ(
      Refusal(applied, Schema(R"({"name": "hp", "type": "int", "default": 1},
               {"name": "name", "type": "string"},
               {"name": "user", "type": "string"})",
                              R"(, "indexes": [{"field": "name"}],
                 "owner": "name")")),
      "data schema change refused: Character.name: index unique true -> "
      "false; Character: owner user -> name (only new types, fields and "
      "indexes apply at boot)");
}

}  // namespace
}  // namespace tessera::data
