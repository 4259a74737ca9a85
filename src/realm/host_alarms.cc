// RealmHost's alarms (host.h "Alarms"): the clock task holding every
// instance's deadlines, and what an instance does when one is due.
#include <algorithm>
#include <utility>

#include "realm/host_instance.h"

namespace tessera::realm {
namespace {

constexpr int64_t kBackoffCapMs = 300'000;
constexpr size_t kMaxAlarmName = 128;

}  // namespace

int64_t AlarmBackoffMs(int32_t failures) {
  if (failures < 1) failures = 1;
  if (failures > 20) return kBackoffCapMs;
  return std::min<int64_t>(kBackoffCapMs, int64_t{2'000} << (failures - 1));
}

bool RealmHost::AlarmClock::Set(const std::string& id, int64_t due_us,
                                RealmAlarm alarm) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string name = alarm.name;
  alarms_[id][name] = Entry{due_us, std::move(alarm), false};
  return Sooner(due_us);
}

bool RealmHost::AlarmClock::Sooner(int64_t due_us) {
  if (due_us >= next_run_us_) return false;
  next_run_us_ = due_us;
  return true;
}

void RealmHost::AlarmClock::Cancel(const std::string& id,
                                   const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = alarms_.find(id);
  if (it == alarms_.end()) return;
  it->second.erase(name);
  if (it->second.empty()) alarms_.erase(it);
}

void RealmHost::AlarmClock::CancelAll(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  alarms_.erase(id);
}

bool RealmHost::AlarmClock::Release(const std::string& id, int64_t due_us) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = alarms_.find(id);
  if (it == alarms_.end()) return false;
  bool sooner = false;
  for (auto& [name, entry] : it->second) {
    if (!entry.in_flight) continue;
    entry.in_flight = false;
    entry.due_us = std::max(entry.due_us, due_us);
    sooner = Sooner(entry.due_us) || sooner;
  }
  return sooner;
}

std::optional<RealmHost::AlarmClock::Entry> RealmHost::AlarmClock::Get(
    const std::string& id, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = alarms_.find(id);
  if (it == alarms_.end()) return std::nullopt;
  auto entry = it->second.find(name);
  if (entry == it->second.end()) return std::nullopt;
  return entry->second;
}

std::vector<RealmAlarm> RealmHost::AlarmClock::List(
    const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RealmAlarm> out;
  auto it = alarms_.find(id);
  if (it == alarms_.end()) return out;
  for (const auto& [name, entry] : it->second) out.push_back(entry.stored);
  return out;
}

std::optional<int64_t> RealmHost::AlarmClock::Run(int64_t now_us) {
  std::vector<std::pair<std::string, std::string>> fired;
  int64_t next = now_us + 3'600'000'000;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, named] : alarms_) {
      for (auto& [name, entry] : named) {
        if (entry.in_flight) continue;
        if (entry.due_us <= now_us) {
          entry.in_flight = true;
          fired.emplace_back(id, name);
        } else {
          next = std::min(next, entry.due_us);
        }
      }
    }
    next_run_us_ = next;
  }
  for (const auto& [id, name] : fired) host_->FireAlarm(id, name);
  return next;
}

void RealmHost::ReleaseAlarms(const std::string& id, int64_t due_us) {
  if (alarm_clock_->Release(id, due_us)) options_.pool->Poke(alarm_clock_);
}

const WallClock* RealmHost::wall_clock() const {
  return options_.wall_clock != nullptr ? options_.wall_clock
                                        : RealWallClock::Get();
}

void RealmHost::FireAlarm(const std::string& id, const std::string& name) {
  const size_t slash = id.find('/');
  Item item;
  item.type = Item::Type::kAlarm;
  item.intent = name;
  Status pushed =
      Push(id.substr(0, slash), id.substr(slash + 1), std::move(item));
  if (!pushed.ok())
    alarm_clock_->Cancel(id, name);  // unknown kind, or stopping
}

Status RealmHost::LoadAlarms() {
  if (options_.store == nullptr) return Status::Ok();
  Result<std::vector<StoredAlarm>> stored = options_.store->ListAlarms();
  if (!stored.ok()) return stored.status();
  const int64_t now_us = options_.pool->clock()->NowUs();
  const int64_t wall_ms = wall_clock()->UnixNowMs();
  bool poke = false;
  for (StoredAlarm& row : *stored) {
    const size_t slash = row.key.find('/');
    std::shared_ptr<const RealmKindConfig> kind =
        slash == std::string::npos ? nullptr
                                   : FindKind(row.key.substr(0, slash));
    if (kind == nullptr || kind->persistence != Persistence::kDurable) {
      if (options_.log) {
        options_.log("realm " + row.key + ": alarm \"" + row.alarm.name +
                     "\" kept but not armed: no durable realm kind serves it");
      }
      continue;
    }
    const int64_t due_us =
        now_us + std::max<int64_t>(0, row.alarm.due_unix_ms - wall_ms) * 1000;
    poke = alarm_clock_->Set(row.key, due_us, std::move(row.alarm)) || poke;
  }
  if (poke) options_.pool->Poke(alarm_clock_);
  return Status::Ok();
}

