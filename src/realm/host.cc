#include "realm/host.h"

#include <algorithm>
#include <future>
#include <utility>

#include "realm/engine.h"
#include "realm/host_instance.h"

namespace tessera::realm {

RealmHost::RealmHost(std::vector<RealmKindConfig> kinds,
                     RealmHostOptions options)
    : options_(std::move(options)) {
  for (RealmKindConfig& kind : kinds) {
    std::string name = kind.name;
    kinds_[name] = std::make_shared<const RealmKindConfig>(std::move(kind));
  }
  if (Metrics* m = options_.metrics) {
    commits_ = m->GetCounter("tessera_realm_commits_total",
                             "Realm commits made durable (writes, intents, "
                             "hooks and server updates).");
    refusals_ = m->GetCounter("tessera_realm_refusals_total",
                              "Realm writes and intents refused (rules, "
                              "patches that do not apply, modules).");
    flush_seconds_ = m->GetHistogram(
        "tessera_realm_flush_seconds",
        "Wall time of one realm group commit (one store transaction).",
        {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
         0.1});
    instance_gauge_ = m->GetGauge("tessera_realm_instances",
                                  "Realm instances loaded in memory.");
  }
  reaper_ = std::make_shared<Reaper>(this);
  (void)options_.pool->Add(reaper_);
  alarm_clock_ = std::make_shared<AlarmClock>(this);
  (void)options_.pool->Add(alarm_clock_);
}

RealmHost::~RealmHost() { Shutdown(); }

std::shared_ptr<const RealmKindConfig> RealmHost::FindKind(
    std::string_view name) const {
  auto it = kinds_.find(std::string(name));
  return it == kinds_.end() ? nullptr : it->second;
}

bool RealmHost::ValidKey(std::string_view key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                    c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status RealmHost::Push(std::string_view kind_name, std::string_view key,
                       Item item) {
  std::shared_ptr<const RealmKindConfig> kind = FindKind(kind_name);
  if (kind == nullptr) {
    return Status(StatusCode::kNotFound,
                  "no realm kind \"" + std::string(kind_name) + "\"");
  }
  if (!ValidKey(key)) {
    return Status(StatusCode::kInvalidArgument,
                  "a realm key is 1 to 128 bytes of [A-Za-z0-9_.:-]");
  }
  std::string id = kind->name + "/" + std::string(key);
  // An instance that is unloading refuses the item; the next round makes
  // a fresh one (which reloads what the old one flushed).
  for (;;) {
    std::shared_ptr<Instance> instance;
    bool created = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (shut_down_) {
        return Status(StatusCode::kUnavailable, "the server is stopping");
      }
      auto it = instances_.find(id);
      if (it == instances_.end()) {
        if (item.type != Item::Type::kAttach &&
            item.type != Item::Type::kUpdate &&
            item.type != Item::Type::kExpire &&
            item.type != Item::Type::kAlarm) {
          return Status();  // a write or detach for nothing live: dropped
        }
        instance = std::make_shared<Instance>(this, kind, std::string(key), id);
        instances_.emplace(id, instance);
        if (instances_gauge() != nullptr) instances_gauge()->Add(1);
        created = true;
      } else {
        instance = it->second;
      }
    }
    if (created) {
      Status added = options_.pool->Add(instance);
      if (!added.ok()) {
        Forget(id, instance.get());
        return Status(StatusCode::kUnavailable, added.message());
      }
    }
    bool poke = true;
    if (instance->Push(item, &poke)) {
      if (poke) options_.pool->Poke(instance);
      return Status();
    }
    // Unloading: the item is still ours.
    Forget(id, instance.get());
  }
}

Status RealmHost::Attach(std::string_view kind, std::string_view key,
                         const std::shared_ptr<RealmPeer>& peer,
                         std::string avatar, int64_t epoch, int64_t version) {
  Item item;
  item.type = Item::Type::kAttach;
  item.peer = peer.get();
  item.weak_peer = peer;
  item.avatar = std::move(avatar);
  item.epoch = epoch;
  item.version = version;
  return Push(kind, key, std::move(item));
}

void RealmHost::Write(std::string_view kind, std::string_view key,
                      const RealmPeer* peer, uint64_t seq, Patch patch) {
  Item item;
  item.type = Item::Type::kWrite;
  item.peer = peer;
  item.seq = seq;
  item.patch = std::move(patch);
  (void)Push(kind, key, std::move(item));
}

void RealmHost::Intent(std::string_view kind, std::string_view key,
                       const RealmPeer* peer, uint64_t seq, std::string intent,
                       Json args) {
  Item item;
  item.type = Item::Type::kIntent;
  item.peer = peer;
  item.seq = seq;
  item.intent = std::move(intent);
  item.args = std::move(args);
  (void)Push(kind, key, std::move(item));
}

void RealmHost::Detach(std::string_view kind, std::string_view key,
                       const RealmPeer* peer) {
  Item item;
  item.type = Item::Type::kDetach;
  item.peer = peer;
  (void)Push(kind, key, std::move(item));
}

Result<int64_t> RealmHost::Update(std::string_view kind, std::string_view key,
                                  Patch patch) {
  auto done = std::make_shared<std::promise<Result<int64_t>>>();
  std::future<Result<int64_t>> answer = done->get_future();
  Item item;
  item.type = Item::Type::kUpdate;
  item.patch = std::move(patch);
  item.done = done;
  Status pushed = Push(kind, key, std::move(item));
  if (!pushed.ok()) return pushed;
  return answer.get();
}

void RealmHost::ArmExpiry(std::string_view kind_name, std::string_view key) {
  std::shared_ptr<const RealmKindConfig> kind = FindKind(kind_name);
  if (kind == nullptr || !kind->expire_after_idle_ms || !ValidKey(key)) return;
  ArmExpiryAt(
      kind->name + "/" + std::string(key),
      options_.pool->clock()->NowUs() + *kind->expire_after_idle_ms * 1000);
}

void RealmHost::ArmExpiryAt(const std::string& id, int64_t due_us) {
  if (reaper_->Arm(id, due_us)) options_.pool->Poke(reaper_);
}

void RealmHost::DisarmExpiry(const std::string& id) { reaper_->Disarm(id); }

void RealmHost::Expire(const std::string& id) {
  const size_t slash = id.find('/');
  Item item;
  item.type = Item::Type::kExpire;
  (void)Push(id.substr(0, slash), id.substr(slash + 1), std::move(item));
}

bool RealmHost::Reaper::Arm(const std::string& id, int64_t due_us) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!due_.emplace(id, due_us).second) return false;  // the earlier stays
  for (const auto& [other, due] : due_) {
    if (due < due_us) return false;
  }
  return true;
}

