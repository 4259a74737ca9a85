// The move state machine (TALK.md "The flow of a move"), as ShardHost
// members: each step runs on the worker of the shard it changes, and a Move
// goes from mailbox to mailbox (source -> target -> source).
//
//   source: checks, transfer_out, BeginTransfers(kOut + source save),
//           players in `moving`, arrivals posted to the target
//   target: transfer_in, AdvanceTransfers(kOut->kIn + target save),
//           MovedTo recorded, OnTransfer, outcome posted to the source
//   source: accepted -> done; refused / not found -> transfer_in(returning),
//           AdvanceTransfers(kOut->kBack + source save), row deleted
#include <cstdio>
#include <set>
#include <span>
#include <utility>

#include "common/fault_point.h"
#include "common/text.h"
#include "shard/hosted_shard.h"
#include "shard/shard_host.h"
#include "shard/transfers.h"

namespace tessera::shard {
namespace {

constexpr size_t kLogTextBytes = 512;

}  // namespace

// ---- The flow ---------------------------------------------------------------

void ShardHost::ProcessTalk(HostedShard& shard, int64_t now_us) {
  // Admin moves first: a player whose answer has not been taken yet is
  // still moving (kBusy).
  std::vector<std::shared_ptr<Move>> requests;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    requests.swap(shard.move_requests);
  }
  if (!requests.empty()) StartMoves(shard, std::move(requests), now_us);
  TakeOutcomes(shard, now_us);
  TakeArrivals(shard, now_us);
  if (shard.guest->failed()) {
    Finish(shard, StopReason::kFailed, shard.guest->failure(), now_us);
  }
}

std::string ShardHost::NewMoveId() {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx-%llx",
                static_cast<unsigned long long>(move_id_seed_),
                static_cast<unsigned long long>(
                    move_counter_.fetch_add(1, std::memory_order_relaxed)));
  return buf;
}