std::vector<RealmAlarm> RealmHost::Alarms(std::string_view kind,
                                          std::string_view key) const {
  return alarm_clock_->List(std::string(kind) + "/" + std::string(key));
}

void RealmHost::Instance::HandleAlarm(Item& item) {
  const std::string& name = item.intent;
  std::optional<AlarmClock::Entry> entry = host_->alarm_clock_->Get(id_, name);
  if (!entry || !entry->in_flight) return;  // cancelled or moved meanwhile
  const int32_t failures = entry->stored.failures;
  const auto& log = host_->options_.log;
  RealmHooks* hooks = host_->options_.hooks;
  Result<HookResult> ran =
      hooks != nullptr
          ? hooks->OnAlarm(*kind_, key_, name, failures, realm_->state())
          : Result<HookResult>(
                Status(StatusCode::kNotFound,
                       "no module serves realm kind " + kind_->name));
  if (!ran.ok() && ran.status().code() == StatusCode::kNotFound) {
    if (log) {
      log("realm " + id_ + ": alarm \"" + name +
          "\" dropped: " + ran.status().message());
    }
    QueueAlarmChanges({AlarmChange{name, std::nullopt}});
    return;
  }
  Status failed = ran.status();
  if (ran.ok() && !ran->patch.empty()) {
    Result<int64_t> version = realm_->Submit(ran->patch, "");
    if (version.ok()) {
      batch_.push_back(
          BroadcastCommit{*version, std::move(ran->patch), nullptr, 0, {}});
    } else if (version.status().code() == StatusCode::kUnavailable) {
      Break(version.status());
      return;
    } else {
      failed =
          Status(StatusCode::kInvalidArgument,
                 "its patch does not apply: " + version.status().message());
    }
  }
  if (!failed.ok()) {
    const int32_t now_failed = failures + 1;
    if (log) {
      log("realm " + id_ + ": alarm \"" + name + "\" failed (" +
          std::to_string(now_failed) + " in a row), retried in " +
          std::to_string(AlarmBackoffMs(now_failed) / 1000) +
          " s: " + failed.message());
    }
    PutOffAlarm(name, now_failed);
    return;
  }
  // Done: its row goes with the handler's commit, unless it set it again.
  QueueAlarmChanges({AlarmChange{name, std::nullopt}});
  QueueAlarmChanges(ran->alarms);
}

void RealmHost::Instance::PutOffAlarm(const std::string& name,
                                      int32_t failures) {
  const int64_t delay_ms = AlarmBackoffMs(failures);
  RealmAlarm stored{name, host_->wall_clock()->UnixNowMs() + delay_ms,
                    failures};
  if (realm_ != nullptr) realm_->QueueAlarms({stored}, {});
  clock_changes_.push_back(
      ClockChange{name, now_us_ + delay_ms * 1000, std::move(stored)});
}

void RealmHost::Instance::QueueAlarmChanges(
    const std::vector<AlarmChange>& changes) {
  const auto& log = host_->options_.log;
  for (const AlarmChange& change : changes) {
    if (change.name.empty() || change.name.size() > kMaxAlarmName) {
      if (log) {
        log("realm " + id_ + ": an alarm name is 1 to 128 bytes; \"" +
            change.name.substr(0, 40) + "\" ignored");
      }
      continue;
    }
    if (!change.in_ms) {
      realm_->QueueAlarms({}, {change.name});
      clock_changes_.push_back(ClockChange{change.name, std::nullopt, {}});
      continue;
    }
    if (*change.in_ms < 0 || *change.in_ms > kMaxAlarmDelayMs) {
      if (log) {
        log("realm " + id_ + ": alarm \"" + change.name +
            "\" ignored: " + std::to_string(*change.in_ms) +
            " ms is not in 0 .. 366 days from now");
      }
      continue;
    }
    RealmAlarm stored{change.name,
                      host_->wall_clock()->UnixNowMs() + *change.in_ms, 0};
    realm_->QueueAlarms({stored}, {});
    clock_changes_.push_back(ClockChange{
        change.name, now_us_ + *change.in_ms * 1000, std::move(stored)});
  }
}

void RealmHost::Instance::SettleAlarms() {
  bool poke = false;
  for (ClockChange& change : clock_changes_) {
    if (change.due_us) {
      poke = host_->alarm_clock_->Set(id_, *change.due_us,
                                      std::move(change.stored)) ||
             poke;
    } else {
      host_->alarm_clock_->Cancel(id_, change.name);
    }
  }
  clock_changes_.clear();
  if (poke) host_->options_.pool->Poke(host_->alarm_clock_);
}

}  // namespace tessera::realm
