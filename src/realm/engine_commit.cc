// RealmInstance: commits, group commit, snapshots and catch-up (engine.h).
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "realm/engine.h"
#include "realm/rules.h"

namespace tessera::realm {
namespace {

Status Unavailable(const std::string& key, const Status& cause) {
  return Status(StatusCode::kUnavailable,
                "realm " + key +
                    " stopped after a failed flush (reopen it to reload the "
                    "store's state): " +
                    cause.ToString());
}

}  // namespace

Result<int64_t> RealmInstance::Submit(const Patch& patch,
                                      std::string_view avatar) {
  if (!broken_.ok()) return Unavailable(key_, broken_);
  if (patch.empty()) {
    return InvalidArgument("realm " + key_ +
                           ": an empty patch commits nothing");
  }
  if (!avatar.empty()) {
    for (size_t i = 0; i < patch.size(); ++i) {
      Status allowed = CheckWrite(kind_.rules, patch[i], avatar);
      if (!allowed.ok()) {
        return Status(allowed.code(),
                      "op " + std::to_string(i) + ": " + allowed.message());
      }
    }
  }
  TESSERA_RETURN_IF_ERROR(ApplyPatch(patch, &state_));
  KeyTable keys;
  ++version_;
  pending_.push_back({version_, EncodePatch(patch, &keys)});
  return version_;
}

void RealmInstance::QueueAlarms(std::vector<RealmAlarm> set,
                                std::vector<std::string> cancelled) {
  if (store_ == nullptr) return;
  for (std::string& name : cancelled) {
    std::erase_if(alarms_set_,
                  [&](const RealmAlarm& a) { return a.name == name; });
    alarms_cancelled_.push_back(std::move(name));
  }
  for (RealmAlarm& alarm : set) {
    std::erase_if(alarms_set_,
                  [&](const RealmAlarm& a) { return a.name == alarm.name; });
    alarms_set_.push_back(std::move(alarm));
  }
}

Status RealmInstance::Flush() {
  if (!broken_.ok()) return Unavailable(key_, broken_);
  const int64_t previous = durable_version_;
  if ((!pending_.empty() || has_queued_alarms()) && store_ != nullptr) {
    RealmAppend entry{key_, epoch_, std::move(pending_), std::move(alarms_set_),
                      std::move(alarms_cancelled_)};
    pending_.clear();
    alarms_set_.clear();
    alarms_cancelled_.clear();
    Status appended = store_->Append(std::span<const RealmAppend>(&entry, 1));
    if (!appended.ok()) {
      broken_ = appended;
      return appended;
    }
    pending_ = std::move(entry.commits);
  }
  for (LoggedCommit& commit : pending_) Remember(std::move(commit));
  pending_.clear();
  durable_version_ = version_;
  if (store_ == nullptr) return Status::Ok();
  const int64_t every = kind_.snapshot_every_versions;
  if (every > 0 && previous / every != durable_version_ / every) {
    snapshot_due_ = true;
  }
  if (snapshot_due_) {
    const RealmSnapshot snapshot{epoch_, durable_version_, kind_.schema_hash,
                                 state_.dump()};
    snapshot_status_ = store_->PutSnapshot(key_, snapshot, kind_.log_window);
    snapshot_due_ = !snapshot_status_.ok();
  }
  return Status::Ok();
}

Result<CatchUpAnswer> RealmInstance::CatchUp(int64_t epoch, int64_t version) {
  TESSERA_RETURN_IF_ERROR(Flush());
  CatchUpAnswer answer;
  answer.epoch = epoch_;
  answer.version = version_;
  const bool replayable = epoch == epoch_ && version >= 0 &&
                          version <= version_ &&
                          version_ - version <= kind_.log_window;
  if (replayable) {
    if (recent_.empty() ? version == version_
                        : recent_.front().version <= version + 1) {
      for (const LoggedCommit& commit : recent_) {
        if (commit.version > version) answer.commits.push_back(commit);
      }
      return answer;
    }
    if (store_ != nullptr) {
      Result<std::vector<LoggedCommit>> log = store_->ReadLog(
          key_, epoch_, version, static_cast<size_t>(version_ - version));
      if (log.ok() && static_cast<int64_t>(log->size()) == version_ - version) {
        answer.commits = std::move(*log);
        return answer;
      }
      if (!log.ok() && log.status().code() != StatusCode::kOutOfRange) {
        return log.status();
      }
    }
  }
  answer.hydrate = true;
  answer.state = state_;
  return answer;
}

}  // namespace tessera::realm
