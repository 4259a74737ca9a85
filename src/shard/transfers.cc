// Moves between shards: the pure parts (transfers.h) and the ShardHost
// members that are not the flow itself: Transfer, FindMove, the counters,
// and the recovery at boot (Restore's own moves, RecoverTransfers). The
// flow is transfer_flow.cc.
#include "shard/transfers.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "common/text.h"
#include "shard/hosted_shard.h"
#include "shard/shard_host.h"

namespace tessera::shard {
namespace {

constexpr size_t kLogTextBytes = 512;

}  // namespace

TransferResult MoveError(TransferError error, std::string message) {
  return TransferResult{error, std::move(message)};
}

std::string QuoteForLog(std::string_view text) {
  return "\"" + EscapeForLog(text, kLogTextBytes) + "\"";
}

std::string DescribeMove(const TransferRecord& r) {
  return "move of " + QuoteForLog(r.subscriber) + " from shard " +
         QuoteForLog(r.from_shard) + " to shard " + QuoteForLog(r.to_shard);
}

std::optional<TransferResult> CheckMove(const TransferRecord& move,
                                        bool source_has_transfers,
                                        const MoveTargetInfo& target,
                                        bool already_moving) {
  if (move.from_shard.empty() || move.to_shard.empty() ||
      move.subscriber.empty()) {
    return MoveError(TransferError::kInvalid,
                     "a move needs a source, a target and a subscriber");
  }
  if (move.from_shard == move.to_shard) {
    return MoveError(TransferError::kInvalid,
                     "a player cannot move to the shard it is in");
  }
  if (!target.running) {
    return MoveError(TransferError::kNotFound,
                     "no shard \"" + move.to_shard + "\" is running");
  }
  if (!source_has_transfers || !target.has_transfers) {
    return MoveError(
        TransferError::kUnsupported,
        "shard \"" + (source_has_transfers ? move.to_shard : move.from_shard) +
            "\" has no transfer hooks");
  }
  if (already_moving) {
    return MoveError(TransferError::kBusy,
                     "\"" + move.subscriber + "\" is already moving");
  }
  return std::nullopt;
}

bool IsJsonObject(std::string_view claims_json) {
  nlohmann::json parsed = nlohmann::json::parse(claims_json, nullptr, false);
  return !parsed.is_discarded() && parsed.is_object();
}

std::optional<std::string> MovedRecords::Record(std::string_view from,
                                                MovedTo moved,
                                                std::string journal_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Key key(std::string(from), moved.subscriber);
  std::optional<std::string> replaced;
  if (auto it = records_.find(key); it != records_.end()) {
    replaced = std::move(it->second.journal_id);
  }
  records_.insert_or_assign(std::move(key),
                            Entry{std::move(moved), std::move(journal_id)});
  return replaced;
}

std::optional<MovedTo> MovedRecords::Find(std::string_view from,
                                          std::string_view subscriber,
                                          int64_t now_unix_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = records_.find(Key(std::string(from), std::string(subscriber)));
  if (it == records_.end() ||
      now_unix_ms - it->second.moved.moved_unix_ms >= kMovedRecordMs) {
    return std::nullopt;
  }
  return it->second.moved;
}

std::optional<std::string> MovedRecords::Erase(std::string_view from,
                                               std::string_view subscriber) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = records_.find(Key(std::string(from), std::string(subscriber)));
  if (it == records_.end()) return std::nullopt;
  std::string id = std::move(it->second.journal_id);
  records_.erase(it);
  return id;
}

std::vector<std::string> MovedRecords::Expire(int64_t now_unix_ms) {
  std::vector<std::string> ids;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = records_.begin(); it != records_.end();) {
    if (now_unix_ms - it->second.moved.moved_unix_ms >= kMovedRecordMs) {
      ids.push_back(std::move(it->second.journal_id));
      it = records_.erase(it);
    } else {
      ++it;
    }
  }
  return ids;
}

size_t MovedRecords::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_.size();
}

// ---- ShardHost: the API ---------------------------------------------------

void ShardHost::Transfer(TransferSpec spec,
                         std::function<void(TransferResult)> done) {
  auto move = std::make_shared<Move>();
  move->record.from_shard = std::move(spec.from);
  move->record.to_shard = std::move(spec.to);
  move->record.subscriber = std::move(spec.subscriber);
  move->record.claims_json = std::move(spec.claims_json);
  move->done = std::move(done);
  const int64_t now = clock_->NowUs();
  move->requested_us = now;
  const TransferRecord& r = move->record;
  if (r.from_shard.empty() || r.to_shard.empty() || r.subscriber.empty() ||
      r.from_shard == r.to_shard) {
    move->outcome = *CheckMove(r, true, {true, true}, false);
    return EndMove(*move, now);
  }
  if (!IsJsonObject(r.claims_json)) {
    move->outcome =
        MoveError(TransferError::kInvalid, "claims must be a JSON object");
    return EndMove(*move, now);
  }
  std::shared_ptr<HostedShard> source = Find(r.from_shard);
  bool queued = false;
  if (source != nullptr) {
    std::lock_guard<std::mutex> lock(source->mu);
    if (source->info.status != ShardStatus::kStopped && !source->removed) {
      move->source = source;
      source->move_requests.push_back(move);
      queued = true;
    }
  }
  if (!queued) {
    move->outcome = MoveError(TransferError::kNotFound,
                              "no shard \"" + r.from_shard + "\" is running");
    return EndMove(*move, now);
  }
  pool_->Poke(source);
}

