#include "net/hub.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <map>
#include <mutex>
#include <utility>

#include "common/thread_annotations.h"

namespace tessera::net {
namespace {

namespace asio = boost::asio;
using Strand = asio::strand<asio::io_context::executor_type>;
using SubscriberPtr = std::shared_ptr<TopicSubscriber>;

struct TopicEntry {
  explicit TopicEntry(Strand s) : strand(std::move(s)) {}
  // Orders this topic's publish and end jobs (see hub.h).
  Strand strand;
  std::map<std::string, std::vector<SubscriberPtr>, std::less<>> members;
  size_t subscriptions = 0;
};

}  // namespace

struct Hub::Impl {
  explicit Impl(asio::io_context& ioc) : ioc(ioc) {}

  // On the topic's strand: builds the message and hands it to every
  // subscription, each with its member's part.
  void FanOut(const std::string& topic, const MakeMessage& make);
  // On the topic's strand: closes and forgets every subscription.
  void End(const std::string& topic, int code, const std::string& reason);
  // Posts `job` to the topic's strand; false (nothing posted) after
  // Shutdown, for an unknown topic, or with `need_subscribers` and none.
  template <class Job>
  bool PostToTopic(std::string_view topic, bool need_subscribers, Job job) {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return false;
    auto it = topics.find(topic);
    if (it == topics.end()) return false;
    if (need_subscribers && it->second->subscriptions == 0) return false;
    asio::post(it->second->strand, std::move(job));
    return true;
  }
  // Subscriptions of (topic, member, or all members when null).
  std::vector<SubscriberPtr> Collect(std::string_view topic,
                                     const std::string_view* member) const;

  asio::io_context& ioc;
  mutable std::mutex mu;
  bool shut_down GUARDED_BY(mu) = false;
  std::map<std::string, std::unique_ptr<TopicEntry>, std::less<>> topics
      GUARDED_BY(mu);
  size_t subscription_count GUARDED_BY(mu) = 0;
};

void Hub::Impl::FanOut(const std::string& topic, const MakeMessage& make) {
  std::shared_ptr<const TopicMessage> message = make();  // outside the lock
  if (message == nullptr) return;
  struct Target {
    SubscriberPtr subscriber;
    size_t part;
    bool first;
  };
  std::vector<Target> targets;
  const size_t parts = message->part_count();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return;
    auto it = topics.find(topic);
    if (it == topics.end()) return;
    targets.reserve(it->second->subscriptions);
    // The members and the message's parts are both sorted by member: one
    // merge walk pairs them.
    size_t part = 0;
    for (const auto& [member, subscribers] : it->second->members) {
      while (part < parts && message->part_member(part) < member) ++part;
      const bool has_part =
          part < parts && message->part_member(part) == member;
      const size_t mine = has_part ? part : TopicMessage::kNoPart;
      const bool first = has_part && message->part_first(part);
      for (const SubscriberPtr& s : subscribers) {
        targets.push_back({s, mine, first});
      }
    }
  }
  // Connections with answers waiting go first: on a big topic a message
  // reaches its subscriptions over several milliseconds, and those waiting
  // for an answer should not also wait for everyone else's.
  std::stable_partition(targets.begin(), targets.end(),
                        [](const Target& t) { return t.first; });
  for (Target& t : targets) t.subscriber->Post(message, t.part);
}

void Hub::Impl::End(const std::string& topic, int code,
                    const std::string& reason) {
  std::unique_ptr<TopicEntry> entry;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return;
    auto it = topics.find(topic);
    if (it == topics.end()) return;
    entry = std::move(it->second);
    topics.erase(it);
    subscription_count -= entry->subscriptions;
  }
  for (auto& [member, subscribers] : entry->members) {
    for (const SubscriberPtr& s : subscribers) s->PostClose(code, reason);
  }
}

std::vector<SubscriberPtr> Hub::Impl::Collect(
    std::string_view topic, const std::string_view* member) const {
  std::vector<SubscriberPtr> out;
  std::lock_guard<std::mutex> lock(mu);
  auto it = topics.find(topic);
  if (it == topics.end()) return out;
  for (const auto& [m, subscribers] : it->second->members) {
    if (member != nullptr && m != *member) continue;
    out.insert(out.end(), subscribers.begin(), subscribers.end());
  }
  return out;
}

Hub::Hub(asio::io_context& ioc) : impl_(std::make_unique<Impl>(ioc)) {}

Hub::~Hub() { Shutdown(); }

