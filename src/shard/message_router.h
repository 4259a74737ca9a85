// Messages between shards, the host's side (docs/guest-abi.md "Transfers
// and messages"): the checks of one outgoing message and of a shard's group
// list, each running shard's bounded inbox, the group index, and the router
// that puts a message in its targets' inboxes.
//
//   sender's outbox --CheckMessage--> MessageRouter::Route --> Inbox (FIFO,
//   bounded) --Take(n) before the target's next tick--> on_messages
//
// Order per sender -> target holds because one worker routes a sender's
// messages in order and each inbox is FIFO. Nothing here logs or counts:
// the host turns every refusal into a counter and a log line.
//
// Thread-safety: Inbox, MessageRouter and LineLimiter may be used from any
// thread. Lock order: the router's lock, then an inbox's.
#ifndef TESSERA_SHARD_MESSAGE_ROUTER_H_
#define TESSERA_SHARD_MESSAGE_ROUTER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/thread_annotations.h"
#include "shard/talk_types.h"
#include "tessera/abi.h"

namespace tessera::shard {

// The topic (1..kMaxTopicBytes) and data (<= kMaxMessageDataBytes) limits of
// one message: nullopt when within them, else kTopic or kTooBig.
std::optional<MessageRefusal> CheckMessage(std::string_view topic,
                                           std::string_view data);

// A shard's groups() with the limits applied: names of 1..kMaxGroupNameBytes
// bytes, duplicates folded, at most kMaxGroups distinct names (the first
// ones listed). `dropped` says what was left out and why, for a log line.
struct GroupList {
  std::vector<std::string> groups;   // ascending, unique
  std::vector<std::string> dropped;  // e.g. "group name of 200 bytes"
};
GroupList CheckGroups(std::vector<std::string> names);
// The log line for a list with something dropped: `shard "<id>" groups:
// left out <what>, <what>`.
std::string DroppedGroupsLine(std::string_view shard_id, const GroupList& list);

// One running shard's queued messages: FIFO, at most `capacity`.
class Inbox {
 public:
  explicit Inbox(size_t capacity) : capacity_(capacity) {}
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  // Queues the message; kInboxFull when `capacity` are queued, kStopped
  // once closed.
  std::optional<MessageRefusal> Push(std::shared_ptr<const ShardMessage> m);
  // Takes up to `max` of the oldest messages (the rest stay queued).
  std::vector<std::shared_ptr<const ShardMessage>> Take(size_t max);
  // Refuses every later Push and drops what is queued; returns how many
  // messages were dropped (0 when already closed).
  size_t Close();
  size_t size() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<const ShardMessage>> queue_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

// A refusal of one routed message for one target shard (or for the named
// shard id that is not running).
struct RoutedRefusal {
  std::string target;
  MessageRefusal reason = MessageRefusal::kNotFound;
};

// The running shards that can receive messages, and the group index
// (group -> shards).
class MessageRouter {
 public:
  // Registers running shard `id` with its inbox (replacing an earlier entry
  // of the same id) and no groups; `handler`: it exports on_messages.
  void Add(std::string_view id, std::shared_ptr<Inbox> inbox, bool handler);
  // Forgets `id` when its entry is `inbox` (a newer shard of the same id is
  // kept) and closes `inbox`; returns the number of messages it dropped.
  size_t Remove(std::string_view id, Inbox* inbox);
  // Replaces the groups of a registered shard (already checked by
  // CheckGroups). Returns false when unchanged or not registered.
  bool SetGroups(std::string_view id, const std::vector<std::string>& groups);
  // The registered shards in `group`, ascending.
  std::vector<std::string> GroupMembers(std::string_view group) const;

  // Queues `message` in the inbox of each target: kShard -> that shard
  // (kNotFound when not registered, kNoHandler without on_messages; the
  // sender itself may be the target); kGroup -> every member of the group
  // but the sender (kNoHandler for a member without on_messages); kAll ->
  // every registered shard with on_messages but the sender. Refusals are
  // appended to `refused`; returns the number of inboxes it was queued in.
  size_t Route(std::string_view sender, const MessageTarget& to,
               const std::shared_ptr<const ShardMessage>& message,
               std::vector<RoutedRefusal>* refused) const;

 private:
  struct Entry {
    std::shared_ptr<Inbox> inbox;
    bool handler = false;
    std::vector<std::string> groups;
  };
  void Deliver(const std::string& id, const Entry& entry,
               const std::shared_ptr<const ShardMessage>& message,
               size_t* queued, std::vector<RoutedRefusal>* refused) const;
  // Drops `id` from the group index (mu_ held exclusively).
  void Unindex(const std::string& id, const Entry& entry);

  mutable std::shared_mutex mu_;
  std::map<std::string, Entry, std::less<>> shards_ GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>, std::less<>> groups_
      GUARDED_BY(mu_);
};

// At most one line per key per `period_us`: Allow says whether to write
// the line now and, if so, how many lines of that key it held back since
// the last one written (to say so in the line).
class LineLimiter {
 public:
  explicit LineLimiter(int64_t period_us = 1'000'000) : period_us_(period_us) {}
  // nullopt: suppress this line (counted); else the count suppressed.
  std::optional<uint64_t> Allow(std::string_view key, int64_t now_us);
  void Forget(std::string_view key);

 private:
  struct Slot {
    int64_t last_us = 0;
    uint64_t suppressed = 0;
  };
  const int64_t period_us_;
  std::mutex mu_;
  std::map<std::string, Slot, std::less<>> slots_ GUARDED_BY(mu_);
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_MESSAGE_ROUTER_H_
