// The JSON form of patches (patch.h PatchFromJson / PatchToJson).
#include <gtest/gtest.h>

#include "realm/patch.h"

namespace tessera::realm {
namespace {

TEST(RealmPatchJsonTest, RoundTrip) {
  const Json text = Json::parse(R"([
    {"op":"set","path":["a",0,"b"],"value":{"x":[1,2.5,"s",null,true]}},
    {"op":"set","path":[],"value":{}},
    {"op":"delete","path":["k~/",3]},
    {"op":"append","path":["list"],"value":null}
  ])");
  Result<Patch> patch = PatchFromJson(text);
  ASSERT_TRUE(patch.ok()) << patch.status().ToString();
  ASSERT_EQ(patch->size(), 4u);
  EXPECT_EQ((*patch)[0].kind, OpKind::kSet);
  EXPECT_EQ((*patch)[0].path, (Path{"a", int64_t{0}, "b"}));
  EXPECT_EQ((*patch)[2].kind, OpKind::kDelete);
  EXPECT_TRUE((*patch)[2].value.is_null());
  EXPECT_EQ((*patch)[3].kind, OpKind::kAppend);
  EXPECT_EQ(PatchToJson(*patch), text);
  Result<Patch> again = PatchFromJson(PatchToJson(*patch));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *patch);
}

TEST(RealmPatchJsonTest, EmptyPatch) {
  Result<Patch> patch = PatchFromJson(Json::array());
  ASSERT_TRUE(patch.ok());
  EXPECT_TRUE(patch->empty());
  EXPECT_EQ(PatchToJson({}), Json::array());
}

struct JsonCase {
  const char* ops;
  const char* message;
};

TEST(RealmPatchJsonTest, EachErrorNamesTheOpAndField) {
  const JsonCase cases[] = {
      {R"({"op":"set"})", "patch: expected a list of ops, got object"},
      {R"([{"op":"set","path":[],"value":{}}, 5])",
       "op 1: expected an object, got integer"},
      {R"([{"path":[],"value":1}])", "op 0: field \"op\": missing"},
      {R"([{"op":1,"path":[]}])",
       "op 0: field \"op\": expected a string, got integer"},
      {R"([{"op":"move","path":[]}])",
       "op 0: field \"op\": unknown op \"move\" (expected set, delete or "
       "append)"},
      {R"([{"op":"set","value":1}])", "op 0: field \"path\": missing"},
      {R"([{"op":"set","path":"a/b","value":1}])",
       "op 0: field \"path\": expected a list, got string"},
      {R"([{"op":"set","path":["a",-1],"value":1}])",
       "op 0: field \"path\": segment 1: expected a key (string) or a list "
       "index (integer >= 0), got -1"},
      {R"([{"op":"set","path":[1.5],"value":1}])",
       "op 0: field \"path\": segment 0: expected a key (string) or a list "
       "index (integer >= 0), got 1.5"},
      {R"([{"op":"set","path":[18446744073709551615],"value":1}])",
       "op 0: field \"path\": segment 0: expected a key (string) or a list "
       "index (integer >= 0), got 18446744073709551615"},
      {R"([{"op":"set","path":[null],"value":1}])",
       "op 0: field \"path\": segment 0: expected a key (string) or a list "
       "index (integer >= 0), got null"},
      {R"([{"op":"set","path":["a"]}])",
       "op 0: field \"value\": missing (set needs one)"},
      {R"([{"op":"append","path":["a"]}])",
       "op 0: field \"value\": missing (append needs one)"},
      {R"([{"op":"delete","path":["a"],"value":1}])",
       "op 0: field \"value\": not allowed for delete"},
      {R"([{"op":"set","path":["a"],"value":1,"why":2}])",
       "op 0: unknown field \"why\" (expected op, path and value)"},
  };
  for (const JsonCase& c : cases) {
    Result<Patch> patch = PatchFromJson(Json::parse(c.ops));
    ASSERT_FALSE(patch.ok()) << c.ops;
    EXPECT_EQ(patch.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(patch.status().message(), c.message) << c.ops;
  }
}

TEST(RealmPatchJsonTest, SetValueMayBeNull) {
  Result<Patch> patch =
      PatchFromJson(Json::parse(R"([{"op":"set","path":["a"],"value":null}])"));
  ASSERT_TRUE(patch.ok());
  Json doc = Json::object();
  ASSERT_TRUE(ApplyPatch(*patch, &doc).ok());
  EXPECT_EQ(doc, Json::parse(R"({"a":null})"));
}

}  // namespace
}  // namespace tessera::realm
