#include "server/entity_writer.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "common/deadline_loop.h"
#include "common/fault_point.h"
#include "common/text.h"

namespace tessera::server {

using json = nlohmann::json;

namespace {

constexpr char kMetricName[] = "tessera_entity_writes_total";
constexpr char kMetricHelp[] =
    "Rows of shards' entity writes flushed to the app's data: written, or "
    "refused by the data (logged and dropped).";
constexpr size_t kMaxLogBytes = 512;

bool IsTransient(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kIo;
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

EntityWriter::EntityWriter(data::DataStore* store, EntityWriterOptions options)
    : store_(store),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock::Get()) {
  if (Metrics* m = options_.metrics; m != nullptr) {
    metric_written_ =
        m->GetCounter(kMetricName, kMetricHelp, {{"outcome", "written"}});
    metric_refused_ =
        m->GetCounter(kMetricName, kMetricHelp, {{"outcome", "refused"}});
  }
}

EntityWriter::~EntityWriter() { Stop(); }

void EntityWriter::set_on_changes(OnChanges on_changes) {
  on_changes_ = std::move(on_changes);
}

void EntityWriter::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

void EntityWriter::Write(std::string_view shard_id, uint32_t flush_ms,
                         std::vector<shard::EntityWrite> writes) {
  if (writes.empty()) return;
  // Parsed outside the lock: the workers of other shards write too.
  std::vector<std::pair<RowKey, json>> parsed;
  parsed.reserve(writes.size());
  for (shard::EntityWrite& w : writes) {
    json set = json::parse(w.set_json, nullptr, /*allow_exceptions=*/false);
    if (!set.is_object()) {
      // The host checked the shape; count what still slips through.
      Log("shard " + EscapeForLog(shard_id, kMaxLogBytes) + ": write of " +
          EscapeForLog(w.entity, kMaxLogBytes) + " " +
          EscapeForLog(w.id, kMaxLogBytes) +
          " refused: \"set\" is not a JSON object");
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_.refused;
      if (metric_refused_ != nullptr) metric_refused_->Add();
      continue;
    }
    parsed.emplace_back(RowKey{std::move(w.entity), std::move(w.id)},
                        std::move(set));
  }
  const int64_t now = clock_->NowUs();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buffers_.find(shard_id);
  if (it == buffers_.end()) {
    it = buffers_.emplace(std::string(shard_id), Buffer{}).first;
  }
  Buffer& buffer = it->second;
  buffer.flush_ms = flush_ms;
  for (auto& [key, set] : parsed) {
    json& row = buffer.rows[key];
    if (!row.is_object()) row = json::object();
    for (auto& [field, value] : set.items()) row[field] = std::move(value);
  }
  if (buffer.due_us == 0 && !buffer.rows.empty()) {
    buffer.due_us = now + static_cast<int64_t>(flush_ms) * 1000;
    cv_.notify_one();
  }
}

void EntityWriter::ShardStopped(std::string_view shard_id) {
  Status flushed = Flush(shard_id);
  if (!flushed.ok()) {
    Log("shard " + EscapeForLog(shard_id, kMaxLogBytes) +
        ": entity writes not flushed at its stop: " + flushed.message() +
        " (kept, retried)");
  }
}

Status EntityWriter::Flush(std::string_view shard_id) {
  std::lock_guard<std::mutex> flush_lock(flush_mu_);
  std::map<RowKey, json> rows;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = buffers_.find(shard_id);
    if (it == buffers_.end()) return Status::Ok();
    rows = std::move(it->second.rows);
    buffers_.erase(it);
  }
  if (rows.empty()) return Status::Ok();
  return FlushRows(std::string(shard_id), std::move(rows));
}

size_t EntityWriter::FlushDue() {
  const int64_t now = clock_->NowUs();
  std::vector<std::string> due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, buffer] : buffers_) {
      if (buffer.due_us != 0 && buffer.due_us <= now) due.push_back(id);
    }
  }
  for (const std::string& id : due) (void)Flush(id);
  return due.size();
}

