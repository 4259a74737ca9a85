#include "shard/message_router.h"

#include <algorithm>
#include <utility>

#include "common/text.h"

namespace tessera::shard {

std::optional<MessageRefusal> CheckMessage(std::string_view topic,
                                           std::string_view data) {
  if (topic.empty() || topic.size() > abi::kMaxTopicBytes) {
    return MessageRefusal::kTopic;
  }
  if (data.size() > abi::kMaxMessageDataBytes) return MessageRefusal::kTooBig;
  return std::nullopt;
}

GroupList CheckGroups(std::vector<std::string> names) {
  GroupList list;
  std::set<std::string, std::less<>> kept;
  size_t over = 0;
  for (std::string& name : names) {
    if (name.empty()) {
      list.dropped.push_back("an empty group name");
      continue;
    }
    if (name.size() > abi::kMaxGroupNameBytes) {
      list.dropped.push_back("a group name of " + std::to_string(name.size()) +
                             " bytes (at most " +
                             std::to_string(abi::kMaxGroupNameBytes) + ")");
      continue;
    }
    if (kept.count(name) != 0) continue;
    if (kept.size() >= abi::kMaxGroups) {
      ++over;
      continue;
    }
    kept.insert(std::move(name));
  }
  if (over > 0) {
    list.dropped.push_back(std::to_string(over) + " groups over the limit of " +
                           std::to_string(abi::kMaxGroups));
  }
  list.groups.assign(kept.begin(), kept.end());
  return list;
}

std::string DroppedGroupsLine(std::string_view shard_id,
                              const GroupList& list) {
  std::string line =
      "shard \"" + EscapeForLog(shard_id, 256) + "\" groups: left out";
  for (size_t i = 0; i < list.dropped.size(); ++i) {
    line += (i == 0 ? " " : ", ") + list.dropped[i];
  }
  return line;
}

std::optional<MessageRefusal> Inbox::Push(
    std::shared_ptr<const ShardMessage> m) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return MessageRefusal::kStopped;
  if (queue_.size() >= capacity_) return MessageRefusal::kInboxFull;
  queue_.push_back(std::move(m));
  return std::nullopt;
}

std::vector<std::shared_ptr<const ShardMessage>> Inbox::Take(size_t max) {
  std::vector<std::shared_ptr<const ShardMessage>> out;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = std::min(max, queue_.size());
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return out;
}

size_t Inbox::Close() {
  std::deque<std::shared_ptr<const ShardMessage>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    dropped.swap(queue_);
  }
  return dropped.size();
}

size_t Inbox::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void MessageRouter::Add(std::string_view id, std::shared_ptr<Inbox> inbox,
                        bool handler) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = shards_.find(id);
  if (it != shards_.end()) {
    Unindex(it->first, it->second);
    it->second = Entry{std::move(inbox), handler, {}};
  } else {
    shards_.emplace(std::string(id), Entry{std::move(inbox), handler, {}});
  }
}

size_t MessageRouter::Remove(std::string_view id, Inbox* inbox) {
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = shards_.find(id);
    if (it != shards_.end() && it->second.inbox.get() == inbox) {
      Unindex(it->first, it->second);
      shards_.erase(it);
    }
  }
  return inbox != nullptr ? inbox->Close() : 0;
}

void MessageRouter::Unindex(const std::string& id, const Entry& entry) {
  for (const std::string& group : entry.groups) {
    auto g = groups_.find(group);
    if (g == groups_.end()) continue;
    g->second.erase(id);
    if (g->second.empty()) groups_.erase(g);
  }
}

bool MessageRouter::SetGroups(std::string_view id,
                              const std::vector<std::string>& groups) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = shards_.find(id);
    if (it == shards_.end() || it->second.groups == groups) return false;
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = shards_.find(id);
  if (it == shards_.end() || it->second.groups == groups) return false;
  Unindex(it->first, it->second);
  it->second.groups = groups;
  for (const std::string& group : groups) groups_[group].insert(it->first);
  return true;
}

std::vector<std::string> MessageRouter::GroupMembers(
    std::string_view group) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto g = groups_.find(group);
  if (g == groups_.end()) return {};
  return std::vector<std::string>(g->second.begin(), g->second.end());
}

void MessageRouter::Deliver(const std::string& id, const Entry& entry,
                            const std::shared_ptr<const ShardMessage>& message,
                            size_t* queued,
                            std::vector<RoutedRefusal>* refused) const {
  if (!entry.handler) {
    refused->push_back(RoutedRefusal{id, MessageRefusal::kNoHandler});
    return;
  }
  if (std::optional<MessageRefusal> no = entry.inbox->Push(message)) {
    refused->push_back(RoutedRefusal{id, *no});
    return;
  }
  ++*queued;
}

size_t MessageRouter::Route(std::string_view sender, const MessageTarget& to,
                            const std::shared_ptr<const ShardMessage>& message,
                            std::vector<RoutedRefusal>* refused) const {
  size_t queued = 0;
  std::shared_lock<std::shared_mutex> lock(mu_);
  switch (to.kind) {
    case TargetKind::kShard: {
      auto it = shards_.find(to.name);
      if (it == shards_.end()) {
        refused->push_back(RoutedRefusal{to.name, MessageRefusal::kNotFound});
      } else {
        Deliver(it->first, it->second, message, &queued, refused);
      }
      break;
    }
    case TargetKind::kGroup: {
      auto g = groups_.find(to.name);
      if (g == groups_.end()) break;
      for (const std::string& id : g->second) {
        if (id == sender) continue;
        auto it = shards_.find(id);
        if (it != shards_.end()) {
          Deliver(it->first, it->second, message, &queued, refused);
        }
      }
      break;
    }
    case TargetKind::kAll:
      for (const auto& [id, entry] : shards_) {
        if (id == sender || !entry.handler) continue;
        Deliver(id, entry, message, &queued, refused);
      }
      break;
  }
  return queued;
}

std::optional<uint64_t> LineLimiter::Allow(std::string_view key,
                                           int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(key);
  if (it == slots_.end()) {
    slots_.emplace(std::string(key), Slot{now_us, 0});
    return 0;
  }
  Slot& slot = it->second;
  if (now_us - slot.last_us < period_us_) {
    ++slot.suppressed;
    return std::nullopt;
  }
  const uint64_t suppressed = slot.suppressed;
  slot = Slot{now_us, 0};
  return suppressed;
}

void LineLimiter::Forget(std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(key);
  if (it != slots_.end()) slots_.erase(it);
}

}  // namespace tessera::shard
