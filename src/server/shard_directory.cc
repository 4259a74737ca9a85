#include "server/shard_directory.h"

#include <iostream>
#include <utility>

#include "common/text.h"
#include "shard/guest_shard.h"

namespace tessera::server {

ShardDirectory::ShardDirectory(shard::ShardHost* host,
                               const shard::KindRegistry* kinds,
                               store::Store* store, DirectoryOptions options)
    : host_(host), kinds_(kinds), store_(store), options_(std::move(options)) {}

int64_t ShardDirectory::NowMs() const {
  return (options_.wall_clock != nullptr ? *options_.wall_clock
                                         : *RealWallClock::Get())
      .UnixNowMs();
}

void ShardDirectory::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << line << "\n";
  }
}

size_t ShardDirectory::ActiveCount() const {
  size_t active = 0;
  for (const shard::ShardInfo& info : host_->List()) {
    if (info.status != shard::ShardStatus::kStopped) ++active;
  }
  return active;
}

Status ShardDirectory::Create(std::string_view kind, std::string_view id,
                              std::string_view params) {
  std::lock_guard<std::mutex> create_lock(create_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_.contains(id)) {
      return Status(StatusCode::kAlreadyExists,
                    "shard \"" + std::string(id) +
                        "\" is recorded as failed; stop it to forget it "
                        "before creating it again");
    }
  }
  if (options_.capacity > 0 && ActiveCount() >= options_.capacity) {
    return Status(StatusCode::kResourceExhausted,
                  "this server already runs its capacity of " +
                      std::to_string(options_.capacity) + " shards");
  }
  if (options_.placement != nullptr) {
    TESSERA_RETURN_IF_ERROR(options_.placement->Claim(id));
  }
  Status started = host_->Create(kind, id, params);
  if (!started.ok()) {
    if (options_.placement != nullptr && !host_->Get(id).has_value()) {
      ReleasePlacement(id);
    }
    return started;
  }
  Status recorded = Record(kind, id, params);
  if (recorded.ok() && options_.lifecycle_log) {
    constexpr size_t kMax = 128;
    options_.lifecycle_log("shard " + EscapeForLog(id, kMax) + " (" +
                           EscapeForLog(kind, kMax) + ") started");
  }
  return recorded;
}

Status ShardDirectory::Record(std::string_view kind, std::string_view id,
                              std::string_view params) {
  if (store_ == nullptr) return Status::Ok();

  std::lock_guard<std::mutex> lock(mu_);
  store::ShardRecord record;
  record.id = std::string(id);
  record.kind = std::string(kind);
  record.params = std::string(params);
  record.status = kRecordRunning;
  record.created_unix_ms = record.updated_unix_ms = NowMs();
  Status put = store_->PutShard(record);
  if (!put.ok()) {
    // Not recorded means not resumable: do not keep it running silently.
    host_->Stop(id);
    return Status(put.code(), "the shard could not be recorded (" +
                                  put.message() + "); it was stopped");
  }
  return Status::Ok();
}

Status ShardDirectory::Stop(std::string_view id) {
  const Status stopped = host_->Stop(id);
  std::lock_guard<std::mutex> lock(mu_);
  auto failed = failed_.find(id);
  const bool was_failed = failed != failed_.end();
  if (was_failed) failed_.erase(failed);
  if (!stopped.ok() && !was_failed) return stopped;
  if (store_ != nullptr) {
    // On failure the record stays; OnStopped tries again for a running
    // shard, the next start-up lists a failed one again.
    Status deleted = store_->DeleteShard(id);
    if (!deleted.ok()) {
      Log("shard " + std::string(id) +
          ": stopped, but its record could not be deleted: " +
          deleted.ToString());
    } else {
      ReleasePlacement(id);
    }
  }
  return Status::Ok();
}

