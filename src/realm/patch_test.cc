// ApplyPatch (patch.h): each op on objects and lists, refusals, atomicity.
#include "realm/patch.h"

#include <gtest/gtest.h>

#include "realm/patch_testing.h"

namespace tessera::realm {
namespace {

using patch_testing::AppendOp;
using patch_testing::DeleteOp;
using patch_testing::SetOp;

Json Doc() {
  return Json::parse(R"({"a":{"b":1},"list":[10,20,30],"s":"text"})");
}

// Applies and expects success; returns the document after.
Json Applied(const Patch& patch, Json doc = Doc()) {
  Status st = ApplyPatch(patch, &doc);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return doc;
}

// Applies and expects a refusal that leaves the document as it was;
// returns the message.
std::string Refused(const Patch& patch, Json doc = Doc()) {
  const Json before = doc;
  Status st = ApplyPatch(patch, &doc);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_EQ(doc, before);
  return st.message();
}

TEST(RealmApplyTest, OpNamesAndPathText) {
  EXPECT_EQ(OpName(OpKind::kSet), "set");
  EXPECT_EQ(OpName(OpKind::kDelete), "delete");
  EXPECT_EQ(OpName(OpKind::kAppend), "append");
  EXPECT_EQ(PathText({}), "");
  EXPECT_EQ(PathText({"a", int64_t{0}, "b"}), "a/0/b");
  EXPECT_EQ(PathText({"x/y", "m~n", "~/"}), "x~1y/m~0n/~0~1");
}

TEST(RealmApplyTest, SetCreatesAndReplacesObjectKeys) {
  Json doc = Applied({SetOp({"a", "c"}, 2), SetOp({"a", "b"}, "one"),
                      SetOp({"new"}, Json::object())});
  EXPECT_EQ(doc["a"], Json::parse(R"({"b":"one","c":2})"));
  EXPECT_EQ(doc["new"], Json::object());
}

TEST(RealmApplyTest, SetOnListsReplacesOrAppendsAtSize) {
  Json doc = Applied(
      {SetOp({"list", int64_t{1}}, 21), SetOp({"list", int64_t{3}}, 40)});
  EXPECT_EQ(doc["list"], Json::parse("[10,21,30,40]"));
}

TEST(RealmApplyTest, SetRefusesMissingParentsAndBadIndexes) {
  EXPECT_NE(
      Refused({SetOp({"list", int64_t{4}}, 1)}).find("no index 4 (size 3)"),
      std::string::npos);
  EXPECT_NE(Refused({SetOp({"list", int64_t{-1}}, 1)}).find("no index -1"),
            std::string::npos);
  EXPECT_NE(Refused({SetOp({"nope", "x"}, 1)}).find("has no key \"nope\""),
            std::string::npos);
  EXPECT_NE(
      Refused({SetOp({"s", "x"}, 1)}).find("\"s\" is a string, not an object"),
      std::string::npos);
  EXPECT_NE(Refused({SetOp({"a", int64_t{0}}, 1)})
                .find("\"a\" is an object, not a list"),
            std::string::npos);
  EXPECT_NE(Refused({SetOp({"list", "k"}, 1)}).find("not an object"),
            std::string::npos);
}

TEST(RealmApplyTest, RootSetReplacesTheDocumentOnlyWithAnObject) {
  Json doc = Applied({SetOp({}, Json::parse(R"({"fresh":true})"))});
  EXPECT_EQ(doc, Json::parse(R"({"fresh":true})"));
  const std::string why = Refused({SetOp({}, Json::array())});
  EXPECT_NE(why.find("the root must be an object, not a list"),
            std::string::npos)
      << why;
  Refused({SetOp({}, 5)});
  Refused({DeleteOp({})});
  Refused({AppendOp({}, 1)});
}

TEST(RealmApplyTest, DeleteRemovesKeysAndElements) {
  Json doc = Applied(
      {DeleteOp({"a", "b"}), DeleteOp({"list", int64_t{0}}), DeleteOp({"s"})});
  EXPECT_EQ(doc, Json::parse(R"({"a":{},"list":[20,30]})"));
}

TEST(RealmApplyTest, DeleteOfAbsentIsRefused) {
  EXPECT_NE(Refused({DeleteOp({"a", "zz"})}).find("\"a\" has no key \"zz\""),
            std::string::npos);
  EXPECT_NE(Refused({DeleteOp({"list", int64_t{3}})}).find("no index 3"),
            std::string::npos);
  Refused({DeleteOp({"missing", "x"})});
}

TEST(RealmApplyTest, AppendPushesAndCreatesLists) {
  Json doc = Applied({AppendOp({"list"}, 40), AppendOp({"a", "tags"}, "x"),
                      AppendOp({"a", "tags"}, Json::array({1, 2}))});
  EXPECT_EQ(doc["list"], Json::parse("[10,20,30,40]"));
  // A list value is one element, not spliced.
  EXPECT_EQ(doc["a"]["tags"], Json::parse(R"(["x",[1,2]])"));
}

TEST(RealmApplyTest, AppendIntoANestedListByIndex) {
  Json doc = Applied(
      {SetOp({"m"}, Json::parse("[[1],[2]]")), AppendOp({"m", int64_t{1}}, 3)});
  EXPECT_EQ(doc["m"], Json::parse("[[1],[2,3]]"));
}

TEST(RealmApplyTest, AppendRefusals) {
  EXPECT_NE(Refused({AppendOp({"s"}, 1)}).find("\"s\" is a string, not a list"),
            std::string::npos);
  // Absent under a list: nothing to create it in.
  Refused({AppendOp({"list", int64_t{3}}, 1)});
  Refused({AppendOp({"nope", "x"}, 1)});
}

TEST(RealmApplyTest, MessageNamesOpIndexOpAndPath) {
  const std::string why =
      Refused({SetOp({"x"}, 1), SetOp({"y"}, 2), DeleteOp({"a", "q"})});
  EXPECT_EQ(why.rfind("op 2 (delete \"a/q\"): ", 0), 0u) << why;
}

TEST(RealmApplyTest, AFailingThirdOpLeavesTheDocumentUnchanged) {
  // Two ops that change the document every way, then one that fails.
  const Patch kinds[] = {
      {SetOp({"a", "b"}, 2), AppendOp({"list"}, 40), DeleteOp({"nope"})},
      {SetOp({"a", "c"}, 2), DeleteOp({"list", int64_t{1}}),
       DeleteOp({"nope"})},
      {AppendOp({"fresh"}, 1), SetOp({"list", int64_t{3}}, 1),
       SetOp({"list", int64_t{9}}, 1)},
      {DeleteOp({"a"}), SetOp({"list", int64_t{0}}, "z"), DeleteOp({"a"})},
      {SetOp({}, Json::parse(R"({"other":[]})")), AppendOp({"other"}, 1),
       DeleteOp({"list"})},
      // Later ops work inside what earlier ones created.
      {SetOp({"n"}, Json::parse(R"({"l":[]})")), AppendOp({"n", "l"}, 1),
       AppendOp({"n", "l", int64_t{0}}, 2)},
  };
  for (const Patch& patch : kinds) {
    const std::string why = Refused(patch);
    EXPECT_EQ(why.rfind("op 2 ", 0), 0u) << why;
  }
}

TEST(RealmApplyTest, ManyOpsOnOneListUndoInOrder) {
  Patch patch;
  for (int i = 0; i < 100; ++i) patch.push_back(AppendOp({"list"}, i));
  for (int i = 0; i < 50; ++i) patch.push_back(DeleteOp({"list", int64_t{0}}));
  patch.push_back(SetOp({"list", int64_t{500}}, 0));
  Refused(patch);
  patch.pop_back();
  EXPECT_EQ(Applied(patch)["list"].size(), 53u);
}

}  // namespace
}  // namespace tessera::realm