void EntityWriter::MergeBack(const std::string& shard_id,
                             std::map<RowKey, json> rows) {
  const int64_t now = clock_->NowUs();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buffers_.find(shard_id);
  if (it == buffers_.end()) {
    it = buffers_.emplace(shard_id, Buffer{}).first;
  }
  Buffer& buffer = it->second;
  for (auto& [key, fields] : rows) {
    json& row = buffer.rows[key];
    if (!row.is_object()) {
      row = std::move(fields);
      continue;
    }
    // Values written since the flush began are newer: they win.
    for (auto& [field, value] : fields.items()) {
      if (!row.contains(field)) row[field] = std::move(value);
    }
  }
  const int64_t retry =
      now + std::min<int64_t>(options_.retry_ms,
                              static_cast<int64_t>(buffer.flush_ms)) *
                1000;
  if (buffer.due_us == 0 || buffer.due_us > retry) buffer.due_us = retry;
  cv_.notify_one();
}

Status EntityWriter::FlushRows(const std::string& shard_id,
                               std::map<RowKey, json> rows) {
  const std::string origin = "shard:" + shard_id;
  auto fail = [&](const Status& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_.failed_flushes;
    }
    MergeBack(shard_id, std::move(rows));
    return why;
  };
  Result<std::unique_ptr<data::DataTxn>> begun =
      store_->Begin(data::TxnMode::kWrite, options_.writer_wait_ms);
  if (!begun.ok()) return fail(begun.status());
  data::DataTxn& txn = **begun;
  uint64_t written = 0;
  uint64_t refused = 0;
  std::map<RowKey, json> kept;
  for (auto it = rows.begin(); it != rows.end(); ++it) {
    const auto& [key, fields] = *it;
    if (Status s = txn.Savepoint(); !s.ok()) return fail(s);
    Result<data::Row> updated =
        txn.Update(key.first, key.second, Dump(fields), origin);
    if (updated.ok()) {
      if (Status s = txn.Release(); !s.ok()) return fail(s);
      ++written;
      continue;
    }
    (void)txn.RollbackTo();
    if (IsTransient(updated.status().code())) {
      kept.emplace(key, fields);
      continue;
    }
    ++refused;
    Log("shard " + EscapeForLog(shard_id, kMaxLogBytes) + ": write of " +
        EscapeForLog(key.first, kMaxLogBytes) + " " +
        EscapeForLog(key.second, kMaxLogBytes) +
        " refused: " + EscapeForLog(updated.status().message(), kMaxLogBytes));
  }
  Result<std::vector<data::ChangeEvent>> committed = txn.Commit();
  if (!committed.ok()) return fail(committed.status());
  begun->reset();
  FaultPoint("entity_writer_after_commit");
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.written += written;
    counts_.refused += refused;
    ++counts_.flushes;
  }
  if (metric_written_ != nullptr && written > 0) metric_written_->Add(written);
  if (metric_refused_ != nullptr && refused > 0) metric_refused_->Add(refused);
  if (on_changes_ && !committed->empty()) on_changes_(*committed);
  if (!kept.empty()) {
    MergeBack(shard_id, std::move(kept));
    return Status(StatusCode::kUnavailable,
                  "UNAVAILABLE: some rows could not be written now");
  }
  return Status::Ok();
}

size_t EntityWriter::buffered_rows() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [id, buffer] : buffers_) n += buffer.rows.size();
  return n;
}

EntityWriter::Counts EntityWriter::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

void EntityWriter::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void EntityWriter::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  RunDeadlineLoop(
      lock, cv_, *clock_, stopping_,
      [this] {
        int64_t next = INT64_MAX;
        for (const auto& [id, buffer] : buffers_) {
          if (buffer.due_us != 0) next = std::min(next, buffer.due_us);
        }
        return next;
      },
      [this] { FlushDue(); });
}

void EntityWriter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, buffer] : buffers_) ids.push_back(id);
  }
  for (const std::string& id : ids) {
    Status flushed = Flush(id);
    if (!flushed.ok()) {
      Log("shard " + EscapeForLog(id, kMaxLogBytes) +
          ": entity writes lost at shutdown: " + flushed.message());
    }
  }
}

}  // namespace tessera::server
