// The DataStore conformance suite, part 1: the fixture and rows (insert,
// get, update, delete, lookup, list, unique indexes). Part 2
// (data_store_conformance_txn.cc): transactions, scopes, change events,
// keyed calls, prune, schema changes and filters on random rows.
#include "data/data_store_conformance.h"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "data/schema.h"

namespace tessera::data {

using conformance::CodeOf;
using conformance::FieldOf;
using nlohmann::json;

void PrintTo(const DataStoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string DataStoreBackendName(
    const ::testing::TestParamInfo<DataStoreBackend>& info) {
  return info.param.name;
}

namespace conformance {

std::string CodeOf(const Status& status) {
  return std::string(ErrorCodeOf(status.message()));
}

std::string FieldOf(const Row& row, const std::string& field) {
  json fields = json::parse(row.fields_json, nullptr, false);
  if (!fields.is_object() || !fields.contains(field)) return "null";
  return fields[field].dump();
}

}  // namespace conformance

DataSchema DataStoreConformanceTest::TestSchema() {
  EntityType character;
  character.name = "Character";
  character.fields = {
      {"name", FieldType::kString, true, ""},
      {"hp", FieldType::kInt, false, "100"},
      {"speed", FieldType::kFloat, false, ""},
      {"alive", FieldType::kBool, false, "true"},
      {"bag", FieldType::kJson, false, ""},
      {"tag", FieldType::kString, false, ""},
      {"level", FieldType::kInt, false, ""},
      {"owner", FieldType::kString, false, ""},
  };
  character.indexes = {{"name", true}, {"tag", true}, {"level", false}};
  character.owner = "owner";
  EntityType item;
  item.name = "Item";
  item.fields = {{"kind", FieldType::kString, true, ""},
                 {"count", FieldType::kInt, false, ""}};
  DataSchema schema;
  schema.types = {character, item};
  return schema;
}

void DataStoreConformanceTest::SetUp() {
  store_ = GetParam().make(&clock_);
  ASSERT_NE(store_, nullptr);
  EXPECT_TRUE(store_->schema().empty());
  Status st = store_->ApplySchema(TestSchema());
  ASSERT_TRUE(st.ok()) << st.ToString();
}

std::unique_ptr<DataTxn> DataStoreConformanceTest::BeginWrite() {
  Result<std::unique_ptr<DataTxn>> txn = store_->Begin(TxnMode::kWrite, 5000);
  EXPECT_TRUE(txn.ok()) << txn.status().ToString();
  return txn.ok() ? std::move(txn).value() : nullptr;
}

std::unique_ptr<DataTxn> DataStoreConformanceTest::BeginRead() {
  Result<std::unique_ptr<DataTxn>> txn = store_->Begin(TxnMode::kRead, 5000);
  EXPECT_TRUE(txn.ok()) << txn.status().ToString();
  return txn.ok() ? std::move(txn).value() : nullptr;
}

Row DataStoreConformanceTest::InsertCommitted(const std::string& type,
                                              const std::string& id,
                                              const std::string& fields_json) {
  std::unique_ptr<DataTxn> txn = BeginWrite();
  if (txn == nullptr) return Row();
  Result<Row> row = txn->Insert(type, id, fields_json, "admin");
  EXPECT_TRUE(row.ok()) << row.status().ToString();
  Result<std::vector<ChangeEvent>> events = txn->Commit();
  EXPECT_TRUE(events.ok()) << events.status().ToString();
  return row.ok() ? *row : Row();
}

std::optional<Row> DataStoreConformanceTest::ReadRow(const std::string& type,
                                                     const std::string& id) {
  std::unique_ptr<DataTxn> txn = BeginRead();
  if (txn == nullptr) return std::nullopt;
  Result<std::optional<Row>> row = txn->Get(type, id);
  EXPECT_TRUE(row.ok()) << row.status().ToString();
  return row.ok() ? *row : std::nullopt;
}

namespace {

TEST_P(DataStoreConformanceTest, AppliedSchemaReadsBack) {
  EXPECT_EQ(DataSchemaJson(store_->schema()), DataSchemaJson(TestSchema()));
  // Applying it again changes nothing and is allowed.
  EXPECT_TRUE(store_->ApplySchema(TestSchema()).ok());
  EXPECT_EQ(DataSchemaJson(store_->schema()), DataSchemaJson(TestSchema()));
}

TEST_P(DataStoreConformanceTest, InsertFillsDefaultsAndGetReadsItBack) {
  clock_.Advance(5000);
  Row row = InsertCommitted(
      "Character", "c1",
      R"({"name":"Ann","speed":1.5,"bag":{"b":[1,2],"a":null},"level":3})");
  EXPECT_EQ(row.type, "Character");
  EXPECT_EQ(row.id, "c1");
  EXPECT_EQ(row.version, 1);
  EXPECT_EQ(row.created_ms, kStartMs + 5);
  EXPECT_EQ(row.updated_ms, kStartMs + 5);
  EXPECT_EQ(json::parse(row.fields_json),
            json::parse(R"({"name":"Ann","hp":100,"speed":1.5,"alive":true,
                            "bag":{"a":null,"b":[1,2]},"level":3})"));
  std::optional<Row> read = ReadRow("Character", "c1");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->id, "c1");
  EXPECT_EQ(read->version, 1);
  EXPECT_EQ(read->created_ms, kStartMs + 5);
  EXPECT_EQ(json::parse(read->fields_json), json::parse(row.fields_json));
  EXPECT_FALSE(ReadRow("Character", "nobody").has_value());
}

TEST_P(DataStoreConformanceTest, InsertWithoutIdGeneratesOne) {
  Row a = InsertCommitted("Item", "", R"({"kind":"sword"})");
  Row b = InsertCommitted("Item", "", R"({"kind":"shield"})");
  EXPECT_EQ(a.id.size(), 20u) << a.id;
  EXPECT_NE(a.id, b.id);
  std::optional<Row> read = ReadRow("Item", a.id);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(FieldOf(*read, "kind"), "\"sword\"");
  EXPECT_EQ(FieldOf(*read, "count"), "null");
}

TEST_P(DataStoreConformanceTest, ValuesOfEveryTypeRoundTrip) {
  const std::string big(60 * 1024, 'x');
  json fields = {{"name", "Zo\xc3\xab \"q\" \\ \n"},
                 {"hp", -(int64_t{1} << 53)},
                 {"speed", 0.1},
                 {"alive", false},
                 {"bag", {{"list", {1, "two", nullptr, true, 2.5}}}},
                 {"tag", big}};
  Row row = InsertCommitted("Character", "v", fields.dump());
  std::optional<Row> read = ReadRow("Character", "v");
  ASSERT_TRUE(read.has_value());
  json got = json::parse(read->fields_json);
  EXPECT_EQ(got["name"], fields["name"]);
  EXPECT_EQ(got["hp"].get<int64_t>(), -(int64_t{1} << 53));
  EXPECT_EQ(got["speed"].get<double>(), 0.1);
  EXPECT_EQ(got["alive"], false);
  EXPECT_EQ(got["bag"], fields["bag"]);
  EXPECT_EQ(got["tag"].get<std::string>().size(), big.size());
  EXPECT_EQ(json::parse(row.fields_json), got);
}

TEST_P(DataStoreConformanceTest, InsertErrorsCarryTheirCodes) {
  InsertCommitted("Character", "c1", R"({"name":"Ann"})");
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  auto fails = [&](const std::string& type, const std::string& id,
                   const std::string& fields, StatusCode code,
                   const std::string& data_code) {
    Result<Row> r = txn->Insert(type, id, fields, "admin");
    ASSERT_FALSE(r.ok()) << type << " " << id << " " << fields;
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    EXPECT_EQ(CodeOf(r.status()), data_code) << r.status().ToString();
  };
  fails("Character", "c1", R"({"name":"Other"})", StatusCode::kAlreadyExists,
        codes::kRowExists);
  fails("Monster", "m", R"({})", StatusCode::kNotFound, codes::kUnknownType);
  fails("Character", "c2", R"({"name":"B","mana":1})",
        StatusCode::kInvalidArgument, codes::kUnknownField);
  fails("Character", "c2", R"({"name":"B","hp":"lots"})",
        StatusCode::kInvalidArgument, codes::kBadValue);
  fails("Character", "c2", R"({"hp":3})", StatusCode::kInvalidArgument,
        codes::kBadValue);  // name is required
  fails("Character", "bad id!", R"({"name":"B"})", StatusCode::kInvalidArgument,
        codes::kBadValue);
  fails("Character", "c2", R"({"name":"Ann"})", StatusCode::kAlreadyExists,
        codes::kUniqueViolation);
  // The failures left the transaction usable and recorded nothing.
  EXPECT_TRUE(txn->changes().empty());
  ASSERT_TRUE(txn->Insert("Character", "c2", R"({"name":"B"})", "admin").ok());
  Result<std::vector<ChangeEvent>> events = txn->Commit();
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].id, "c2");
  EXPECT_EQ(FieldOf(*ReadRow("Character", "c1"), "name"), "\"Ann\"");
}