void ShardHost::StartMoves(HostedShard& source,
                           std::vector<std::shared_ptr<Move>> moves,
                           int64_t now_us) {
  GuestShard& guest = *source.guest;
  bool source_hooks = false;
  std::set<std::string, std::less<>> moving;
  {
    std::lock_guard<std::mutex> lock(source.mu);
    source_hooks = source.has_transfers;
    for (const auto& [sub, to] : source.moving) moving.insert(sub);
  }
  std::vector<std::shared_ptr<Move>> out;
  std::vector<std::shared_ptr<HostedShard>> targets;
  for (std::shared_ptr<Move>& move : moves) {
    TransferRecord& r = move->record;
    r.from_shard = source.id;
    MoveTargetInfo info;
    std::shared_ptr<HostedShard> target =
        r.to_shard.empty() || r.to_shard == r.from_shard ? nullptr
                                                         : Find(r.to_shard);
    if (target != nullptr) {
      std::lock_guard<std::mutex> lock(target->mu);
      info.running = target->info.status == ShardStatus::kRunning;
      info.has_transfers = target->has_transfers;
    }
    if (guest.failed()) {
      move->outcome = MoveError(TransferError::kFailed,
                                "shard \"" + source.id + "\" failed");
    } else if (auto error = CheckMove(r, source_hooks, info,
                                      moving.count(r.subscriber) != 0)) {
      move->outcome = *error;
    }
    if (!move->outcome.ok()) {
      EndMove(*move, now_us);
      continue;
    }
    FaultPoint("transfer.before_out");
    Result<std::optional<std::string>> state = guest.TransferOut(r.subscriber);
    if (!state.ok() || !state->has_value()) {
      move->outcome = !state.ok()
                          ? MoveError(guest.failed() ? TransferError::kFailed
                                                     : TransferError::kRefused,
                                      state.status().message())
                          : MoveError(TransferError::kNoPlayer,
                                      "no player \"" + r.subscriber +
                                          "\" in shard \"" + source.id + "\"");
      EndMove(*move, now_us);
      continue;
    }
    r.state = std::move(**state);
    r.id = NewMoveId();
    r.step = TransferStep::kOut;
    r.created_unix_ms = r.updated_unix_ms = wall_clock_->UnixNowMs();
    moving.insert(r.subscriber);
    out.push_back(move);
    targets.push_back(std::move(target));
  }
  if (out.empty()) return;

  std::vector<TransferRecord> records;
  records.reserve(out.size());
  for (const auto& move : out) records.push_back(move->record);
  Status begun =
      WithJournalState(guest, [&](std::optional<std::string_view> state) {
        return journal_->BeginTransfers(records, source.id, state);
      });
  if (!begun.ok()) {
    // Nothing was written: the players go back into the module.
    for (const auto& move : out) {
      const TransferRecord& r = move->record;
      if (!guest.failed()) {
        (void)guest.TransferIn(r.subscriber, r.state, r.claims_json,
                               /*returning=*/true, r.to_shard);
      }
      move->outcome =
          MoveError(TransferError::kFailed, "journal: " + begun.message());
      EndMove(*move, now_us);
    }
    return;
  }
  FaultPoint("transfer.after_out");
  {
    std::lock_guard<std::mutex> lock(source.mu);
    for (const auto& move : out) {
      source.moving.insert_or_assign(move->record.subscriber,
                                     move->record.to_shard);
    }
  }
  std::vector<std::shared_ptr<Move>> back;
  for (size_t i = 0; i < out.size(); ++i) {
    HostedShard& target = *targets[i];
    bool posted = false;
    {
      std::lock_guard<std::mutex> lock(target.mu);
      if (target.info.status == ShardStatus::kRunning && !target.removed) {
        target.arrivals.push_back(out[i]);
        posted = true;
      }
    }
    if (posted) {
      pool_->Poke(targets[i]);
    } else {
      out[i]->outcome = MoveError(TransferError::kNotFound,
                                  "shard \"" + target.id + "\" stopped");
      back.push_back(out[i]);
    }
  }
  if (!back.empty()) ReturnMoves(source, std::move(back), now_us);
}

void ShardHost::TakeArrivals(HostedShard& target, int64_t now_us) {
  std::vector<std::shared_ptr<Move>> arrivals;
  {
    std::lock_guard<std::mutex> lock(target.mu);
    arrivals.swap(target.arrivals);
  }
  if (arrivals.empty()) return;
  GuestShard& guest = *target.guest;
  std::vector<std::shared_ptr<Move>> accepted;
  for (std::shared_ptr<Move>& move : arrivals) {
    const TransferRecord& r = move->record;
    Status in = guest.failed()
                    ? Status(StatusCode::kTrap, guest.failure())
                    : guest.TransferIn(r.subscriber, r.state, r.claims_json,
                                       /*returning=*/false, r.from_shard);
    if (in.ok()) {
      accepted.push_back(std::move(move));
    } else {
      move->outcome = MoveError(
          guest.failed() ? TransferError::kFailed : TransferError::kRefused,
          in.message());
      PostOutcome(std::move(move), now_us);
    }
  }
  FaultPoint("transfer.after_in_call");
  if (accepted.empty()) return;
  std::vector<TransferAdvance> steps;
  for (const auto& move : accepted) {
    steps.push_back(TransferAdvance{move->record.id, TransferStep::kOut,
                                    TransferStep::kIn});
  }
  Status advanced =
      WithJournalState(guest, [&](std::optional<std::string_view> state) {
        return journal_->AdvanceTransfers(steps, target.id, state);
      });
  if (!advanced.ok()) {
    // The journal still says kOut: the target lets the players go again
    // and their source takes them back.
    for (auto& move : accepted) {
      if (!guest.failed()) (void)guest.TransferOut(move->record.subscriber);
      move->outcome =
          MoveError(TransferError::kFailed, "journal: " + advanced.message());
      PostOutcome(std::move(move), now_us);
    }
    return;
  }
  FaultPoint("transfer.after_in");
  const int64_t now_ms = wall_clock_->UnixNowMs();
  std::vector<std::string> stale;
  for (auto& move : accepted) {
    const TransferRecord& r = move->record;
    move->committed_us = clock_->NowUs();
    MovedTo moved{r.subscriber, target.id, r.claims_json, now_ms};
    // The player came back here: its old redirect from this shard is over.
    if (auto old = moved_->Erase(target.id, r.subscriber)) {
      stale.push_back(std::move(*old));
    }
    if (auto old = moved_->Record(r.from_shard, moved, r.id)) {
      stale.push_back(std::move(*old));
    }
    if (sink_ != nullptr) sink_->OnTransfer(r.from_shard, moved);
    move->outcome = TransferResult{};
    PostOutcome(std::move(move), now_us);
  }
  if (!stale.empty()) (void)journal_->DeleteTransfers(stale);
}