void RealmHost::Reaper::Disarm(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  due_.erase(id);
}

std::optional<int64_t> RealmHost::Reaper::Run(int64_t now_us) {
  std::vector<std::string> fired;
  int64_t next = now_us + 3'600'000'000;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = due_.begin(); it != due_.end();) {
      if (it->second <= now_us) {
        fired.push_back(it->first);
        it = due_.erase(it);
      } else {
        next = std::min(next, it->second);
        ++it;
      }
    }
  }
  for (const std::string& id : fired) host_->Expire(id);
  return next;
}

void RealmHost::Forget(const std::string& id, const Instance* instance) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = instances_.find(id);
  if (it != instances_.end() && it->second.get() == instance) {
    instances_.erase(it);
    if (instances_gauge() != nullptr) instances_gauge()->Add(-1);
  }
}

void RealmHost::Shutdown() {
  std::unordered_map<std::string, std::shared_ptr<Instance>> instances;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    instances.swap(instances_);
    if (instance_gauge_ != nullptr) instance_gauge_->Set(0);
  }
  options_.pool->Remove(*reaper_);
  options_.pool->Remove(*alarm_clock_);
  for (auto& [id, instance] : instances) {
    // Once Remove returns the task never runs again: finish it here.
    options_.pool->Remove(*instance);
    instance->Finish();
  }
}

size_t RealmHost::instance_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return instances_.size();
}

}  // namespace tessera::realm