TEST_P(DataStoreConformanceTest, UpdateChangesFieldsAndTheVersion) {
  InsertCommitted("Character", "c1", R"({"name":"Ann","speed":2.0})");
  clock_.Advance(7000);
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  Result<Row> row =
      txn->Update("Character", "c1", R"({"hp":90,"speed":null,"name":"Ann"})",
                  "module:shop");
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->version, 2);
  EXPECT_EQ(row->created_ms, kStartMs);
  EXPECT_EQ(row->updated_ms, kStartMs + 7);
  EXPECT_EQ(FieldOf(*row, "hp"), "90");
  EXPECT_EQ(FieldOf(*row, "speed"), "null");
  ASSERT_EQ(txn->changes().size(), 1u);
  const ChangeEvent& e = txn->changes()[0];
  EXPECT_EQ(e.op, ChangeOp::kUpdated);
  EXPECT_EQ(e.origin, "module:shop");
  EXPECT_EQ(e.row_json, "");
  // Only the fields whose value changed, old and new.
  ASSERT_EQ(e.fields.size(), 2u);
  std::set<std::string> seen;
  for (const FieldChange& f : e.fields) {
    seen.insert(f.field);
    if (f.field == "hp") {
      EXPECT_EQ(f.old_json, "100");
      EXPECT_EQ(f.new_json, "90");
    } else {
      EXPECT_EQ(f.field, "speed");
      EXPECT_EQ(json::parse(f.old_json), json(2.0));
      EXPECT_EQ(f.new_json, "null");
    }
  }
  EXPECT_EQ(seen.size(), 2u);

  // A set that changes nothing keeps the version and records nothing.
  Result<Row> same = txn->Update("Character", "c1", R"({"hp":90})", "admin");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->version, 2);
  EXPECT_EQ(txn->changes().size(), 1u);

  Result<Row> missing = txn->Update("Character", "zz", R"({"hp":1})", "admin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(CodeOf(missing.status()), codes::kRowNotFound);
  Result<Row> bad = txn->Update("Character", "c1", R"({"name":null})", "admin");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(CodeOf(bad.status()), codes::kBadValue);
  Result<Row> unknown = txn->Update("Character", "c1", R"({"x":1})", "admin");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(CodeOf(unknown.status()), codes::kUnknownField);
  ASSERT_TRUE(txn->Commit().ok());

  std::optional<Row> read = ReadRow("Character", "c1");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->version, 2);
  EXPECT_EQ(read->updated_ms, kStartMs + 7);
  EXPECT_EQ(FieldOf(*read, "hp"), "90");
  EXPECT_EQ(FieldOf(*read, "speed"), "null");
}

