// The DataStore conformance suite, part 2: transactions (isolation,
// rollback, the writer's wait), nested scopes, change events, keyed calls,
// reads/writes, prune, schema changes and filters against data::Matches.
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "data/data_store_conformance.h"
#include "data/schema.h"

namespace tessera::data {
namespace {

using conformance::CodeOf;
using conformance::FieldOf;
using nlohmann::json;

TEST_P(DataStoreConformanceTest, ReadsSeeOnlyWhatCommittedBeforeTheirBegin) {
  InsertCommitted("Item", "old", R"({"kind":"a"})");
  std::unique_ptr<DataTxn> writer = BeginWrite();
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Insert("Item", "new", R"({"kind":"b"})", "admin").ok());
  ASSERT_TRUE(writer->Update("Item", "old", R"({"count":7})", "admin").ok());
  // The writer sees its own work; a reader begun meanwhile does not, and
  // does not wait for the writer.
  Result<std::optional<Row>> own = writer->Get("Item", "new");
  ASSERT_TRUE(own.ok() && own->has_value());
  std::unique_ptr<DataTxn> before = BeginRead();
  ASSERT_NE(before, nullptr);
  Result<std::optional<Row>> unseen = before->Get("Item", "new");
  ASSERT_TRUE(unseen.ok()) << unseen.status().ToString();
  EXPECT_FALSE(unseen->has_value());
  ASSERT_TRUE(writer->Commit().ok());
  // Still its snapshot after the commit.
  Result<int64_t> count = before->Count("Item", Filter());
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 1);
  Result<std::optional<Row>> old = before->Get("Item", "old");
  ASSERT_TRUE(old.ok() && old->has_value());
  EXPECT_EQ(FieldOf(**old, "count"), "null");
  ASSERT_TRUE(before->Commit().ok());
  // A reader begun after the commit sees it all.
  std::unique_ptr<DataTxn> after = BeginRead();
  ASSERT_NE(after, nullptr);
  Result<int64_t> now = after->Count("Item", Filter());
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(*now, 2);
}