std::optional<MovedTo> ShardHost::FindMove(std::string_view from,
                                           std::string_view subscriber) const {
  return moved_->Find(from, subscriber, wall_clock_->UnixNowMs());
}

ShardHost::TalkCounters ShardHost::talk_counters() const {
  TalkCounters c;
  c.messages_sent = messages_sent_.load(std::memory_order_relaxed);
  c.messages_delivered = messages_delivered_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < messages_refused_.size(); ++i) {
    c.messages_refused[i] =
        messages_refused_[i].load(std::memory_order_relaxed);
  }
  for (size_t i = 0; i < transfers_.size(); ++i) {
    c.transfers[i] = transfers_[i].load(std::memory_order_relaxed);
  }
  return c;
}

// ---- Recovery ---------------------------------------------------------------

Status ShardHost::WithJournalState(
    GuestShard& guest,
    const std::function<Status(std::optional<std::string_view>)>& write) {
  if (store_ == nullptr || !guest.has_save() || guest.failed()) {
    return write(std::nullopt);
  }
  Result<std::optional<std::string>> saved = guest.Save();
  if (!saved.ok()) return saved.status();
  if (!saved->has_value()) return write(std::nullopt);
  return write(**saved);
}

Status ShardHost::RecoverOwnMoves(GuestShard& guest, int64_t now_us) {
  (void)now_us;
  Result<std::vector<TransferRecord>> rows = journal_->ListTransfers();
  if (!rows.ok()) return rows.status();
  std::vector<TransferAdvance> steps;
  std::vector<std::string> ids;
  const std::string& id = guest.shard_id();
  for (const TransferRecord& row : *rows) {
    if (row.from_shard != id || row.step != TransferStep::kOut) continue;
    Status back =
        guest.has_transfers()
            ? guest.TransferIn(row.subscriber, row.state, row.claims_json,
                               /*returning=*/true, row.to_shard)
            : Refused("the module has no transfer hooks");
    if (guest.failed()) return Status(StatusCode::kTrap, guest.failure());
    if (!back.ok()) {
      HostLog(id, "error: shard " + QuoteForLog(id) +
                      " refused its returning player " +
                      QuoteForLog(row.subscriber) + " (a module bug): " +
                      EscapeForLog(back.message(), kLogTextBytes));
    } else {
      HostLog(id, "recovery: " + DescribeMove(row) +
                      " did not finish; the player is back in " +
                      QuoteForLog(id));
    }
    steps.push_back(
        TransferAdvance{row.id, TransferStep::kOut, TransferStep::kBack});
    ids.push_back(row.id);
  }
  if (steps.empty()) return Status::Ok();
  TESSERA_RETURN_IF_ERROR(
      WithJournalState(guest, [&](std::optional<std::string_view> state) {
        return journal_->AdvanceTransfers(steps, id, state);
      }));
  return journal_->DeleteTransfers(ids);
}

Status ShardHost::RecoverTransfers() {
  Result<std::vector<TransferRecord>> rows = journal_->ListTransfers();
  if (!rows.ok()) return rows.status();
  const int64_t now_ms = wall_clock_->UnixNowMs();
  std::vector<std::string> drop;
  for (TransferRecord& row : *rows) {
    switch (row.step) {
      case TransferStep::kIn:
        if (now_ms - row.updated_unix_ms < kMovedRecordMs) {
          MovedTo moved{row.subscriber, row.to_shard, row.claims_json,
                        row.updated_unix_ms};
          if (auto old =
                  moved_->Record(row.from_shard, std::move(moved), row.id)) {
            drop.push_back(std::move(*old));
          }
        } else {
          drop.push_back(row.id);
        }
        break;
      case TransferStep::kBack:
        drop.push_back(row.id);
        break;
      case TransferStep::kOut: {
        std::optional<ShardInfo> source = Get(row.from_shard);
        if (source && source->status != ShardStatus::kStopped) break;
        HostLog(row.from_shard, "warning: recovery: dropped the unfinished " +
                                    DescribeMove(row) +
                                    ": the source shard was not restored");
        drop.push_back(row.id);
        break;
      }
    }
  }
  if (drop.empty()) return Status::Ok();
  return journal_->DeleteTransfers(drop);
}

}  // namespace tessera::shard
