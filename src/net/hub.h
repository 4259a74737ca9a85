// The hub: a fan-out of shared immutable messages by topic. A topic is a
// string naming what is published ("shard/<id>" for a shard's ticks; realm
// patches and module notifications later); connections subscribe to a
// topic as a member (a subscriber id), and each message published on the
// topic reaches every subscription, the one buffer shared by all.
//
// A message may carry a part of its own for some members (a table sorted by
// member: a subscriber's input results, its view): the hub walks that table
// alongside its sorted members once and hands each subscription the index
// of its member's part.
//
// Threading and invariants:
// - Every method may be called from any thread; the registry is guarded by a
//   mutex held only for map operations (never while a subscription runs).
// - Publish runs on the publisher's thread (a shard worker) and must be
//   quick: it posts one job to the topic's strand on the io_context, which
//   builds the message (the costly part, off the publisher) and posts it to
//   each subscription (which writes on its own strand). Because a topic's
//   jobs run in order on its strand and each subscription's strand is FIFO,
//   every subscription sees its topic's messages in publish order and
//   EndTopic's close after the last message.
// - Subscriptions whose member has a part marked `first` (answers waiting)
//   get the message first; the order is otherwise kept.
// - Subscriptions are held by shared_ptr while registered; a connection
//   removes itself (Remove) when it starts closing. A topic stays known (and
//   keeps its strand) until EndTopic, even without subscriptions.
// - Shutdown() must run before the io_context is destroyed; afterwards
//   messages and closes are dropped and Add refuses.
#ifndef TESSERA_NET_HUB_H_
#define TESSERA_NET_HUB_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace tessera::net {

// One message published on a topic: immutable once published, shared by
// every subscription that receives it.
class TopicMessage {
 public:
  static constexpr size_t kNoPart = static_cast<size_t>(-1);
  virtual ~TopicMessage() = default;
  // The members with a part of their own, by ascending key (none: the
  // message is the same for every member).
  virtual size_t part_count() const { return 0; }
  virtual std::string_view part_member(size_t /*i*/) const { return {}; }
  // Whether member i's subscriptions should get the message first.
  virtual bool part_first(size_t /*i*/) const { return false; }
};

// What the hub needs of a subscribed connection.
class TopicSubscriber {
 public:
  virtual ~TopicSubscriber() = default;
  // Hands over `message` and the index of this member's part in it
  // (TopicMessage::kNoPart: none). Called on the topic's strand; the work
  // must be posted to the connection's own strand.
  virtual void Post(const std::shared_ptr<const TopicMessage>& message,
                    size_t part) = 0;
  // Closes the connection with a WebSocket close `code` and `reason`. Any
  // thread; idempotent (the first close wins).
  virtual void PostClose(int code, std::string reason) = 0;
};

class Hub {
 public:
  using MakeMessage = std::function<std::shared_ptr<const TopicMessage>()>;

  // `ioc` is not owned and must outlive the hub's Shutdown().
  explicit Hub(boost::asio::io_context& ioc);
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // Subscribes `subscriber` to `topic` as `member`. False after Shutdown
  // (the caller closes).
  bool Add(std::string_view topic, std::string_view member,
           std::shared_ptr<TopicSubscriber> subscriber);
  // Unsubscribes `subscriber` (no-op if absent). Must not be called while
  // the caller holds a lock the hub's callers might need.
  void Remove(std::string_view topic, std::string_view member,
              const TopicSubscriber* subscriber);

  // Whether `topic` has subscriptions now (publishers spare the copies
  // when not).
  bool HasSubscribers(std::string_view topic) const;
  // Publishes the message `make` builds (on the topic's strand) to every
  // subscription of `topic` at that time. False (nothing posted) after
  // Shutdown or when the topic has no subscriptions.
  bool Publish(std::string_view topic, MakeMessage make);
  // Closes every subscription of `topic` with `code`/`reason` after the
  // messages already published, and forgets the topic.
  void EndTopic(std::string_view topic, int code, std::string reason);

  // Post closes at once; return how many connections were asked.
  size_t CloseMember(std::string_view topic, std::string_view member, int code,
                     std::string_view reason);
  size_t CloseTopic(std::string_view topic, int code, std::string_view reason);
  size_t CloseAll(int code, std::string_view reason);
  // Distinct members with a subscription to `topic`.
  std::vector<std::string> Members(std::string_view topic) const;
  // Subscriptions of `topic` now: all of them, or (`members` not null,
  // sorted ascending) those of the listed members.
  size_t SubscriptionCount(std::string_view topic,
                           const std::vector<std::string>* members) const;
  // The topics starting with `prefix` that have subscriptions now.
  std::vector<std::string> Topics(std::string_view prefix) const;
  size_t subscription_count() const;

  // Drops every subscription (outside the lock) and refuses later work.
  // Idempotent.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_HUB_H_