TEST_P(DataStoreConformanceTest, ReadTransactionsCannotWrite) {
  std::unique_ptr<DataTxn> txn = BeginRead();
  ASSERT_NE(txn, nullptr);
  EXPECT_EQ(
      txn->Insert("Item", "x", R"({"kind":"a"})", "admin").status().code(),
      StatusCode::kFailedPrecondition);
  EXPECT_EQ(txn->Update("Item", "x", "{}", "admin").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(txn->Delete("Item", "x", "admin").status().code(),
            StatusCode::kFailedPrecondition);
  StoredCall call{"k", "m.f", "h", true, "null", "", 0};
  EXPECT_EQ(txn->PutCall(call).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(txn->Savepoint().code(), StatusCode::kFailedPrecondition);
  Result<std::vector<ChangeEvent>> done = txn->Commit();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->empty());
  // After its end a transaction refuses everything.
  EXPECT_EQ(txn->Get("Item", "x").status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_P(DataStoreConformanceTest,
       ADestroyedTransactionRollsBackAndFreesTheWriter) {
  {
    std::unique_ptr<DataTxn> txn = BeginWrite();
    ASSERT_NE(txn, nullptr);
    ASSERT_TRUE(txn->Insert("Item", "x", R"({"kind":"a"})", "admin").ok());
    StoredCall call{"k", "m.f", "h", true, "1", "", 0};
    ASSERT_TRUE(txn->PutCall(call).ok());
  }
  EXPECT_FALSE(ReadRow("Item", "x").has_value());
  Result<std::vector<ChangeEvent>> changes = store_->Changes(0, 100);
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes->empty());
  Result<std::unique_ptr<DataTxn>> next = store_->Begin(TxnMode::kWrite, 0);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  Result<std::optional<StoredCall>> call = (*next)->GetCall("k");
  ASSERT_TRUE(call.ok());
  EXPECT_FALSE(call->has_value());
}

TEST_P(DataStoreConformanceTest, TheWriterIsOneAndWaitsAreBounded) {
  std::unique_ptr<DataTxn> first = BeginWrite();
  ASSERT_NE(first, nullptr);
  Result<std::unique_ptr<DataTxn>> busy = store_->Begin(TxnMode::kWrite, 20);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(CodeOf(busy.status()), codes::kUnavailable)
      << busy.status().message();
  // Readers do not wait.
  std::unique_ptr<DataTxn> reader = BeginRead();
  ASSERT_NE(reader, nullptr);
  // A writer waiting on another thread gets the writer once it is free,
  // and sees what the first one committed.
  ASSERT_TRUE(first->Insert("Item", "x", R"({"kind":"a"})", "admin").ok());
  bool second_ok = false;
  bool saw_x = false;
  std::thread waiter([&] {
    Result<std::unique_ptr<DataTxn>> t = store_->Begin(TxnMode::kWrite, 30000);
    second_ok = t.ok();
    if (!t.ok()) return;
    Result<std::optional<Row>> x = (*t)->Get("Item", "x");
    saw_x = x.ok() && x->has_value();
  });
  ASSERT_TRUE(first->Commit().ok());
  waiter.join();
  EXPECT_TRUE(second_ok);
  EXPECT_TRUE(saw_x);
}

TEST_P(DataStoreConformanceTest, NestedScopesRollBackAloneWithTheirEvents) {
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  EXPECT_EQ(txn->Release().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(txn->RollbackTo().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(txn->Insert("Item", "a", R"({"kind":"a"})", "admin").ok());
  ASSERT_TRUE(txn->Savepoint().ok());
  ASSERT_TRUE(txn->Insert("Item", "b", R"({"kind":"b"})", "admin").ok());
  ASSERT_TRUE(txn->Update("Item", "a", R"({"count":1})", "admin").ok());
  ASSERT_TRUE(txn->Savepoint().ok());
  ASSERT_TRUE(txn->Insert("Item", "c", R"({"kind":"c"})", "admin").ok());
  ASSERT_TRUE(txn->Delete("Item", "b", "admin").ok());
  StoredCall inner{"inner", "m.f", "h", true, "1", "", 0};
  ASSERT_TRUE(txn->PutCall(inner).ok());
  EXPECT_EQ(txn->changes().size(), 5u);
  ASSERT_TRUE(txn->RollbackTo().ok());  // c, b's delete and the call undone
  EXPECT_EQ(txn->changes().size(), 3u);
  Result<std::optional<Row>> b = txn->Get("Item", "b");
  ASSERT_TRUE(b.ok() && b->has_value());
  Result<std::optional<StoredCall>> gone = txn->GetCall("inner");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
  ASSERT_TRUE(txn->Release().ok());  // keeps b and a's update
  ASSERT_TRUE(txn->Savepoint().ok());
  ASSERT_TRUE(txn->Insert("Item", "d", R"({"kind":"d"})", "admin").ok());
  ASSERT_TRUE(txn->RollbackTo().ok());
  StoredCall outer{"outer", "m.f", "h", false, "", "BAD: no", 0};
  ASSERT_TRUE(txn->PutCall(outer).ok());
  Result<std::vector<ChangeEvent>> events = txn->Commit();
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].id, "a");
  EXPECT_EQ((*events)[1].id, "b");
  EXPECT_EQ((*events)[2].op, ChangeOp::kUpdated);
  EXPECT_TRUE(ReadRow("Item", "a").has_value());
  EXPECT_TRUE(ReadRow("Item", "b").has_value());
  EXPECT_FALSE(ReadRow("Item", "c").has_value());
  EXPECT_FALSE(ReadRow("Item", "d").has_value());
  EXPECT_EQ(FieldOf(*ReadRow("Item", "a"), "count"), "1");
  std::unique_ptr<DataTxn> read = BeginRead();
  ASSERT_NE(read, nullptr);
  Result<std::optional<StoredCall>> kept = read->GetCall("outer");
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_FALSE((*kept)->ok);
}

TEST_P(DataStoreConformanceTest, CommitWithAnOpenScopeRollsEverythingBack) {
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  ASSERT_TRUE(txn->Insert("Item", "a", R"({"kind":"a"})", "admin").ok());
  ASSERT_TRUE(txn->Savepoint().ok());
  Result<std::vector<ChangeEvent>> events = txn->Commit();
  ASSERT_FALSE(events.ok());
  EXPECT_EQ(events.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(ReadRow("Item", "a").has_value());
  EXPECT_NE(store_->Begin(TxnMode::kWrite, 0).status().code(),
            StatusCode::kUnavailable);
}

TEST_P(DataStoreConformanceTest, ChangeEventsFollowCommitOrder) {
  std::vector<int64_t> seqs;
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(1000);
    std::unique_ptr<DataTxn> txn = BeginWrite();
    ASSERT_NE(txn, nullptr);
    std::string id = "c" + std::to_string(i);
    ASSERT_TRUE(
        txn->Insert("Character", id, json({{"name", id}}).dump(), "module:m")
            .ok());
    ASSERT_TRUE(txn->Update("Character", id, R"({"hp":5})", "shard:s1").ok());
    EXPECT_TRUE(txn->changes()[0].seq == 0);
    Result<std::vector<ChangeEvent>> events = txn->Commit();
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    ASSERT_EQ(events->size(), 2u);
    for (const ChangeEvent& e : *events) seqs.push_back(e.seq);
  }
  {
    std::unique_ptr<DataTxn> txn = BeginWrite();
    ASSERT_TRUE(txn->Delete("Character", "c1", "admin").ok());
    Result<std::vector<ChangeEvent>> events = txn->Commit();
    ASSERT_TRUE(events.ok());
    seqs.push_back((*events)[0].seq);
  }
  for (size_t i = 1; i < seqs.size(); ++i) EXPECT_GT(seqs[i], seqs[i - 1]);

  Result<std::vector<ChangeEvent>> all = store_->Changes(0, 1000);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 7u);
  const DataSchema schema = TestSchema();
  const EntityType& character = *schema.Find("Character");
  for (size_t i = 0; i < all->size(); ++i) {
    const ChangeEvent& e = (*all)[i];
    EXPECT_EQ(e.seq, seqs[i]);
    if (i == 6) {
      EXPECT_EQ(e.op, ChangeOp::kDeleted);
      EXPECT_EQ(e.id, "c1");
      EXPECT_EQ(json::parse(e.row_json)["hp"], 5);
      EXPECT_EQ(e.origin, "admin");
    } else if (i % 2 == 0) {
      EXPECT_EQ(e.op, ChangeOp::kCreated);
      EXPECT_EQ(e.type, "Character");
      EXPECT_EQ(e.origin, "module:m");
      EXPECT_EQ(e.ts_ms, kStartMs + 1 + static_cast<int64_t>(i / 2));
      json row = json::parse(e.row_json);
      EXPECT_EQ(row["id"], e.id);
      EXPECT_EQ(row["version"], 1);
      EXPECT_EQ(row["hp"], 100);
      EXPECT_TRUE(row["speed"].is_null());
      EXPECT_EQ(row.size(), 4 + character.fields.size());
    } else {
      EXPECT_EQ(e.op, ChangeOp::kUpdated);
      EXPECT_EQ(e.origin, "shard:s1");
      ASSERT_EQ(e.fields.size(), 1u);
      EXPECT_EQ(e.fields[0].field, "hp");
      EXPECT_EQ(e.fields[0].old_json, "100");
      EXPECT_EQ(e.fields[0].new_json, "5");
    }
  }
  // Paging through the feed.
  Result<std::vector<ChangeEvent>> page = store_->Changes(seqs[1], 3);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 3u);
  EXPECT_EQ((*page)[0].seq, seqs[2]);
  EXPECT_EQ((*page)[2].seq, seqs[4]);
  Result<std::vector<ChangeEvent>> none = store_->Changes(seqs.back(), 10);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_P(DataStoreConformanceTest, KeyedCallsAreStoredOnceAndCounted) {
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  Result<std::optional<StoredCall>> none = txn->GetCall("loot-1");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  StoredCall call{"loot-1",          "loot.grant", "abc123", true,
                  R"({"item":"x"})", "",           0};
  ASSERT_TRUE(txn->PutCall(call).ok());
  StoredCall again = call;
  again.args_hash = "other";
  EXPECT_EQ(txn->PutCall(again).code(), StatusCode::kAlreadyExists);
  StoredCall dated{"loot-2", "loot.grant", "h", false, "", "DENIED: no", 42};
  ASSERT_TRUE(txn->PutCall(dated).ok());
  EXPECT_EQ(txn->PutCall(StoredCall{"", "m.f", "h", true, "1", "", 0}).code(),
            StatusCode::kInvalidArgument);
  Result<std::optional<StoredCall>> own = txn->GetCall("loot-1");
  ASSERT_TRUE(own.ok() && own->has_value());
  ASSERT_TRUE(txn->Insert("Item", "x", R"({"kind":"a"})", "admin").ok());
  (void)txn->Get("Item", "x");
  EXPECT_EQ(txn->reads(), 3);   // two GetCalls, one Get
  EXPECT_EQ(txn->writes(), 5);  // four PutCalls (two refused), one Insert
  // Calls record no change events.
  Result<std::vector<ChangeEvent>> events = txn->Commit();
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 1u);

  std::unique_ptr<DataTxn> read = BeginRead();
  ASSERT_NE(read, nullptr);
  Result<std::optional<StoredCall>> got = read->GetCall("loot-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->key, "loot-1");
  EXPECT_EQ((*got)->function, "loot.grant");
  EXPECT_EQ((*got)->args_hash, "abc123");
  EXPECT_TRUE((*got)->ok);
  EXPECT_EQ((*got)->result_json, R"({"item":"x"})");
  EXPECT_EQ((*got)->created_ms, kStartMs);  // 0 meant now
  Result<std::optional<StoredCall>> refused = read->GetCall("loot-2");
  ASSERT_TRUE(refused.ok() && refused->has_value());
  EXPECT_FALSE((*refused)->ok);
  EXPECT_EQ((*refused)->error, "DENIED: no");
  EXPECT_EQ((*refused)->created_ms, 42);
  EXPECT_EQ(read->reads(), 2);
  EXPECT_EQ(read->writes(), 0);
}

TEST_P(DataStoreConformanceTest, PruneDropsOnlyWhatIsPastRetention) {
  StoredCall old_call{"old", "m.f", "h", true, "1", "", 0};
  {
    std::unique_ptr<DataTxn> txn = BeginWrite();
    ASSERT_TRUE(txn->PutCall(old_call).ok());
    ASSERT_TRUE(txn->Insert("Item", "a", R"({"kind":"a"})", "admin").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  clock_.Advance(3LL * 24 * 3600 * 1000 * 1000);
  {
    std::unique_ptr<DataTxn> txn = BeginWrite();
    StoredCall fresh{"fresh", "m.f", "h", true, "1", "", 0};
    ASSERT_TRUE(txn->PutCall(fresh).ok());
    ASSERT_TRUE(txn->Insert("Item", "b", R"({"kind":"b"})", "admin").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  const int64_t now_ms = kStartMs + kCallRetentionMs + 1;
  ASSERT_TRUE(store_->Prune(now_ms).ok());
  std::unique_ptr<DataTxn> read = BeginRead();
  ASSERT_NE(read, nullptr);
  EXPECT_FALSE(read->GetCall("old")->has_value());
  EXPECT_TRUE(read->GetCall("fresh")->has_value());
  Result<std::vector<ChangeEvent>> changes = store_->Changes(0, 100);
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ((*changes)[0].id, "b");
  // Rows are data, never pruned.
  EXPECT_TRUE(ReadRow("Item", "a").has_value());
}

TEST_P(DataStoreConformanceTest, AdditiveSchemaChangesApplyOverRows) {
  InsertCommitted("Item", "a", R"({"kind":"a"})");
  InsertCommitted("Item", "b", R"({"kind":"a"})");
  DataSchema next = TestSchema();
  EntityType* item = &next.types[1];
  item->fields.push_back({"weight", FieldType::kFloat, false, "1.5"});
  item->fields.push_back({"note", FieldType::kString, false, ""});
  item->indexes.push_back({"kind", false});
  item->owner = "note";
  EntityType quest;
  quest.name = "Quest";
  quest.fields = {{"title", FieldType::kString, true, ""}};
  quest.indexes = {{"title", true}};
  next.types.push_back(quest);
  Status st = store_->ApplySchema(next);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(DataSchemaJson(store_->schema()), DataSchemaJson(next));
  // Old rows read the new field's default; the new index answers lookups.
  EXPECT_EQ(json::parse(FieldOf(*ReadRow("Item", "a"), "weight")), json(1.5));
  EXPECT_EQ(FieldOf(*ReadRow("Item", "a"), "note"), "null");
  std::unique_ptr<DataTxn> txn = BeginWrite();
  ASSERT_NE(txn, nullptr);
  Result<std::optional<Row>> by_kind = txn->Lookup("Item", "kind", "\"a\"");
  ASSERT_TRUE(by_kind.ok()) << by_kind.status().ToString();
  ASSERT_TRUE(by_kind->has_value());
  EXPECT_EQ((*by_kind)->id, "a");
  ASSERT_TRUE(txn->Insert("Quest", "q1", R"({"title":"T"})", "admin").ok());
  Result<Row> dup = txn->Insert("Quest", "q2", R"({"title":"T"})", "admin");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(CodeOf(dup.status()), codes::kUniqueViolation);
  ASSERT_TRUE(
      txn->Update("Item", "b", R"({"note":"u1","weight":2})", "admin").ok());
  Result<std::optional<Row>> by_owner = txn->Lookup("Item", "note", "\"u1\"");
  ASSERT_TRUE(by_owner.ok() && by_owner->has_value());
  EXPECT_EQ((*by_owner)->id, "b");
  ASSERT_TRUE(txn->Commit().ok());
}

TEST_P(DataStoreConformanceTest, RefusedSchemaChangesChangeNothing) {
  InsertCommitted("Item", "a", R"({"kind":"same"})");
  InsertCommitted("Item", "b", R"({"kind":"same"})");
  const std::string before = DataSchemaJson(store_->schema());
  // A unique index over duplicates, beside changes that alone would apply.
  DataSchema dup = TestSchema();
  dup.types[1].fields.push_back({"extra", FieldType::kInt, false, "7"});
  dup.types[1].indexes.push_back({"kind", true});
  EntityType quest;
  quest.name = "Quest";
  quest.fields = {{"title", FieldType::kString, false, ""}};
  dup.types.push_back(quest);
  Status st = store_->ApplySchema(dup);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CodeOf(st), codes::kUniqueViolation) << st.message();
  EXPECT_NE(st.message().find("Item.kind"), std::string::npos) << st.message();
  EXPECT_EQ(DataSchemaJson(store_->schema()), before);
  EXPECT_EQ(FieldOf(*ReadRow("Item", "a"), "extra"), "null");
  {
    std::unique_ptr<DataTxn> txn = BeginWrite();
    ASSERT_NE(txn, nullptr);
    EXPECT_EQ(CodeOf(txn->Insert("Quest", "q", "{}", "admin").status()),
              codes::kUnknownType);
    // Still not unique.
    ASSERT_TRUE(txn->Insert("Item", "c", R"({"kind":"same"})", "admin").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  // A changed field type: refused by DiffSchemas with the change named.
  DataSchema changed = TestSchema();
  changed.types[0].fields[1].type = FieldType::kFloat;
  st = store_->ApplySchema(changed);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("Character.hp"), std::string::npos)
      << st.message();
  DataSchema removed = TestSchema();
  removed.types.pop_back();
  EXPECT_EQ(store_->ApplySchema(removed).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(DataSchemaJson(store_->schema()), before);
  // Once the duplicates are gone the unique index applies.
  {
    std::unique_ptr<DataTxn> txn = BeginWrite();
    ASSERT_TRUE(txn->Update("Item", "b", R"({"kind":"b"})", "admin").ok());
    ASSERT_TRUE(txn->Update("Item", "c", R"({"kind":"c"})", "admin").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  st = store_->ApplySchema(dup);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(FieldOf(*ReadRow("Item", "a"), "extra"), "7");
}

// Random rows and random filters: List and Count agree with data::Matches.
TEST_P(DataStoreConformanceTest, FiltersAgreeWithMatchesOnRandomRows) {
  std::mt19937 rng(15);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const std::vector<std::string> names = {"a", "b",        "ab", "B",
                                          "",  "\xc3\xa9", "z"};
  auto value_of = [&](FieldType type) -> json {
    switch (type) {
      case FieldType::kString:
        return names[pick(static_cast<int>(names.size()))];
      case FieldType::kInt:
        return pick(7) - 3;
      case FieldType::kFloat:
        return (pick(9) - 4) * 0.5;
      case FieldType::kBool:
        return pick(2) == 1;
      case FieldType::kJson: {
        const json options[] = {json::array({1, 2}), json({{"k", 1}}),
                                json("s"), json(3), json::object()};
        return options[pick(5)];
      }
    }
    return nullptr;
  };
  const DataSchema schema = TestSchema();
  const EntityType& type = *schema.Find("Character");
  std::vector<Row> rows;
  {
    std::unique_ptr<DataTxn> txn = BeginWrite();
    ASSERT_NE(txn, nullptr);
    for (int i = 0; i < 60; ++i) {
      json fields = {{"name", "n" + std::to_string(i)}};
      for (const FieldSpec& f : type.fields) {
        if (f.name == "name" || f.name == "tag") continue;
        if (pick(4) == 0) {
          fields[f.name] = nullptr;
          continue;
        }
        fields[f.name] = value_of(f.type);
      }
      char id[8];
      snprintf(id, sizeof(id), "r%02d", (i * 7) % 60);
      Result<Row> row = txn->Insert("Character", id, fields.dump(), "admin");
      ASSERT_TRUE(row.ok()) << row.status().ToString() << fields.dump();
      rows.push_back(*row);
    }
    ASSERT_TRUE(txn->Commit().ok());
  }
  const char* ordered_ops[] = {"eq", "ne", "lt", "le", "gt", "ge", "in"};
  const char* equality_ops[] = {"eq", "ne", "in"};
  std::unique_ptr<DataTxn> read = BeginRead();
  ASSERT_NE(read, nullptr);
  int matched_somewhere = 0;
  for (int round = 0; round < 300; ++round) {
    json filter = json::object();
    const int terms = 1 + pick(2);
    for (int t = 0; t < terms; ++t) {
      const bool by_id = pick(8) == 0;
      const FieldSpec& f =
          type.fields[pick(static_cast<int>(type.fields.size()))];
      const std::string field = by_id ? "id" : f.name;
      const FieldType ftype = by_id ? FieldType::kString : f.type;
      auto operand = [&]() -> json {
        if (by_id) return "r" + std::to_string(10 + pick(50));
        return value_of(ftype);
      };
      const int form = pick(6);
      if (form == 0) {
        filter[field] = nullptr;
      } else if (form == 1) {
        filter[field] = operand();
      } else {
        const bool ordered =
            ftype != FieldType::kBool && ftype != FieldType::kJson;
        std::string op = ordered ? ordered_ops[pick(7)] : equality_ops[pick(3)];
        if (op == "in") {
          json values = json::array();
          for (int k = 0; k <= pick(3); ++k) values.push_back(operand());
          filter[field] = {{op, values}};
        } else {
          filter[field] = {{op, operand()}};
        }
      }
    }
    Result<Filter> parsed = ParseFilter(type, filter.dump());
    ASSERT_TRUE(parsed.ok()) << filter.dump() << parsed.status().ToString();
    std::vector<std::string> want;
    for (const Row& r : rows) {
      if (Matches(type, r, *parsed)) want.push_back(r.id);
    }
    std::sort(want.begin(), want.end());
    if (!want.empty()) ++matched_somewhere;
    Result<Page> page = read->List("Character", *parsed, "", kMaxPageLimit);
    ASSERT_TRUE(page.ok()) << filter.dump() << page.status().ToString();
    std::vector<std::string> got;
    for (const Row& r : page->rows) got.push_back(r.id);
    EXPECT_EQ(got, want) << filter.dump();
    Result<int64_t> count = read->Count("Character", *parsed);
    ASSERT_TRUE(count.ok()) << count.status().ToString();
    EXPECT_EQ(*count, static_cast<int64_t>(want.size())) << filter.dump();
  }
  // The rounds were not all empty (a suite that cannot fail is a defect).
  EXPECT_GT(matched_somewhere, 100);
}

}  // namespace
}  // namespace tessera::data
