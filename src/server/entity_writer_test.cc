// The entity writer (entity_writer.h) over the real SQLite data store, fed
// by a real shard host running the `calls` test guest (its "write" input):
// coalescing, the flush interval, the flush at a stop, refused rows logged
// and dropped, changes reported.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/calls_test_fixture.h"

namespace tessera::server::testing {
namespace {

using ::testing::HasSubstr;

class EntityWriterTest : public CallsTest {
 protected:
  void SetUp() override {
    CallsTest::SetUp();
    if (HasFatalFailure()) return;
    Result<std::unique_ptr<data::DataTxn>> txn =
        data_->Begin(data::TxnMode::kWrite);
    ASSERT_TRUE(txn.ok());
    for (const char* id : {"p1", "p2"}) {
      ASSERT_TRUE((*txn)->Insert("Pos", id, R"({"x":0,"y":0})", "test").ok());
    }
    ASSERT_TRUE((*txn)->Commit().ok());
  }

  json Fields(const std::string& id) {
    std::optional<data::Row> row = GetRow("Pos", id);
    return row ? json::parse(row->fields_json) : json(nullptr);
  }
};

TEST_F(EntityWriterTest, TheLatestValuePerFieldIsWrittenAtTheFlushInterval) {
  Create("s1");
  WriteRow("s1", "Pos", "p1", {{"x", 1}});
  WriteRow("s1", "Pos", "p1", {{"y", 5}});
  Step();  // the tick's writes reach the writer
  WriteRow("s1", "Pos", "p1", {{"x", 2}});
  WriteRow("s1", "Pos", "p2", {{"x", 7}});
  Step();
  EXPECT_EQ(writer_->buffered_rows(), 2u);
  // Not due yet (2 s after the first buffered write).
  EXPECT_EQ(writer_->FlushDue(), 0u);
  EXPECT_EQ(Fields("p1"), json({{"x", 0}, {"y", 0}}));
  clock_.Advance(2'000'000);
  EXPECT_EQ(writer_->FlushDue(), 1u);
  EXPECT_EQ(Fields("p1"), json({{"x", 2}, {"y", 5}}));
  EXPECT_EQ(Fields("p2"), json({{"x", 7}, {"y", 0}}));
  EXPECT_EQ(writer_->buffered_rows(), 0u);
  EXPECT_EQ(Metric("tessera_entity_writes_total{outcome=\"written\"}"), 2u);
  // One flush, two rows: the changes carry the shard as their origin.
  std::lock_guard<std::mutex> lock(log_mu_);
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[0].origin, "shard:s1");
  EXPECT_EQ(changes_[0].op, data::ChangeOp::kUpdated);
}

TEST_F(EntityWriterTest, AStopFlushesAtOnce) {
  Create("s1", "quiet");
  WriteRow("s1", "Pos", "p1", {{"x", 3}});
  Step();
  ASSERT_EQ(writer_->buffered_rows(), 1u);
  ASSERT_TRUE(host_->Stop("s1").ok());
  Step();
  EXPECT_EQ(Fields("p1"), json({{"x", 3}, {"y", 0}}));
  EXPECT_EQ(writer_->buffered_rows(), 0u);
}

TEST_F(EntityWriterTest, TheHostShutdownFlushesToo) {
  Create("s1", "quiet");
  WriteRow("s1", "Pos", "p2", {{"y", 9}});
  Step();
  host_->Shutdown();
  EXPECT_EQ(Fields("p2"), json({{"x", 0}, {"y", 9}}));
}

TEST_F(EntityWriterTest, RefusedRowsAreLoggedAndDroppedTheOthersWritten) {
  Create("s1", "quiet");
  WriteRow("s1", "Pos", "nobody", {{"x", 1}});     // ROW_NOT_FOUND
  WriteRow("s1", "Pos", "p1", {{"z", 1}});         // UNKNOWN_FIELD
  WriteRow("s1", "Pos", "p2", {{"x", "fast"}});    // BAD_VALUE
  WriteRow("s1", "Nope", "p1", {{"x", 1}});        // UNKNOWN_TYPE
  WriteRow("s1", "Item", "i1", {{"name", "ok"}});  // ROW_NOT_FOUND
  WriteRow("s1", "Pos", "p1", {{"x", 4}});         // joins p1's row
  Step();
  clock_.Advance(2'000'000);
  writer_->FlushDue();
  // p1's buffered fields are {z, x}: the row is refused as a whole.
  EXPECT_EQ(Fields("p1"), json({{"x", 0}, {"y", 0}}));
  EXPECT_EQ(Fields("p2"), json({{"x", 0}, {"y", 0}}));
  EXPECT_EQ(Metric("tessera_entity_writes_total{outcome=\"refused\"}"), 5u);
  std::vector<std::string> logs = Logs();
  ASSERT_EQ(logs.size(), 5u) << ::testing::PrintToString(logs);
  std::string all;
  for (const std::string& l : logs) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("shard s1: write of Pos nobody refused: "
                             "ROW_NOT_FOUND"));
  EXPECT_THAT(all, HasSubstr("UNKNOWN_FIELD"));
  EXPECT_THAT(all, HasSubstr("BAD_VALUE"));
  EXPECT_THAT(all, HasSubstr("UNKNOWN_TYPE"));
  EXPECT_EQ(writer_->buffered_rows(), 0u);
}

TEST_F(EntityWriterTest, ABusyWriterKeepsTheRowsForTheNextFlush) {
  Create("s1", "quiet");
  WriteRow("s1", "Pos", "p1", {{"x", 1}});
  Step();
  {
    // Another writer holds the store: the flush cannot begin.
    Result<std::unique_ptr<data::DataTxn>> held =
        data_->Begin(data::TxnMode::kWrite);
    ASSERT_TRUE(held.ok());
    EntityWriterOptions quick;
    quick.clock = &clock_;
    quick.writer_wait_ms = 1;
    EntityWriter impatient(data_.get(), quick);
    impatient.Write("s9", 100, {{"Pos", "p2", R"({"x":5})"}});
    Status flushed = impatient.Flush("s9");
    EXPECT_FALSE(flushed.ok());
    EXPECT_EQ(impatient.buffered_rows(), 1u);
    // A newer value written meanwhile wins over the kept one.
    impatient.Write("s9", 100, {{"Pos", "p2", R"({"x":6})"}});
    held->reset();
    EXPECT_TRUE(impatient.Flush("s9").ok());
    EXPECT_EQ(Fields("p2"), json({{"x", 6}, {"y", 0}}));
  }
  clock_.Advance(2'000'000);
  writer_->FlushDue();
  EXPECT_EQ(Fields("p1"), json({{"x", 1}, {"y", 0}}));
}

TEST_F(EntityWriterTest, StopWritesWhatIsBuffered) {
  Create("s1", "quiet");
  WriteRow("s1", "Pos", "p1", {{"x", 8}});
  Step();
  writer_->Stop();
  EXPECT_EQ(Fields("p1"), json({{"x", 8}, {"y", 0}}));
}

}  // namespace
}  // namespace tessera::server::testing