TEST_P(DataStoreConformanceTest, DeleteRemovesTheRowOnce) {
  Row row = InsertCommitted("Character", "c1", R"({"name":"Ann"})");
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  Result<bool> gone = txn->Delete("Character", "c1", "admin");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_TRUE(*gone);
  Result<bool> again = txn->Delete("Character", "c1", "admin");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  ASSERT_EQ(txn->changes().size(), 1u);
  EXPECT_EQ(txn->changes()[0].op, ChangeOp::kDeleted);
  EXPECT_EQ(json::parse(txn->changes()[0].row_json),
            json::parse(RowJson(*TestSchema().Find("Character"), row)));
  Result<bool> unknown = txn->Delete("Monster", "c1", "admin");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(CodeOf(unknown.status()), codes::kUnknownType);
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_FALSE(ReadRow("Character", "c1").has_value());
  // The id is free again.
  InsertCommitted("Character", "c1", R"({"name":"Ann"})");
}

TEST_P(DataStoreConformanceTest, UniqueIndexesRefuseASecondValueButNotNulls) {
  InsertCommitted("Character", "a", R"({"name":"Ann","tag":"x"})");
  InsertCommitted("Character", "b", R"({"name":"Bob"})");
  InsertCommitted("Character", "c", R"({"name":"Cid"})");  // two null tags
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  Result<Row> taken = txn->Update("Character", "b", R"({"tag":"x"})", "admin");
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(CodeOf(taken.status()), codes::kUniqueViolation);
  EXPECT_NE(taken.status().message().find("tag"), std::string::npos)
      << taken.status().message();
  EXPECT_TRUE(txn->changes().empty());
  // Freeing the value first lets another row take it.
  ASSERT_TRUE(txn->Update("Character", "a", R"({"tag":null})", "admin").ok());
  ASSERT_TRUE(txn->Update("Character", "b", R"({"tag":"x"})", "admin").ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(FieldOf(*ReadRow("Character", "b"), "tag"), "\"x\"");
  EXPECT_EQ(FieldOf(*ReadRow("Character", "a"), "tag"), "null");
}

TEST_P(DataStoreConformanceTest, LookupUsesIndexedFields) {
  InsertCommitted("Character", "b", R"({"name":"Bob","level":2,"owner":"u1"})");
  InsertCommitted("Character", "a", R"({"name":"Ann","level":2,"owner":"u1"})");
  InsertCommitted("Character", "c", R"({"name":"Cid","level":5})");
  std::unique_ptr<DataTxn> txn = BeginRead();
  ASSERT_NE(txn, nullptr);
  auto lookup = [&](const std::string& field, const std::string& value) {
    Result<std::optional<Row>> r = txn->Lookup("Character", field, value);
    EXPECT_TRUE(r.ok()) << field << " " << r.status().ToString();
    return r.ok() && r->has_value() ? (*r)->id : std::string("-");
  };
  EXPECT_EQ(lookup("name", "\"Cid\""), "c");
  EXPECT_EQ(lookup("level", "2"), "a");  // the first by id
  EXPECT_EQ(lookup("owner", "\"u1\""), "a");
  EXPECT_EQ(lookup("name", "\"Nobody\""), "-");
  EXPECT_EQ(lookup("id", "\"b\""), "b");
  Result<std::optional<Row>> no_index = txn->Lookup("Character", "hp", "100");
  ASSERT_FALSE(no_index.ok());
  EXPECT_EQ(CodeOf(no_index.status()), codes::kNoIndex);
  Result<std::optional<Row>> unknown = txn->Lookup("Character", "mana", "1");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(CodeOf(unknown.status()), codes::kUnknownField);
  Result<std::optional<Row>> bad = txn->Lookup("Character", "level", "\"x\"");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(CodeOf(bad.status()), codes::kBadValue);
  Result<std::optional<Row>> not_json = txn->Lookup("Character", "level", "{");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(CodeOf(not_json.status()), codes::kBadValue);
  Result<std::optional<Row>> type = txn->Lookup("Monster", "name", "\"a\"");
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(CodeOf(type.status()), codes::kUnknownType);
}

TEST_P(DataStoreConformanceTest, ListPagesByIdWithACursor) {
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  std::vector<std::string> ids;
  for (int i = 0; i < 25; ++i) {
    std::string id = "i" + std::to_string(100 + (i * 37) % 25);
    ids.push_back(id);
    ASSERT_TRUE(
        txn->Insert(
               "Item", id,
               json({{"kind", i % 2 ? "odd" : "even"}, {"count", i}}).dump(),
               "admin")
            .ok());
  }
  ASSERT_TRUE(txn->Commit().ok());
  std::sort(ids.begin(), ids.end());

  std::unique_ptr<DataTxn> read = BeginRead();
  ASSERT_NE(read, nullptr);
  std::vector<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    Result<Page> page = read->List("Item", Filter(), cursor, 10);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_LE(page->rows.size(), 10u);
    for (const Row& r : page->rows) seen.push_back(r.id);
    cursor = page->next_cursor;
    if (!cursor.empty()) {
      EXPECT_EQ(cursor, page->rows.back().id);
    }
    ASSERT_LT(++pages, 10);
  } while (!cursor.empty());
  EXPECT_EQ(seen, ids);
  EXPECT_EQ(pages, 3);
  // A page that ends exactly at the last row says so.
  Result<Page> all = read->List("Item", Filter(), "", 25);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->rows.size(), 25u);
  EXPECT_EQ(all->next_cursor, "");

  Result<int64_t> count = read->Count("Item", Filter());
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 25);
  for (int64_t bad : {int64_t{0}, kMaxPageLimit + 1}) {
    Result<Page> page = read->List("Item", Filter(), "", bad);
    ASSERT_FALSE(page.ok()) << bad;
    EXPECT_EQ(CodeOf(page.status()), codes::kBadFilter);
  }
  Result<Page> type = read->List("Monster", Filter(), "", 10);
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(CodeOf(type.status()), codes::kUnknownType);
}