void ShardHost::PostOutcome(std::shared_ptr<Move> move, int64_t now_us) {
  std::shared_ptr<HostedShard> source = move->source.lock();
  bool posted = false;
  if (source != nullptr) {
    std::lock_guard<std::mutex> lock(source->mu);
    if (!source->removed) {
      source->outcomes.push_back(move);
      posted = true;
    }
  }
  if (posted) {
    pool_->Poke(source);
    return;
  }
  // The source is gone: the move ends here.
  if (!move->outcome.ok()) {
    HostLog(move->record.from_shard,
            "error: " + DescribeMove(move->record) +
                " failed and its source is gone: the player is dropped");
    (void)journal_->DeleteTransfers(std::span(&move->record.id, 1));
  }
  EndMove(*move, now_us);
}

void ShardHost::TakeOutcomes(HostedShard& source, int64_t now_us) {
  std::vector<std::shared_ptr<Move>> outcomes;
  {
    std::lock_guard<std::mutex> lock(source.mu);
    outcomes.swap(source.outcomes);
    for (const auto& move : outcomes) {
      if (move->outcome.ok()) source.moving.erase(move->record.subscriber);
    }
  }
  std::vector<std::shared_ptr<Move>> back;
  for (auto& move : outcomes) {
    if (move->outcome.ok()) {
      EndMove(*move, now_us);
    } else {
      back.push_back(std::move(move));
    }
  }
  if (!back.empty()) ReturnMoves(source, std::move(back), now_us);
}

void ShardHost::ReturnMoves(HostedShard& source,
                            std::vector<std::shared_ptr<Move>> moves,
                            int64_t now_us) {
  std::vector<TransferAdvance> steps;
  std::vector<std::string> ids;
  GuestShard* guest = source.guest.get();
  const bool alive = guest != nullptr && !guest->failed();
  for (const auto& move : moves) {
    const TransferRecord& r = move->record;
    ids.push_back(r.id);
    steps.push_back(
        TransferAdvance{r.id, TransferStep::kOut, TransferStep::kBack});
    if (!alive) {
      HostLog(source.id, "error: " + DescribeMove(r) +
                             " failed and its source has stopped: the "
                             "player is dropped");
      continue;
    }
    Status back = guest->TransferIn(r.subscriber, r.state, r.claims_json,
                                    /*returning=*/true, r.to_shard);
    if (!back.ok()) {
      HostLog(source.id, "error: shard " + QuoteForLog(source.id) +
                             " refused its returning player " +
                             QuoteForLog(r.subscriber) + " (a module bug): " +
                             EscapeForLog(back.message(), kLogTextBytes));
    }
  }
  if (alive) {
    Status advanced =
        WithJournalState(*guest, [&](std::optional<std::string_view> state) {
          return journal_->AdvanceTransfers(steps, source.id, state);
        });
    if (!advanced.ok()) {
      // The rows stay kOut: a restart takes the players back again.
      HostLog(source.id, "error: journal: " + advanced.message());
      ids.clear();
    }
  }
  if (!ids.empty()) (void)journal_->DeleteTransfers(ids);
  {
    std::lock_guard<std::mutex> lock(source.mu);
    for (const auto& move : moves) source.moving.erase(move->record.subscriber);
  }
  for (const auto& move : moves) EndMove(*move, now_us);
}

