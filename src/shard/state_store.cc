#include "shard/state_store.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tessera::shard {
namespace {

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

std::optional<TransferStep> TransferStepFromInt(int64_t value) {
  switch (value) {
    case static_cast<int64_t>(TransferStep::kOut):
      return TransferStep::kOut;
    case static_cast<int64_t>(TransferStep::kIn):
      return TransferStep::kIn;
    case static_cast<int64_t>(TransferStep::kBack):
      return TransferStep::kBack;
    default:
      return std::nullopt;
  }
}

Status CheckTransferAdvance(const TransferAdvance& advance) {
  if (!TransferStepFromInt(static_cast<int64_t>(advance.from)).has_value() ||
      !TransferStepFromInt(static_cast<int64_t>(advance.to)).has_value()) {
    return InvalidArgument("transfer " + Quoted(advance.id) +
                           ": unknown transfer step");
  }
  if (advance.to == TransferStep::kOut) {
    return InvalidArgument("transfer " + Quoted(advance.id) +
                           ": a row cannot go back to step out");
  }
  return Status::Ok();
}

Status TransferIdExists(std::string_view id) {
  return Status(StatusCode::kAlreadyExists,
                "transfer " + Quoted(id) + " already exists");
}

Status AlreadyMovingOut(const TransferRecord& record, std::string_view out_id) {
  return Status(StatusCode::kAlreadyExists,
                "subscriber " + Quoted(record.subscriber) +
                    " is already moving out of shard " +
                    Quoted(record.from_shard) + " (transfer " + Quoted(out_id) +
                    ")");
}

Status NoTransfer(std::string_view id) {
  return NotFound("no transfer " + Quoted(id) + " in the journal");
}

Status TransferNotAt(const TransferAdvance& advance, TransferStep actual) {
  return Status(StatusCode::kFailedPrecondition,
                "transfer " + Quoted(advance.id) + " is at step " +
                    TransferStepName(actual) + ", not " +
                    TransferStepName(advance.from));
}

MemoryStateStore::MemoryStateStore(const WallClock* wall_clock)
    : wall_clock_(wall_clock != nullptr ? wall_clock : RealWallClock::Get()) {}

Status MemoryStateStore::Save(std::string_view shard_id,
                              std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  SaveLocked(shard_id, bytes);
  return Status::Ok();
}

void MemoryStateStore::SaveLocked(std::string_view shard_id,
                                  std::string_view bytes) {
  auto it = states_.find(shard_id);
  if (it == states_.end()) {
    states_.emplace(std::string(shard_id), std::string(bytes));
  } else {
    it->second.assign(bytes);
  }
  ++saves_;
}

Result<std::optional<std::string>> MemoryStateStore::Load(
    std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(shard_id);
  if (it == states_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status MemoryStateStore::Forget(std::string_view shard_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(shard_id);
  if (it != states_.end()) states_.erase(it);
  return Status::Ok();
}

size_t MemoryStateStore::saves() const {
  std::lock_guard<std::mutex> lock(mu_);
  return saves_;
}

const std::string* MemoryStateStore::OutRowLocked(
    std::string_view from_shard, std::string_view subscriber) const {
  for (const auto& [id, row] : transfers_) {
    const TransferRecord& r = row.record;
    if (r.step == TransferStep::kOut && r.from_shard == from_shard &&
        r.subscriber == subscriber) {
      return &id;
    }
  }
  return nullptr;
}

Status MemoryStateStore::BeginTransfers(
    std::span<const TransferRecord> records, std::string_view source_shard,
    std::optional<std::string_view> source_state) {
  const int64_t now = wall_clock_->UnixNowMs();
  std::lock_guard<std::mutex> lock(mu_);
  // Every check before any write: all or nothing.
  std::set<std::string_view> batch_ids;
  std::map<std::pair<std::string_view, std::string_view>, std::string_view>
      batch_outs;
  for (const TransferRecord& r : records) {
    if (transfers_.contains(r.id) || !batch_ids.insert(r.id).second) {
      return TransferIdExists(r.id);
    }
    if (const std::string* out = OutRowLocked(r.from_shard, r.subscriber)) {
      return AlreadyMovingOut(r, *out);
    }
    auto [it, inserted] =
        batch_outs.emplace(std::pair(std::string_view(r.from_shard),
                                     std::string_view(r.subscriber)),
                           r.id);
    if (!inserted) return AlreadyMovingOut(r, it->second);
  }
  for (const TransferRecord& r : records) {
    Row row{r, next_seq_++};
    row.record.step = TransferStep::kOut;
    if (row.record.created_unix_ms == 0) row.record.created_unix_ms = now;
    if (row.record.updated_unix_ms == 0) row.record.updated_unix_ms = now;
    transfers_.emplace(r.id, std::move(row));
  }
  if (source_state.has_value()) SaveLocked(source_shard, *source_state);
  return Status::Ok();
}

Status MemoryStateStore::AdvanceTransfers(
    std::span<const TransferAdvance> steps, std::string_view shard_id,
    std::optional<std::string_view> state) {
  for (const TransferAdvance& a : steps) {
    TESSERA_RETURN_IF_ERROR(CheckTransferAdvance(a));
  }
  const int64_t now = wall_clock_->UnixNowMs();
  std::lock_guard<std::mutex> lock(mu_);
  // Applied in order to a staged copy of the steps (the same id may appear
  // twice), then committed.
  std::map<std::string_view, TransferStep> staged;
  for (const TransferAdvance& a : steps) {
    auto row = transfers_.find(a.id);
    if (row == transfers_.end()) return NoTransfer(a.id);
    auto it = staged.find(a.id);
    TransferStep current =
        it != staged.end() ? it->second : row->second.record.step;
    if (current != a.from) return TransferNotAt(a, current);
    staged[a.id] = a.to;
  }
  for (const auto& [id, step] : staged) {
    TransferRecord& r = transfers_.find(id)->second.record;
    r.step = step;
    r.updated_unix_ms = now;
  }
  if (state.has_value()) SaveLocked(shard_id, *state);
  return Status::Ok();
}

Result<std::vector<TransferRecord>> MemoryStateStore::ListTransfers() {
  std::vector<const Row*> rows;
  std::vector<TransferRecord> out;
  std::lock_guard<std::mutex> lock(mu_);
  rows.reserve(transfers_.size());
  for (const auto& [id, row] : transfers_) rows.push_back(&row);
  std::sort(rows.begin(), rows.end(), [](const Row* a, const Row* b) {
    if (a->record.created_unix_ms != b->record.created_unix_ms) {
      return a->record.created_unix_ms < b->record.created_unix_ms;
    }
    return a->seq < b->seq;
  });
  out.reserve(rows.size());
  for (const Row* row : rows) out.push_back(row->record);
  return out;
}

Status MemoryStateStore::DeleteTransfers(std::span<const std::string> ids) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& id : ids) {
    auto it = transfers_.find(id);
    if (it != transfers_.end()) transfers_.erase(it);
  }
  return Status::Ok();
}

}  // namespace tessera::shard