// Ids, cursors and string values come from callers: bytes no id has (a
// NUL, a byte of no UTF-8 character) find no row and page as their bytes
// order, a string with U+0000 is refused, and none of it breaks the
// transaction.
TEST_P(DataStoreConformanceTest, CallersBytesInIdsCursorsAndStrings) {
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  for (const char* id : {"a", "a-1", "a.b", "b"}) {
    ASSERT_TRUE(txn->Insert("Item", id, R"({"kind":"k"})", "admin").ok());
  }
  const std::string nul("a\0", 2);
  const std::string high = "a\xff";
  for (const std::string& id : {nul, high}) {
    Result<std::optional<Row>> row = txn->Get("Item", id);
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    EXPECT_FALSE(row->has_value());
    Result<bool> deleted = txn->Delete("Item", id, "admin");
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
    EXPECT_FALSE(*deleted);
    EXPECT_EQ(
        CodeOf(txn->Update("Item", id, R"({"count":1})", "admin").status()),
        codes::kRowNotFound);
    EXPECT_EQ(
        CodeOf(txn->Insert("Item", id, R"({"kind":"k"})", "admin").status()),
        codes::kBadValue);
  }
  auto ids_after = [&](const std::string& cursor) {
    std::vector<std::string> out;
    Result<Page> page = txn->List("Item", Filter(), cursor, 10);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (page.ok()) {
      for (const Row& r : page->rows) out.push_back(r.id);
    }
    return out;
  };
  EXPECT_EQ(ids_after(nul), (std::vector<std::string>{"a-1", "a.b", "b"}));
  EXPECT_EQ(ids_after(high), (std::vector<std::string>{"b"}));
  EXPECT_EQ(ids_after("a/"), (std::vector<std::string>{"b"}));
  EXPECT_EQ(ids_after("a,z"), (std::vector<std::string>{"a-1", "a.b", "b"}));
  Result<Row> with_nul =
      txn->Insert("Item", "n", R"({"kind":"x\u0000y"})", "admin");
  EXPECT_EQ(CodeOf(with_nul.status()), codes::kBadValue);
  Filter by_kind;
  by_kind.conditions.push_back({"kind", FilterOp::kEq, {R"("x\u0000y")"}});
  EXPECT_EQ(CodeOf(txn->Count("Item", by_kind).status()), codes::kBadFilter);
  EXPECT_EQ(CodeOf(txn->Lookup("Item", "id", R"("a\u0000")").status()),
            codes::kBadValue);
  Result<std::optional<Row>> by_id = txn->Lookup("Item", "id", R"("a\u00ff")");
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_FALSE(by_id->has_value());
  // The transaction goes on and commits everything it did.
  ASSERT_TRUE(txn->Commit().ok());
  std::unique_ptr<DataTxn> read = BeginRead();
  ASSERT_NE(read, nullptr);
  Result<int64_t> count = read->Count("Item", Filter());
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 4);
}

}  // namespace
}  // namespace tessera::data
