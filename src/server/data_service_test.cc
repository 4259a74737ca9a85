// The admin data API (data_service.h) over the real SQLite data store: every
// route, the data scopes, the errors a caller sees, paging, filters, the
// change feed, on_changes, and the boot refusing a non-additive schema.
#include "server/data_service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data/schema.h"
#include "store/store.h"
#include "store/test_util.h"

namespace tessera::server {
namespace {

using json = nlohmann::json;

constexpr char kSchema[] = R"({"types": [
  {"name": "Character", "owner": "userId",
   "fields": [{"name": "userId", "type": "string", "required": true},
              {"name": "name", "type": "string", "required": true},
              {"name": "hp", "type": "int", "default": 100}],
   "indexes": [{"field": "name", "unique": true}]},
  {"name": "Item", "fields": [{"name": "kind", "type": "string"}]}]})";

data::DataSchema Schema(const std::string& text = kSchema) {
  auto schema = data::ParseDataSchema(text, "test: data");
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  return schema.ok() ? schema.value() : data::DataSchema{};
}

std::string Encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : text) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.') {
      out.push_back(static_cast<char>(ch));
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 0xF];
    }
  }
  return out;
}

class DataServiceTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(Schema()); }

  void Open(const data::DataSchema& schema) {
    service_.reset();
    auto store = store::OpenDataStore("sqlite:" + dir_.File("x.db"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    DataServiceOptions options;
    auto tokens = ApiTokens::Parse(
        "manage_data=md,view_data=vd,manage_compute=mc", "admin");
    ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
    options.tokens = std::move(tokens).value();
    options.schema = schema;
    options.wall_clock = &clock_;
    options.on_changes = [this](const std::vector<data::ChangeEvent>& e) {
      seen_.insert(seen_.end(), e.begin(), e.end());
    };
    service_ = std::make_unique<DataService>(std::move(store).value(),
                                             std::move(options));
    start_ = service_->Start();
  }

  net::HttpResponse Call(const std::string& method, const std::string& target,
                         const std::string& body = "",
                         const std::string& token = "md") {
    net::HttpRequest r;
    r.method = method;
    r.target = target;
    r.body = body;
    if (!token.empty()) r.headers["authorization"] = "Bearer " + token;
    return service_->Handle(r);
  }

  // The JSON body of a call that must answer `status`.
  json Expect(int status, const std::string& method, const std::string& target,
              const std::string& body = "", const std::string& token = "md") {
    net::HttpResponse r = Call(method, target, body, token);
    EXPECT_EQ(r.status, status) << method << " " << target << ": " << r.body;
    json out = json::parse(r.body, nullptr, false);
    EXPECT_FALSE(out.is_discarded()) << r.body;
    return out;
  }

  json Insert(const std::string& id, const std::string& name,
              const std::string& user = "u1", int hp = 100) {
    return Expect(
        201, "POST", "/api/data/Character",
        json{{"id", id},
             {"fields", {{"name", name}, {"userId", user}, {"hp", hp}}}}
            .dump())["row"];
  }

  std::vector<std::string> Ids(const json& list) {
    std::vector<std::string> ids;
    for (const json& row : list["rows"]) ids.push_back(row["id"]);
    return ids;
  }

  store::testing::ScratchDir dir_;
  FakeWallClock clock_{1'700'000'000'000'000};
  std::vector<data::ChangeEvent> seen_;
  Status start_;
  std::unique_ptr<DataService> service_;
};

TEST_F(DataServiceTest, StartAppliesTheSchemaAndGetShowsIt) {
  ASSERT_TRUE(start_.ok()) << start_.ToString();
  json schema = Expect(200, "GET", "/api/data", "", "vd");
  ASSERT_EQ(schema["types"].size(), 2u);
  EXPECT_EQ(schema["types"][0]["name"], "Character");
  EXPECT_EQ(schema["types"][0]["owner"], "userId");
  EXPECT_EQ(schema["types"][0]["fields"][2],
            (json{{"name", "hp"}, {"type", "int"}, {"default", 100}}));
  EXPECT_EQ(service_->store().schema().types.size(), 2u);
}

TEST_F(DataServiceTest, CreateReadUpdateDelete) {
  ASSERT_TRUE(start_.ok()) << start_.ToString();
  json created =
      Expect(201, "POST", "/api/data/Character",
             R"({"id": "c1", "fields": {"name": "Ann", "userId": "u1"}})");
  EXPECT_EQ(created["row"]["id"], "c1");
  EXPECT_EQ(created["row"]["hp"], 100);  // the default
  EXPECT_EQ(created["row"]["version"], 1);

  json got = Expect(200, "GET", "/api/data/Character/c1", "", "vd");
  EXPECT_EQ(got["row"]["name"], "Ann");

  json patched =
      Expect(200, "PATCH", "/api/data/Character/c1", R"({"set": {"hp": 7}})");
  EXPECT_EQ(patched["row"]["hp"], 7);
  EXPECT_EQ(patched["row"]["version"], 2);
  EXPECT_EQ(Expect(200, "GET", "/api/data/Character/c1")["row"]["hp"], 7);

  EXPECT_EQ(Expect(200, "DELETE", "/api/data/Character/c1"),
            (json{{"deleted", true}}));
  json gone = Expect(404, "GET", "/api/data/Character/c1");
  EXPECT_EQ(gone["code"], "ROW_NOT_FOUND");
  EXPECT_EQ(Expect(404, "DELETE", "/api/data/Character/c1")["code"],
            "ROW_NOT_FOUND");

  // Without an id the store makes one.
  json generated = Expect(201, "POST", "/api/data/Item", R"({"fields": {}})");
  EXPECT_EQ(generated["row"]["id"].get<std::string>().size(), 20u);
  EXPECT_TRUE(generated["row"]["kind"].is_null());
}

TEST_F(DataServiceTest, ScopesGuardReadsAndWrites) {
  ASSERT_TRUE(start_.ok());
  net::HttpResponse none = Call("GET", "/api/data", "", "");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.body.find("view_data"), std::string::npos) << none.body;
  EXPECT_EQ(Call("GET", "/api/data", "", "wrong").status, 401);
  json compute_only = Expect(403, "GET", "/api/data/Character", "", "mc");
  EXPECT_EQ(compute_only["message"], "this token lacks the view_data scope");
  json view_write = Expect(403, "POST", "/api/data/Item", "{}", "vd");
  EXPECT_EQ(view_write["message"], "this token lacks the manage_data scope");
  Expect(200, "GET", "/api/data/Character", "", "md");  // manage implies view
  Expect(200, "GET", "/api/data/Character", "", "admin");
  Expect(201, "POST", "/api/data/Item", "{}", "admin");
  // The method is told before the token is asked for.
  net::HttpResponse put = Call("PUT", "/api/data/Item/x", "{}", "");
  EXPECT_EQ(put.status, 405);
  EXPECT_NE(put.body.find("GET, PATCH, DELETE"), std::string::npos);
  EXPECT_EQ(Call("POST", "/api/data/_changes", "{}").status, 405);
  EXPECT_EQ(Call("GET", "/api/data/a/b/c").status, 404);
}

TEST_F(DataServiceTest, ErrorsCarryTheDataCodes) {
  ASSERT_TRUE(start_.ok());
  Insert("c1", "Ann");
  struct Case {
    int status;
    const char* method;
    std::string target;
    const char* body;
    const char* code;
  } cases[] = {
      {400, "POST", "/api/data/Character",
       R"({"fields": {"name": "B", "userId": "u", "hp": "x"}})", "BAD_VALUE"},
      {400, "POST", "/api/data/Character", R"({"fields": {"name": "B"}})",
       "BAD_VALUE"},  // userId is required
      {400, "POST", "/api/data/Character",
       R"({"fields": {"name": "B", "userId": "u", "mana": 1}})",
       "UNKNOWN_FIELD"},
      {400, "POST", "/api/data/Item", R"({"id": "a/b"})", "BAD_VALUE"},
      {400, "POST", "/api/data/Item", R"({"fields": [1]})", "invalid_argument"},
      {400, "POST", "/api/data/Item", R"({"feilds": {}})", "invalid_argument"},
      {400, "POST", "/api/data/Item", "{nope", "bad_json"},
      {400, "PATCH", "/api/data/Character/c1", R"({"hp": 3})",
       "invalid_argument"},
      {400, "PATCH", "/api/data/Character/c1", R"({"set": {"hp": 1.5}})",
       "BAD_VALUE"},
      {404, "PATCH", "/api/data/Character/zz", R"({"set": {"hp": 1}})",
       "ROW_NOT_FOUND"},
      {404, "GET", "/api/data/Monster", "", "UNKNOWN_TYPE"},
      {404, "POST", "/api/data/Monster", "{}", "UNKNOWN_TYPE"},
      {409, "POST", "/api/data/Character",
       R"({"id": "c1", "fields": {"name": "Other", "userId": "u"}})",
       "ROW_EXISTS"},
      {409, "POST", "/api/data/Character",
       R"({"id": "c2", "fields": {"name": "Ann", "userId": "u"}})",
       "UNIQUE_VIOLATION"},
      {400, "GET", "/api/data/Character?where=" + Encode(R"({"mp": 1})"), "",
       "UNKNOWN_FIELD"},
      {400, "GET",
       "/api/data/Character?where=" + Encode(R"({"hp": {"gte": 1}})"), "",
       "BAD_FILTER"},
      {400, "GET", "/api/data/Item?owner=u1", "", "BAD_FILTER"},
      {400, "GET", "/api/data/Character?limit=0", "", "invalid_argument"},
      {400, "GET", "/api/data/Character?limit=1001", "", "invalid_argument"},
      {400, "GET", "/api/data/Character?sort=name", "", "invalid_argument"},
      {400, "GET", "/api/data/_changes?after=x", "", "invalid_argument"},
  };
  for (const Case& c : cases) {
    json out = Expect(c.status, c.method, c.target, c.body);
    EXPECT_EQ(out["code"], c.code)
        << c.method << " " << c.target << " " << c.body << ": " << out.dump();
    EXPECT_FALSE(out["message"].get<std::string>().empty());
  }
  json unknown = Expect(404, "GET", "/api/data/Monster");
  EXPECT_EQ(unknown["message"],
            "UNKNOWN_TYPE: no data type \"Monster\" (types: Character, Item)");
  json bad = Expect(400, "POST", "/api/data/Character",
                    R"({"fields": {"name": "B", "userId": "u", "hp": "x"}})");
  EXPECT_EQ(bad["message"],
            "BAD_VALUE: Character.hp: expected int, got string \"x\"");
  // None of the refused writes changed anything.
  EXPECT_EQ(Ids(Expect(200, "GET", "/api/data/Character")),
            std::vector<std::string>{"c1"});
}

TEST_F(DataServiceTest, PagesWithCursors) {
  ASSERT_TRUE(start_.ok());
  for (const char* id : {"e", "b", "d", "a", "c"}) {
    Insert(id, std::string("n") + id);
  }
  json first = Expect(200, "GET", "/api/data/Character?limit=2", "", "vd");
  EXPECT_EQ(Ids(first), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(first["nextCursor"], "b");
  json second = Expect(200, "GET", "/api/data/Character?limit=2&cursor=b");
  EXPECT_EQ(Ids(second), (std::vector<std::string>{"c", "d"}));
  ASSERT_EQ(second["nextCursor"], "d");
  json last = Expect(200, "GET", "/api/data/Character?limit=2&cursor=d");
  EXPECT_EQ(Ids(last), (std::vector<std::string>{"e"}));
  EXPECT_EQ(last["nextCursor"], "");
  EXPECT_EQ(Ids(Expect(200, "GET", "/api/data/Character")).size(), 5u);
}

TEST_F(DataServiceTest, FiltersAndOwner) {
  ASSERT_TRUE(start_.ok());
  Insert("a", "Ann", "u1", 10);
  Insert("b", "Bob", "u2", 60);
  Insert("c", "Cy", "u1", 90);
  EXPECT_EQ(Ids(Expect(200, "GET",
                       "/api/data/Character?where=" +
                           Encode(R"({"hp": {"gt": 50}})"))),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(Ids(Expect(200, "GET", "/api/data/Character?owner=u1")),
            (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(Ids(Expect(200, "GET",
                       "/api/data/Character?owner=u1&where=" +
                           Encode(R"({"hp": {"lt": 50}})"))),
            (std::vector<std::string>{"a"}));
  EXPECT_EQ(Ids(Expect(200, "GET",
                       "/api/data/Character?where=" +
                           Encode(R"({"name": {"in": ["Bob", "Cy"]}})"))),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(
      Ids(Expect(200, "GET", "/api/data/Character?owner=nobody")).empty());
}

TEST_F(DataServiceTest, WritesRecordChangesAndReachOnChanges) {
  ASSERT_TRUE(start_.ok());
  Insert("c1", "Ann");
  Expect(200, "PATCH", "/api/data/Character/c1", R"({"set": {"hp": 5}})");
  // A set that changes nothing records nothing.
  Expect(200, "PATCH", "/api/data/Character/c1", R"({"set": {"hp": 5}})");
  Expect(200, "DELETE", "/api/data/Character/c1");
  // Refused writes reach nobody.
  Expect(404, "DELETE", "/api/data/Character/c1");

  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_EQ(seen_[0].op, data::ChangeOp::kCreated);
  EXPECT_EQ(seen_[0].origin, "admin");
  EXPECT_EQ(json::parse(seen_[0].row_json)["name"], "Ann");
  EXPECT_EQ(seen_[1].op, data::ChangeOp::kUpdated);
  ASSERT_EQ(seen_[1].fields.size(), 1u);
  EXPECT_EQ(seen_[1].fields[0].field, "hp");
  EXPECT_EQ(seen_[1].fields[0].old_json, "100");
  EXPECT_EQ(seen_[1].fields[0].new_json, "5");
  EXPECT_EQ(seen_[2].op, data::ChangeOp::kDeleted);
  EXPECT_GT(seen_[0].seq, 0);
  EXPECT_LT(seen_[0].seq, seen_[1].seq);

  json changes = Expect(200, "GET", "/api/data/_changes", "", "vd");
  ASSERT_EQ(changes["changes"].size(), 3u);
  EXPECT_EQ(changes["changes"][0]["op"], "created");
  EXPECT_EQ(changes["changes"][0]["type"], "Character");
  EXPECT_EQ(changes["changes"][0]["id"], "c1");
  EXPECT_EQ(changes["changes"][0]["origin"], "admin");
  EXPECT_EQ(changes["changes"][0]["row"]["name"], "Ann");
  EXPECT_EQ(
      changes["changes"][1]["fields"],
      (json::array({{{"field", "hp"}, {"oldValue", 100}, {"newValue", 5}}})));
  EXPECT_EQ(changes["changes"][2]["op"], "deleted");
  EXPECT_EQ(changes["lastSeq"], seen_[2].seq);

  int64_t after = changes["changes"][0]["seq"];
  json rest = Expect(
      200, "GET", "/api/data/_changes?limit=1&after=" + std::to_string(after));
  ASSERT_EQ(rest["changes"].size(), 1u);
  EXPECT_EQ(rest["changes"][0]["op"], "updated");
  EXPECT_EQ(rest["lastSeq"], seen_[1].seq);
  json end = Expect(200, "GET",
                    "/api/data/_changes?after=" + std::to_string(seen_[2].seq));
  EXPECT_TRUE(end["changes"].empty());
  EXPECT_EQ(end["lastSeq"], seen_[2].seq);

  // set_on_changes replaces the receiver.
  std::vector<data::ChangeEvent> later;
  service_->set_on_changes(
      [&](const std::vector<data::ChangeEvent>& e) { later = e; });
  Expect(201, "POST", "/api/data/Item", R"({"id": "i1"})");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].type, "Item");
  EXPECT_EQ(seen_.size(), 3u);
}

TEST_F(DataServiceTest, AdditiveChangesApplyAtTheNextBoot) {
  ASSERT_TRUE(start_.ok());
  Insert("c1", "Ann");
  data::DataSchema more = Schema(R"({"types": [
    {"name": "Character", "owner": "userId",
     "fields": [{"name": "userId", "type": "string", "required": true},
                {"name": "name", "type": "string", "required": true},
                {"name": "hp", "type": "int", "default": 100},
                {"name": "level", "type": "int", "default": 1}],
     "indexes": [{"field": "name", "unique": true}, {"field": "hp"}]},
    {"name": "Item", "fields": [{"name": "kind", "type": "string"}]},
    {"name": "Guild", "fields": []}]})");
  Open(more);
  ASSERT_TRUE(start_.ok()) << start_.ToString();
  json row = Expect(200, "GET", "/api/data/Character/c1")["row"];
  EXPECT_EQ(row["name"], "Ann");
  Expect(201, "POST", "/api/data/Guild", R"({"id": "g"})");
  Expect(200, "PATCH", "/api/data/Character/c1", R"({"set": {"level": 3}})");
}

TEST_F(DataServiceTest, ANonAdditiveChangeStopsTheBootNamingIt) {
  ASSERT_TRUE(start_.ok());
  Open(Schema(R"({"types": [
    {"name": "Character", "owner": "userId",
     "fields": [{"name": "userId", "type": "string", "required": true},
                {"name": "name", "type": "string", "required": true},
                {"name": "hp", "type": "float", "default": 100}],
     "indexes": [{"field": "name", "unique": true}]}]})"));
  ASSERT_FALSE(start_.ok());
  EXPECT_EQ(start_.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(start_.message().find("data schema change refused"),
            std::string::npos)
      << start_.message();
  EXPECT_NE(start_.message().find("Character.hp: type int -> float"),
            std::string::npos)
      << start_.message();
  EXPECT_NE(start_.message().find("Item: type removed"), std::string::npos)
      << start_.message();
}

}  // namespace
}  // namespace tessera::server