void ShardHost::EndMove(Move& move, int64_t now_us) {
  if (move.ended) return;
  move.ended = true;
  const TransferResult& result = move.outcome;
  transfers_[static_cast<size_t>(result.error)].fetch_add(
      1, std::memory_order_relaxed);
  if (!result.ok()) {
    HostLog(move.record.from_shard,
            DescribeMove(move.record) +
                " failed: " + TransferErrorCode(result.error) + ": " +
                EscapeForLog(result.message, kLogTextBytes));
  }
  const int64_t end_us =
      result.ok() && move.committed_us > 0 ? move.committed_us : now_us;
  if (options_.on_transfer) {
    options_.on_transfer(result, end_us - move.requested_us);
  }
  if (move.done) {
    auto done = std::move(move.done);
    move.done = nullptr;
    done(result);
  }
}

void ShardHost::StopTalk(HostedShard& shard, int64_t now_us) {
  if (shard.inbox != nullptr) {
    if (size_t dropped = router_->Remove(shard.id, shard.inbox.get())) {
      RefuseMessage("", shard.id, "", MessageRefusal::kStopped, dropped);
    }
  }
  // Its refusal lines are over: the limiter keeps only live shards' slots.
  log_limiter_->Forget(shard.id);
  std::vector<std::shared_ptr<Move>> arrivals, requests;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    arrivals.swap(shard.arrivals);
    requests.swap(shard.move_requests);
  }
  for (auto& move : arrivals) {
    move->outcome = MoveError(TransferError::kNotFound,
                              "shard \"" + shard.id + "\" stopped");
    PostOutcome(std::move(move), now_us);
  }
  for (auto& move : requests) {
    move->outcome = MoveError(TransferError::kNotFound,
                              "shard \"" + shard.id + "\" stopped");
    EndMove(*move, now_us);
  }
}

void ShardHost::DrainTalk(HostedShard& shard, int64_t now_us, std::string why) {
  std::vector<std::shared_ptr<Move>> outcomes, arrivals, requests;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.removed = true;
    outcomes.swap(shard.outcomes);
    arrivals.swap(shard.arrivals);
    requests.swap(shard.move_requests);
  }
  // Refused moves of a stopped shard lose their player (it stopped); at
  // Shutdown the journal rows stay for the next boot.
  const bool stopped = shard.done;
  for (auto& move : outcomes) {
    if (!move->outcome.ok() && stopped) {
      HostLog(shard.id, "error: " + DescribeMove(move->record) +
                            " failed and its source has stopped: the "
                            "player is dropped");
      (void)journal_->DeleteTransfers(std::span(&move->record.id, 1));
    } else if (!move->outcome.ok()) {
      move->outcome = MoveError(TransferError::kFailed, why);
    }
    EndMove(*move, now_us);
  }
  for (auto& move : arrivals) {
    move->outcome = MoveError(TransferError::kFailed, why);
    EndMove(*move, now_us);
  }
  for (auto& move : requests) {
    move->outcome = MoveError(TransferError::kNotFound, why);
    EndMove(*move, now_us);
  }
}

void ShardHost::MaybeExpireMoves(int64_t now_us) {
  int64_t next = next_expiry_us_.load(std::memory_order_relaxed);
  if (now_us < next ||
      !next_expiry_us_.compare_exchange_strong(next, now_us + 1'000'000,
                                               std::memory_order_relaxed)) {
    return;
  }
  std::vector<std::string> ids = moved_->Expire(wall_clock_->UnixNowMs());
  if (!ids.empty()) (void)journal_->DeleteTransfers(ids);
}

}  // namespace tessera::shard
