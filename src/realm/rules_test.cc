// Realm rules: which client writes are refused (and why), which paths a
// reader may see, and what a broadcast to that reader carries.
#include "realm/rules.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera::realm {
namespace {

Rules Parse(const char* text) {
  Result<Rules> rules = ParseRules(Json::parse(text), "rules");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return rules.ok() ? rules.value() : Rules{};
}

Op Set(Path path, Json value = 1) {
  return Op{OpKind::kSet, std::move(path), std::move(value)};
}
Op Delete(Path path) { return Op{OpKind::kDelete, std::move(path), nullptr}; }
Op Append(Path path, Json value = 1) {
  return Op{OpKind::kAppend, std::move(path), std::move(value)};
}

// The refusal's message, or "" when the write is allowed.
std::string Refusal(const Rules& rules, const Op& op, std::string_view avatar) {
  Status s = CheckWrite(rules, op, avatar);
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.message();
  return s.message();
}

std::string RuleError(const char* text) {
  Result<Rules> rules = ParseRules(Json::parse(text), "realms[0].rules");
  EXPECT_FALSE(rules.ok()) << text;
  return rules.ok() ? "" : rules.status().message();
}

std::string PatternError(const char* text) {
  auto p = ParsePattern(text);
  EXPECT_FALSE(p.ok()) << text;
  return p.ok() ? "" : p.status().message();
}

TEST(RealmReads, OnlyAReadOtherThanEveryoneRestrictsReads) {
  EXPECT_FALSE(RestrictsReads(Parse("[]")));
  EXPECT_FALSE(RestrictsReads(
      Parse(R"([{"path": "players/{avatar}/**", "write": "owner"},
                {"path": "chat", "read": "everyone"}])")));
  EXPECT_TRUE(RestrictsReads(
      Parse(R"([{"path": "players/{avatar}/**", "write": "owner"},
                {"path": "hands/{avatar}/**", "read": "owner"}])")));
  EXPECT_TRUE(
      RestrictsReads(Parse(R"([{"path": "secret", "read": "server"}])")));
}

TEST(RealmWrites, WithoutRulesEveryClientWriteIsRefused) {
  Rules none;
  EXPECT_EQ(Refusal(none, Set({"a"}), "a"),
            "a is server-only: no rule lets clients write it (writes default "
            "to server-only)");
  EXPECT_NE(Refusal(none, Set({}), "a"), "");
  EXPECT_NE(Refusal(none, Append({"chat"}), "a"), "");
}

TEST(RealmWrites, OwnerWritesOnlyTheirOwnSubtree) {
  Rules r = Parse(R"([{"path": "players/{avatar}/**", "write": "owner"}])");
  EXPECT_EQ(Refusal(r, Set({"players", "a", "x"}), "a"), "");
  EXPECT_EQ(Refusal(r, Set({"players", "a"}, Json::object()), "a"), "");
  EXPECT_EQ(Refusal(r, Delete({"players", "a"}), "a"), "");
  EXPECT_EQ(Refusal(r, Append({"players", "a", "log"}), "a"), "");
  EXPECT_EQ(
      Refusal(r, Set({"players", "b", "x"}), "a"),
      "players/b/x is owned by avatar b (rule 0 \"players/{avatar}/**\")");
  EXPECT_NE(Refusal(r, Delete({"players", "b"}), "a"), "");
  // Neither the list of players nor the root is anyone's.
  EXPECT_NE(Refusal(r, Set({"players"}, Json::object()), "a"), "");
  EXPECT_NE(Refusal(r, Set({}, Json::object()), "a"), "");
}

TEST(RealmWrites, ASetAboveOwnedSubtreesIsRefused) {
  Rules r = Parse(R"([{"path": "players/{avatar}/**", "write": "owner"},
                      {"path": "**", "write": "everyone"}])");
  EXPECT_EQ(Refusal(r, Set({"lobby", "topic"}), "a"), "");
  EXPECT_EQ(Refusal(r, Set({"players"}, Json::object()), "a"),
            "set on players would replace players/{avatar}/**, which is "
            "owned by each avatar (rule 0 \"players/{avatar}/**\")");
  EXPECT_NE(Refusal(r, Set({}, Json::object()), "a"), "");
  EXPECT_NE(Refusal(r, Delete({"players"}), "a"), "");
  EXPECT_EQ(Refusal(r, Set({"players", "a"}, Json::object()), "a"), "");
}

TEST(RealmWrites, ASetAboveServerPathsIsRefusedUnlessARuleShadowsThem) {
  Rules guarded = Parse(R"([{"path": "board/admin/**", "write": "server"},
                            {"path": "board/**", "write": "everyone"}])");
  EXPECT_EQ(Refusal(guarded, Set({"board", "title"}), "a"), "");
  EXPECT_EQ(Refusal(guarded, Set({"board"}, Json::object()), "a"),
            "set on board would replace board/admin/**, which is server-only "
            "(rule 0 \"board/admin/**\")");
  EXPECT_NE(Refusal(guarded, Delete({"board"}), "a"), "");
  EXPECT_NE(Refusal(guarded, Set({"board", "admin", "k"}), "a"), "");

  // First match wins: the earlier board/** decides everything below board.
  Rules shadowed = Parse(R"([{"path": "board/**", "write": "everyone"},
                             {"path": "board/admin/**", "write": "server"}])");
  EXPECT_EQ(Refusal(shadowed, Set({"board"}, Json::object()), "a"), "");
  EXPECT_EQ(Refusal(shadowed, Set({"board", "admin", "k"}), "a"), "");
}

TEST(RealmWrites, AppendOnlyListsTakeOnlyAppendsOnTheListItself) {
  Rules r = Parse(R"([{"path": "chat", "write": "append"},
                      {"path": "rooms/*/chat", "write": "append"},
                      {"path": "**", "write": "everyone"}])");
  EXPECT_EQ(Refusal(r, Append({"chat"}, "hi"), "a"), "");
  EXPECT_EQ(Refusal(r, Set({"chat"}, Json::array()), "a"),
            "chat is append-only (rule 0 \"chat\"): only an append on chat "
            "itself is accepted");
  EXPECT_NE(Refusal(r, Delete({"chat"}), "a"), "");
  EXPECT_EQ(Refusal(r, Append({"rooms", "r1", "chat"}), "a"), "");
  EXPECT_NE(Refusal(r, Set({"rooms", "r1", "chat"}), "a"), "");
  // Replacing a room replaces its list.
  EXPECT_EQ(Refusal(r, Set({"rooms", "r1"}, Json::object()), "a"),
            "set on rooms/r1 would replace rooms/*/chat, which is "
            "append-only (rule 1 \"rooms/*/chat\")");
}

TEST(RealmWrites, AppendedMessagesCannotBeEditedByDefault) {
  Rules r = Parse(R"([{"path": "chat", "write": "append"}])");
  EXPECT_NE(Refusal(r, Set({"chat", int64_t{0}}, "edited"), "a"), "");
  EXPECT_NE(Refusal(r, Delete({"chat", int64_t{0}}), "a"), "");
}

TEST(RealmWrites, ServerPathsRefuseClientsAndNameTheRule) {
  Rules r = Parse(R"([{"path": "match/**", "write": "server"},
                      {"path": "**", "write": "everyone"}])");
  EXPECT_EQ(Refusal(r, Set({"match", "turn"}), "a"),
            "match/turn is server-only (rule 0 \"match/**\")");
  EXPECT_EQ(Refusal(r, Set({"notes"}), "a"), "");
  EXPECT_EQ(Refusal(r, Set({}, Json::object()), "a"),
            "set on (root) would replace match/**, which is server-only "
            "(rule 0 \"match/**\")");
}

TEST(RealmPatterns, StarMatchesExactlyOneSegmentIncludingAnIndex) {
  Rules r = Parse(R"([{"path": "items/*", "write": "everyone"}])");
  EXPECT_EQ(Refusal(r, Set({"items", "x"}), "a"), "");
  EXPECT_EQ(Refusal(r, Set({"items", int64_t{3}}), "a"), "");
  EXPECT_NE(Refusal(r, Set({"items"}), "a"), "");
  EXPECT_NE(Refusal(r, Set({"items", "x", "y"}), "a"), "");
}

TEST(RealmPatterns, RestMatchesZeroOrMoreSegments) {
  Rules r = Parse(R"([{"path": "a/**", "write": "everyone"}])");
  EXPECT_EQ(Refusal(r, Set({"a"}), "u"), "");
  EXPECT_EQ(Refusal(r, Set({"a", int64_t{0}, "b", "c"}), "u"), "");
  EXPECT_NE(Refusal(r, Set({"b"}), "u"), "");
}

TEST(RealmPatterns, LiteralsAndAvatarsMatchKeysNeverIndexes) {
  Rules lit = Parse(R"([{"path": "list/0", "write": "everyone"}])");
  EXPECT_EQ(Refusal(lit, Set({"list", "0"}), "a"), "");
  EXPECT_NE(Refusal(lit, Set({"list", int64_t{0}}), "a"), "");
  Rules own = Parse(R"([{"path": "p/{avatar}", "write": "owner"}])");
  EXPECT_EQ(Refusal(own, Set({"p", "0"}), "0"), "");
  EXPECT_NE(Refusal(own, Set({"p", int64_t{0}}), "0"), "");
}

TEST(RealmPatterns, MalformedPatternsAreRefusedWithTheReason) {
  EXPECT_NE(PatternError("").find("empty pattern"), std::string::npos);
  EXPECT_NE(PatternError("a//b").find("empty segment"), std::string::npos);
  EXPECT_NE(PatternError("/a").find("empty segment"), std::string::npos);
  EXPECT_NE(PatternError("a/").find("empty segment"), std::string::npos);
  EXPECT_NE(PatternError("**/a").find("must be the last"), std::string::npos);
  EXPECT_NE(PatternError("a*").find("whole segments"), std::string::npos);
  EXPECT_NE(PatternError("p/{user}").find("unknown placeholder {user}"),
            std::string::npos);
  EXPECT_NE(PatternError("{avatar}/{avatar}").find("more than one"),
            std::string::npos);
  std::string deep;
  for (int i = 0; i < 33; ++i) deep += (i ? "/s" : "s");
  EXPECT_NE(PatternError(deep.c_str()).find("more than 32"), std::string::npos);
  EXPECT_TRUE(ParsePattern("a/*/{avatar}/**").ok());
}

TEST(RealmRuleParsing, RefusalsNameTheRuleAndField) {
  EXPECT_EQ(RuleError(R"({"path": "a"})"),
            "realms[0].rules: expected an array of rules, got an object");
  EXPECT_EQ(RuleError(R"([{"path": "a", "write": "server"}, 3])"),
            "realms[0].rules[1]: expected an object, got an integer");
  EXPECT_EQ(RuleError(R"([{"path": "a", "writes": "server"}])"),
            "realms[0].rules[0]: unknown field \"writes\" (known: path, "
            "write, read)");
  EXPECT_EQ(RuleError(R"([{"write": "server"}])"),
            "realms[0].rules[0]: missing \"path\"");
  EXPECT_EQ(RuleError(R"([{"path": 1, "write": "server"}])"),
            "realms[0].rules[0].path: expected a string, got an integer");
  EXPECT_NE(RuleError(R"([{"path": "a//b", "write": "server"}])")
                .find("realms[0].rules[0].path: empty segment"),
            std::string::npos);
  EXPECT_EQ(RuleError(R"([{"path": "a", "write": "anyone"}])"),
            "realms[0].rules[0].write: expected \"server\", \"everyone\", "
            "\"owner\" or \"append\", got \"anyone\"");
  EXPECT_EQ(RuleError(R"([{"path": "a", "read": "all"}])"),
            "realms[0].rules[0].read: expected \"everyone\", \"owner\" or "
            "\"server\", got \"all\"");
  EXPECT_EQ(RuleError(R"([{"path": "a"}])"),
            "realms[0].rules[0]: needs \"write\" or \"read\" (or both)");
  EXPECT_NE(RuleError(R"([{"path": "players/*", "write": "owner"}])")
                .find("an owner rule needs an {avatar} segment"),
            std::string::npos);
  EXPECT_NE(RuleError(R"([{"path": "hands/*", "read": "owner"}])")
                .find("an owner rule needs an {avatar} segment"),
            std::string::npos);
  EXPECT_NE(RuleError(R"([{"path": "chat/**", "write": "append"}])")
                .find("drop the trailing \"**\""),
            std::string::npos);
  Json many = Json::array();
  for (int i = 0; i < 257; ++i)
    many.push_back(Json::parse(R"({"path": "a", "read": "server"})"));
  EXPECT_FALSE(ParseRules(many, "r").ok());
}

const char* kReadRules = R"([
  {"path": "secret/**", "read": "server"},
  {"path": "hands/{avatar}/**", "read": "owner"},
  {"path": "vault", "read": "server"},
  {"path": "vault/public", "read": "everyone"},
  {"path": "cards/*/hidden", "read": "server"},
  {"path": "log/*", "read": "server"},
  {"path": "chat/*/ip", "read": "server"},
  {"path": "players/{avatar}/private/**", "read": "owner"}])";

TEST(RealmReads, EveryoneReadsWhatNoRuleHides) {
  Rules r = Parse(kReadRules);
  EXPECT_TRUE(CanRead(r, {}, "a"));
  EXPECT_TRUE(CanRead(r, {"hands"}, "a"));
  EXPECT_TRUE(CanRead(r, {"players", "b", "name"}, "a"));
  EXPECT_TRUE(CanRead(Rules{}, {"secret"}, "a"));
}

TEST(RealmReads, ServerAndOwnerPathsAreHidden) {
  Rules r = Parse(kReadRules);
  EXPECT_FALSE(CanRead(r, {"secret"}, "a"));
  EXPECT_FALSE(CanRead(r, {"secret", "k", int64_t{1}}, "a"));
  EXPECT_TRUE(CanRead(r, {"hands", "a", int64_t{0}}, "a"));
  EXPECT_FALSE(CanRead(r, {"hands", "a", int64_t{0}}, "b"));
  EXPECT_FALSE(CanRead(r, {"hands", "a"}, "b"));
}

TEST(RealmReads, BelowAHiddenPathNothingIsReadable) {
  Rules r = Parse(kReadRules);
  // An exact pattern hides the whole value, and a later rule cannot
  // reopen part of it.
  EXPECT_FALSE(CanRead(r, {"vault", "gold"}, "a"));
  EXPECT_FALSE(CanRead(r, {"vault", "public"}, "a"));
}

TEST(RealmSlicing, TheDocumentLosesWhatTheReaderMayNotSee) {
  Rules r = Parse(kReadRules);
  Json doc = Json::parse(R"({
    "secret": {"k": 1}, "vault": {"public": 2},
    "hands": {"a": [1, 2], "b": [3]},
    "cards": [{"face": 1, "hidden": 9}, {"face": 2, "hidden": 8}],
    "log": ["x", "y"],
    "players": {"a": {"name": "A", "private": {"pin": 1}},
                "b": {"name": "B", "private": {"pin": 2}}}})");
  Json want = Json::parse(R"({
    "hands": {"a": [1, 2]},
    "cards": [{"face": 1}, {"face": 2}],
    "log": [null, null],
    "players": {"a": {"name": "A", "private": {"pin": 1}},
                "b": {"name": "B"}}})");
  EXPECT_EQ(SliceForReader(r, doc, "a"), want);
  EXPECT_EQ(SliceForReader(Rules{}, doc, "a"), doc);
}

TEST(RealmSlicing, AHiddenRootLeavesAnEmptyDocument) {
  Rules r = Parse(R"([{"path": "**", "read": "server"}])");
  EXPECT_EQ(SliceForReader(r, Json::parse(R"({"a": 1})"), "a"), Json::object());
  EXPECT_FALSE(
      SliceOp(r, Set({}, Json::parse(R"({"a": 1})")), "a").has_value());
}

TEST(RealmSlicing, OpsOnHiddenPathsAreDropped) {
  Rules r = Parse(kReadRules);
  EXPECT_FALSE(SliceOp(r, Set({"secret", "k"}, 2), "a").has_value());
  EXPECT_FALSE(SliceOp(r, Delete({"hands", "b"}), "a").has_value());
  EXPECT_FALSE(SliceOp(r, Append({"hands", "b"}, 4), "a").has_value());
  Op own = Append({"hands", "a"}, 4);
  EXPECT_EQ(SliceOp(r, own, "a"), own);
  // An element of a list under a hidden path stays hidden.
  EXPECT_FALSE(SliceOp(r, Set({"hands", "b", int64_t{0}}, 5), "a").has_value());
}

TEST(RealmSlicing, ASetOfASubtreeIsTrimmed) {
  Rules r = Parse(kReadRules);
  Op set = Set({"players", "a"},
               Json::parse(R"({"name": "A", "private": {"pin": 7}})"));
  std::optional<Op> for_b = SliceOp(r, set, "b");
  ASSERT_TRUE(for_b.has_value());
  EXPECT_EQ(for_b->path, set.path);
  EXPECT_EQ(for_b->value, Json::parse(R"({"name": "A"})"));
  EXPECT_EQ(SliceOp(r, set, "a"), set);

  Op root = Set({}, Json::parse(R"({"secret": 1, "vault": 2, "open": 3})"));
  EXPECT_EQ(SliceOp(r, root, "a")->value, Json::parse(R"({"open": 3})"));
}

TEST(RealmSlicing, AppendedValuesAreTrimmedAndHiddenElementsKeepTheirSlot) {
  Rules r = Parse(kReadRules);
  std::optional<Op> chat = SliceOp(
      r, Append({"chat"}, Json::parse(R"({"t": "hi", "ip": "1.2"})")), "a");
  ASSERT_TRUE(chat.has_value());
  EXPECT_EQ(chat->kind, OpKind::kAppend);
  EXPECT_EQ(chat->value, Json::parse(R"({"t": "hi"})"));

  // log/* is hidden, but the reader's list keeps one slot per element.
  EXPECT_EQ(SliceOp(r, Append({"log"}, "secret line"), "a"),
            Append({"log"}, nullptr));
  EXPECT_EQ(SliceOp(r, Set({"log", int64_t{1}}, "secret"), "a"),
            Set({"log", int64_t{1}}, nullptr));
  EXPECT_EQ(SliceOp(r, Delete({"log", int64_t{0}}), "a"),
            Delete({"log", int64_t{0}}));
  // Appending inside a hidden element has no slot to keep.
  EXPECT_FALSE(SliceOp(r, Append({"log", int64_t{0}}, 1), "a").has_value());
}

TEST(RealmRulePaths, TextEscapesSlashesAndNamesTheRoot) {
  EXPECT_EQ(RulePathText({}), "(root)");
  EXPECT_EQ(RulePathText({"a/b", int64_t{2}, "c~"}), "a~1b/2/c~0");
}

}  // namespace
}  // namespace tessera::realm