bool Hub::Add(std::string_view topic, std::string_view member,
              std::shared_ptr<TopicSubscriber> subscriber) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->shut_down) return false;
  auto it = impl_->topics.find(topic);
  if (it == impl_->topics.end()) {
    it = impl_->topics
             .emplace(std::string(topic),
                      std::make_unique<TopicEntry>(
                          asio::make_strand(impl_->ioc.get_executor())))
             .first;
  }
  TopicEntry& entry = *it->second;
  auto m = entry.members.find(member);
  if (m == entry.members.end()) {
    m = entry.members.emplace(std::string(member), std::vector<SubscriberPtr>())
            .first;
  }
  m->second.push_back(std::move(subscriber));
  ++entry.subscriptions;
  ++impl_->subscription_count;
  return true;
}

void Hub::Remove(std::string_view topic, std::string_view member,
                 const TopicSubscriber* subscriber) {
  SubscriberPtr released;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->topics.find(topic);
  if (it == impl_->topics.end()) return;
  TopicEntry& entry = *it->second;
  auto m = entry.members.find(member);
  if (m == entry.members.end()) return;
  auto& subscribers = m->second;
  for (auto s = subscribers.begin(); s != subscribers.end(); ++s) {
    if (s->get() != subscriber) continue;
    released = std::move(*s);
    subscribers.erase(s);
    --entry.subscriptions;
    --impl_->subscription_count;
    break;
  }
  if (subscribers.empty()) entry.members.erase(m);
  // The entry (and its strand) stays while the topic may still publish;
  // EndTopic forgets it.
}

bool Hub::HasSubscribers(std::string_view topic) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->topics.find(topic);
  return !impl_->shut_down && it != impl_->topics.end() &&
         it->second->subscriptions > 0;
}

bool Hub::Publish(std::string_view topic, MakeMessage make) {
  return impl_->PostToTopic(
      topic, /*need_subscribers=*/true,
      [impl = impl_.get(), t = std::string(topic), make = std::move(make)] {
        impl->FanOut(t, make);
      });
}

void Hub::EndTopic(std::string_view topic, int code, std::string reason) {
  impl_->PostToTopic(
      topic, /*need_subscribers=*/false,
      [impl = impl_.get(), t = std::string(topic), code,
       reason = std::move(reason)] { impl->End(t, code, reason); });
}

size_t Hub::CloseMember(std::string_view topic, std::string_view member,
                        int code, std::string_view reason) {
  std::vector<SubscriberPtr> subs = impl_->Collect(topic, &member);
  for (const SubscriberPtr& s : subs) s->PostClose(code, std::string(reason));
  return subs.size();
}

size_t Hub::CloseTopic(std::string_view topic, int code,
                       std::string_view reason) {
  std::vector<SubscriberPtr> subs = impl_->Collect(topic, nullptr);
  for (const SubscriberPtr& s : subs) s->PostClose(code, std::string(reason));
  return subs.size();
}

size_t Hub::CloseAll(int code, std::string_view reason) {
  std::vector<SubscriberPtr> subs;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (const auto& [topic, entry] : impl_->topics) {
      for (const auto& [member, list] : entry->members) {
        subs.insert(subs.end(), list.begin(), list.end());
      }
    }
  }
  for (const SubscriberPtr& s : subs) s->PostClose(code, std::string(reason));
  return subs.size();
}

std::vector<std::string> Hub::Members(std::string_view topic) const {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->topics.find(topic);
  if (it == impl_->topics.end()) return out;
  for (const auto& [member, subscribers] : it->second->members) {
    if (!subscribers.empty()) out.push_back(member);
  }
  return out;
}

size_t Hub::SubscriptionCount(std::string_view topic,
                              const std::vector<std::string>* members) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->topics.find(topic);
  if (impl_->shut_down || it == impl_->topics.end()) return 0;
  const TopicEntry& entry = *it->second;
  if (members == nullptr) return entry.subscriptions;
  size_t n = 0;
  // The fewer lookups: walk the shorter side.
  if (members->size() < entry.members.size()) {
    for (const std::string& m : *members) {
      auto found = entry.members.find(m);
      if (found != entry.members.end()) n += found->second.size();
    }
  } else {
    for (const auto& [member, subscribers] : entry.members) {
      if (std::binary_search(members->begin(), members->end(), member)) {
        n += subscribers.size();
      }
    }
  }
  return n;
}

std::vector<std::string> Hub::Topics(std::string_view prefix) const {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->shut_down) return out;
  for (auto it = impl_->topics.lower_bound(prefix);
       it != impl_->topics.end() && it->first.starts_with(prefix); ++it) {
    if (it->second->subscriptions > 0) out.push_back(it->first);
  }
  return out;
}

size_t Hub::subscription_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->subscription_count;
}

void Hub::Shutdown() {
  std::map<std::string, std::unique_ptr<TopicEntry>, std::less<>> dropped;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->shut_down = true;
    dropped.swap(impl_->topics);
    impl_->subscription_count = 0;
  }
  // Subscriptions released here may run their destructors, which call
  // Remove.
}

}  // namespace tessera::net