void ShardDirectory::ReleasePlacement(std::string_view id) const {
  if (options_.placement == nullptr) return;
  Status released = options_.placement->Release(id);
  if (!released.ok()) {
    Log("shard " + std::string(id) +
        ": forgotten, but its placement could not be removed: " +
        released.ToString());
  }
}

void ShardDirectory::OnStopped(std::string_view id) {
  if (store_ == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<shard::ShardInfo> info = host_->Get(id);
  if (info && info->status != shard::ShardStatus::kStopped) return;  // newer
  if (failed_.contains(id)) return;  // kept until an operator stops it
  Status deleted = store_->DeleteShard(id);
  if (!deleted.ok()) {
    Log("shard " + std::string(id) +
        ": stopped, but its record could not be deleted: " +
        deleted.ToString());
  } else {
    ReleasePlacement(id);
  }
}

void ShardDirectory::MarkFailed(store::ShardRecord record,
                                const std::string& error) {
  record.status = kRecordFailed;
  record.error = error;
  record.updated_unix_ms = NowMs();
  Status st = store_->SetShardStatus(record.id, kRecordFailed, error);
  if (!st.ok()) {
    Log("shard " + record.id + ": cannot record its failure: " + st.ToString());
  }
  failed_[record.id] = std::move(record);
}

Result<RestoreReport> ShardDirectory::RestoreAll(
    const std::function<void(const std::string&)>& log,
    const std::function<bool(std::string_view id)>& only) {
  RestoreReport report;
  if (store_ == nullptr) return report;
  Result<std::vector<store::ShardRecord>> records = store_->ListShards();
  if (!records.ok()) return records.status();
  for (store::ShardRecord& record : *records) {
    if (only && !only(record.id)) continue;
    Status started;
    bool from_save = false;
    if (options_.placement != nullptr) {
      started = options_.placement->Claim(record.id);
      if (started.code() == StatusCode::kAlreadyExists) {
        ++report.elsewhere;  // another live machine runs it
        continue;
      }
    }
    if (!started.ok()) {
      // This machine could not place it (fenced, the store): it stays
      // recorded and placed where it was, for whoever claims it next.
      if (log) {
        log("shard " + record.id + " (" + record.kind +
            ") not started here: " + started.ToString());
      }
      continue;
    } else if (kinds_->Find(record.kind) == nullptr) {
      started = NotFound("unknown shard kind \"" + record.kind +
                         "\" (not in the app's manifest)");
    } else {
      Result<std::optional<std::string>> saved = store_->Load(record.id);
      if (!saved.ok()) {
        started = saved.status();
      } else {
        from_save = saved->has_value();
        started = from_save
                      ? host_->Restore(record.kind, record.id, record.params)
                      : host_->Create(record.kind, record.id, record.params);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (started.ok()) {
      ++(from_save ? report.restored : report.created);
      failed_.erase(record.id);  // a record listed twice
      if (record.status != kRecordRunning) {
        Status st = store_->SetShardStatus(record.id, kRecordRunning, "");
        if (!st.ok()) Log("shard " + record.id + ": " + st.ToString());
      }
      continue;
    }
    ++report.failed;
    // The module's refusal text: guest text, kept as valid UTF-8 and
    // escaped for the log.
    constexpr size_t kMax = shard::GuestShard::kMaxLogLineBytes;
    const std::string error = SafeUtf8(started.message(), kMax);
    if (log) {
      log("shard " + record.id + " (" + record.kind +
          ") did not start: " + EscapeForLog(error, kMax));
    }
    MarkFailed(std::move(record), error);
  }
  return report;
}

std::vector<store::ShardRecord> ShardDirectory::FailedRecords() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<store::ShardRecord> out;
  out.reserve(failed_.size());
  for (const auto& [id, record] : failed_) out.push_back(record);
  return out;
}

std::optional<store::ShardRecord> ShardDirectory::FailedRecord(
    std::string_view id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failed_.find(id);
  if (it == failed_.end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera::server
