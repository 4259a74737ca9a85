// The Store conformance suite, part 2: the transfer journal (any object
// that is both the shard::StateStore and the shard::TransferJournal).
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/store_conformance.h"

namespace tessera::store {

using shard::TransferAdvance;
using shard::TransferRecord;
using shard::TransferStep;

namespace {

// A store of a StoreBackend and the place it lives on, in that order of
// destruction.
struct StoreOnPlace {
  StorePlace place;
  std::unique_ptr<Store> store;
};

}  // namespace

JournalBackend JournalBackendOf(const StoreBackend& backend) {
  return JournalBackend{backend.name,
                        [backend](const WallClock* clock) -> JournalUnderTest {
                          auto held = std::make_shared<StoreOnPlace>();
                          held->place = backend.make_place();
                          Result<std::unique_ptr<Store>> store =
                              backend.open(held->place.location, clock);
                          EXPECT_TRUE(store.ok()) << store.status().ToString();
                          if (!store.ok()) return {};
                          held->store = std::move(store).value();
                          JournalUnderTest out;
                          out.states = held->store.get();
                          out.journal = held->store.get();
                          out.owner = std::move(held);
                          return out;
                        }};
}

void PrintTo(const JournalBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string JournalBackendName(
    const ::testing::TestParamInfo<JournalBackend>& info) {
  return info.param.name;
}

void TransferJournalConformanceTest::SetUp() {
  under_test_ = GetParam().make(&clock_);
  states_ = under_test_.states;
  journal_ = under_test_.journal;
  ASSERT_NE(states_, nullptr);
  ASSERT_NE(journal_, nullptr);
}

TransferRecord TransferJournalConformanceTest::Move(std::string id,
                                                    std::string from,
                                                    std::string subscriber,
                                                    std::string to) {
  TransferRecord r;
  r.id = std::move(id);
  r.from_shard = std::move(from);
  r.to_shard = std::move(to);
  r.subscriber = std::move(subscriber);
  r.claims_json = R"({"party":"p1"})";
  r.state = "state of " + r.subscriber;
  return r;
}

TransferAdvance TransferJournalConformanceTest::Step(std::string id,
                                                     TransferStep from,
                                                     TransferStep to) {
  return TransferAdvance{std::move(id), from, to};
}

std::vector<TransferRecord> TransferJournalConformanceTest::List() {
  Result<std::vector<TransferRecord>> rows = journal_->ListTransfers();
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? *rows : std::vector<TransferRecord>();
}

std::vector<std::string> TransferJournalConformanceTest::Ids() {
  std::vector<std::string> ids;
  for (const TransferRecord& r : List()) ids.push_back(r.id);
  return ids;
}

std::optional<std::string> TransferJournalConformanceTest::Load(
    std::string_view shard) {
  Result<std::optional<std::string>> state = states_->Load(shard);
  EXPECT_TRUE(state.ok()) << state.status().ToString();
  return state.ok() ? *state : std::nullopt;
}

Status TransferJournalConformanceTest::Begin(
    std::vector<TransferRecord> records, std::string_view from,
    std::optional<std::string_view> state) {
  return journal_->BeginTransfers(records, from, state);
}

Status TransferJournalConformanceTest::Advance(
    std::vector<TransferAdvance> steps, std::string_view shard,
    std::optional<std::string_view> state) {
  return journal_->AdvanceTransfers(steps, shard, state);
}

namespace {

TEST_P(TransferJournalConformanceTest,
       BeginWritesOutRowsAndTheSourceStateTogether) {
  ASSERT_TRUE(states_->Save("S", "with p and q").ok());
  TransferRecord p = Move("m1", "S", "p");
  p.step = TransferStep::kIn;  // ignored: a new row is always kOut
  TransferRecord q = Move("m2", "S", "q", "U");
  q.created_unix_ms = 5;
  q.updated_unix_ms = 6;
  ASSERT_TRUE(Begin({p, q}, "S", "without them").ok());

  EXPECT_EQ(Load("S"), "without them");
  std::vector<TransferRecord> rows = List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, "m2");  // created 5 < now
  EXPECT_EQ(rows[0].to_shard, "U");
  EXPECT_EQ(rows[0].created_unix_ms, 5);
  EXPECT_EQ(rows[0].updated_unix_ms, 6);
  const TransferRecord& r = rows[1];
  EXPECT_EQ(r.id, "m1");
  EXPECT_EQ(r.from_shard, "S");
  EXPECT_EQ(r.to_shard, "T");
  EXPECT_EQ(r.subscriber, "p");
  EXPECT_EQ(r.claims_json, R"({"party":"p1"})");
  EXPECT_EQ(r.state, "state of p");
  EXPECT_EQ(r.step, TransferStep::kOut);
  EXPECT_EQ(r.created_unix_ms, kConformanceStartMs);  // zero: from the clock
  EXPECT_EQ(r.updated_unix_ms, kConformanceStartMs);
}

TEST_P(TransferJournalConformanceTest, WithoutAStateTheSaveIsLeftAlone) {
  ASSERT_TRUE(states_->Save("S", "before").ok());
  ASSERT_TRUE(Begin({Move("m1", "S", "p")}, "S", std::nullopt).ok());
  EXPECT_EQ(Load("S"), "before");
  ASSERT_TRUE(Advance({Step("m1", TransferStep::kOut, TransferStep::kIn)}, "T",
                      std::nullopt)
                  .ok());
  EXPECT_EQ(Load("T"), std::nullopt);
  EXPECT_EQ(List()[0].step, TransferStep::kIn);
  // No rows, a state: just the save (an empty state is a state).
  ASSERT_TRUE(Begin({}, "S", "").ok());
  EXPECT_EQ(Load("S"), "");
  ASSERT_TRUE(Advance({}, "T", "t").ok());
  EXPECT_EQ(Load("T"), "t");
}

TEST_P(TransferJournalConformanceTest, DuplicateIdWritesNothing) {
  ASSERT_TRUE(Begin({Move("m1", "S", "p")}, "S", "s1").ok());
  Status st = Begin({Move("m2", "S", "q"), Move("m1", "U", "r")}, "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_NE(st.message().find("'m1'"), std::string::npos) << st.message();
  // Within one batch, too.
  st = Begin({Move("m3", "S", "q"), Move("m3", "U", "r")}, "S", "s3");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_EQ(Ids(), std::vector<std::string>{"m1"});
  EXPECT_EQ(Load("S"), "s1");
}

TEST_P(TransferJournalConformanceTest, OneOutRowPerSubscriberAndSource) {
  ASSERT_TRUE(Begin({Move("m1", "S", "p")}, "S", "s1").ok());
  Status st = Begin({Move("m2", "S", "p", "U")}, "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_NE(st.message().find("'p'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'m1'"), std::string::npos) << st.message();
  st = Begin({Move("m3", "S", "q"), Move("m4", "S", "q")}, "S", "s3");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_EQ(Ids(), std::vector<std::string>{"m1"});
  EXPECT_EQ(Load("S"), "s1");

  // The same subscriber leaving another shard is another move.
  ASSERT_TRUE(Begin({Move("m5", "U", "p")}, "U", std::nullopt).ok());
  // Once its row is no longer kOut, it may move out of S again.
  ASSERT_TRUE(
      Advance({Step("m1", TransferStep::kOut, TransferStep::kIn)}, "T", "t1")
          .ok());
  ASSERT_TRUE(Begin({Move("m6", "S", "p")}, "S", "s4").ok());
  EXPECT_EQ(Ids(), (std::vector<std::string>{"m1", "m5", "m6"}));
}

TEST_P(TransferJournalConformanceTest, AdvanceIsACompareAndSetWithTheSave) {
  ASSERT_TRUE(
      Begin({Move("m1", "S", "p"), Move("m2", "S", "q")}, "S", "s1").ok());
  clock_.Advance(2'500'000);
  ASSERT_TRUE(Advance({Step("m1", TransferStep::kOut, TransferStep::kIn),
                       Step("m2", TransferStep::kOut, TransferStep::kIn)},
                      "T", "t with p and q")
                  .ok());
  EXPECT_EQ(Load("T"), "t with p and q");
  EXPECT_EQ(Load("S"), "s1");
  for (const TransferRecord& r : List()) {
    EXPECT_EQ(r.step, TransferStep::kIn) << r.id;
    EXPECT_EQ(r.created_unix_ms, kConformanceStartMs) << r.id;
    EXPECT_EQ(r.updated_unix_ms, kConformanceStartMs + 2'500) << r.id;
  }
  // The same CAS again: m1 is no longer at kOut.
  Status st =
      Advance({Step("m1", TransferStep::kOut, TransferStep::kBack)}, "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("at step in, not out"), std::string::npos)
      << st.message();
}

TEST_P(TransferJournalConformanceTest, AFailedAdvanceWritesNothing) {
  ASSERT_TRUE(
      Begin({Move("m1", "S", "p"), Move("m2", "S", "q")}, "S", "s1").ok());
  ASSERT_TRUE(
      Advance({Step("m2", TransferStep::kOut, TransferStep::kIn)}, "T", "t1")
          .ok());
  clock_.Advance(1'000'000);
  // m1 would move, m2 is not at kOut: neither moves, no state is written.
  Status st = Advance({Step("m1", TransferStep::kOut, TransferStep::kBack),
                       Step("m2", TransferStep::kOut, TransferStep::kBack)},
                      "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  // A missing row.
  st = Advance({Step("m1", TransferStep::kOut, TransferStep::kBack),
                Step("nope", TransferStep::kOut, TransferStep::kBack)},
               "S", "s3");
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("'nope'"), std::string::npos) << st.message();
  // Steps that are not steps, or back to kOut.
  st = Advance({Step("m1", TransferStep::kOut, TransferStep::kBack),
                Step("m2", TransferStep::kIn, TransferStep::kOut)},
               "S", "s4");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  st = Advance({Step("m1", TransferStep::kOut, static_cast<TransferStep>(9))},
               "S", "s5");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();

  EXPECT_EQ(Load("S"), "s1");
  std::vector<TransferRecord> rows = List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, TransferStep::kOut);
  EXPECT_EQ(rows[0].updated_unix_ms, kConformanceStartMs);
  EXPECT_EQ(rows[1].step, TransferStep::kIn);
  EXPECT_EQ(rows[1].updated_unix_ms, kConformanceStartMs);
}

TEST_P(TransferJournalConformanceTest, StepsOfOneAdvanceApplyInOrder) {
  ASSERT_TRUE(Begin({Move("m1", "S", "p")}, "S", "s1").ok());
  ASSERT_TRUE(Advance({Step("m1", TransferStep::kOut, TransferStep::kIn),
                       Step("m1", TransferStep::kIn, TransferStep::kBack)},
                      "S", "s2")
                  .ok());
  EXPECT_EQ(List()[0].step, TransferStep::kBack);
  Status st = Advance({Step("m1", TransferStep::kBack, TransferStep::kIn),
                       Step("m1", TransferStep::kBack, TransferStep::kIn)},
                      "T", "t1");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_EQ(List()[0].step, TransferStep::kBack);
  EXPECT_EQ(Load("T"), std::nullopt);
}

TEST_P(TransferJournalConformanceTest, ListIsOldestFirstThenInsertionOrder) {
  TransferRecord late = Move("a", "S", "p1");
  late.created_unix_ms = 300;
  TransferRecord early = Move("z", "S", "p2");
  early.created_unix_ms = 100;
  TransferRecord tie1 = Move("y", "S", "p3");
  tie1.created_unix_ms = 200;
  TransferRecord tie2 = Move("b", "S", "p4");
  tie2.created_unix_ms = 200;
  ASSERT_TRUE(Begin({late, tie1}, "S", std::nullopt).ok());
  ASSERT_TRUE(Begin({early, tie2}, "S", std::nullopt).ok());
  EXPECT_EQ(Ids(), (std::vector<std::string>{"z", "y", "b", "a"}));
}

TEST_P(TransferJournalConformanceTest, DeleteDropsRowsOnlyAndIgnoresAbsentIds) {
  ASSERT_TRUE(
      Begin({Move("m1", "S", "p"), Move("m2", "S", "q"), Move("m3", "S", "r")},
            "S", "s1")
          .ok());
  std::vector<std::string> ids = {"m1", "nope", "m3"};
  ASSERT_TRUE(journal_->DeleteTransfers(ids).ok());
  EXPECT_EQ(Ids(), std::vector<std::string>{"m2"});
  EXPECT_EQ(Load("S"), "s1");
  ASSERT_TRUE(journal_->DeleteTransfers({}).ok());
  // A deleted kOut row no longer blocks its subscriber, nor its id.
  ASSERT_TRUE(Begin({Move("m1", "S", "p")}, "S", std::nullopt).ok());
}

TEST_P(TransferJournalConformanceTest, BytesComeBackExactly) {
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  TransferRecord binary = Move("m1", "S", "p");
  binary.state = all_bytes;
  binary.claims_json = R"({"name":"Zoë","n":[1,2]})";
  TransferRecord empty = Move("m2", "S", "q");
  empty.state.clear();
  empty.claims_json = "{}";
  ASSERT_TRUE(Begin({binary, empty}, "S", all_bytes).ok());
  std::vector<TransferRecord> rows = List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].state, all_bytes);
  EXPECT_EQ(rows[0].claims_json, R"({"name":"Zoë","n":[1,2]})");
  EXPECT_EQ(rows[1].state, "");
  EXPECT_EQ(rows[1].claims_json, "{}");
  EXPECT_EQ(Load("S"), all_bytes);
}

// Shards move players concurrently from their own workers; each pair of
// transactions stays whole and nothing is lost.
TEST_P(TransferJournalConformanceTest, ConcurrentMovesFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kMoves = 40;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &failures] {
      const std::string from = "S" + std::to_string(t);
      for (int i = 0; i < kMoves && failures[t].ok(); ++i) {
        const std::string id = from + "-" + std::to_string(i);
        TransferRecord r = Move(id, from, "p" + std::to_string(i));
        const std::string out = "out " + id;
        const std::string in = "in " + id;
        std::vector<TransferRecord> records = {r};
        std::vector<TransferAdvance> steps = {
            Step(id, TransferStep::kOut,
                 i % 2 == 0 ? TransferStep::kIn : TransferStep::kBack)};
        Status st = journal_->BeginTransfers(records, from, out);
        if (st.ok()) {
          st = journal_->AdvanceTransfers(
              steps, i % 2 == 0 ? "T" + std::to_string(t) : from, in);
        }
        failures[t] = st;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& st : failures) ASSERT_TRUE(st.ok()) << st.ToString();

  std::vector<TransferRecord> rows = List();
  ASSERT_EQ(rows.size(), static_cast<size_t>(kThreads * kMoves));
  for (const TransferRecord& r : rows) {
    int i = std::stoi(r.id.substr(r.id.find('-') + 1));
    EXPECT_EQ(r.step, i % 2 == 0 ? TransferStep::kIn : TransferStep::kBack)
        << r.id;
  }
  for (int t = 0; t < kThreads; ++t) {
    const std::string from = "S" + std::to_string(t);
    EXPECT_EQ(Load(from), "in " + from + "-" + std::to_string(kMoves - 1));
    EXPECT_EQ(Load("T" + std::to_string(t)),
              "in " + from + "-" + std::to_string(kMoves - 2));
  }
}

}  // namespace
}  // namespace tessera::store
