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
using SessionPtr = std::shared_ptr<HubSession>;
using Results = std::vector<shard::InputResult>;

struct ShardEntry {
  explicit ShardEntry(Strand s) : strand(std::move(s)) {}
  // Orders this shard's frame and stop jobs (see hub.h).
  Strand strand;
  std::map<std::string, std::vector<SessionPtr>, std::less<>> subscribers;
  size_t sessions = 0;
};

}  // namespace

struct Hub::Impl {
  explicit Impl(asio::io_context& ioc) : ioc(ioc) {}

  // Runs on the shard's strand: hands the frame to every session of the
  // shard, each with its subscriber's results.
  void FanOutFrame(const std::string& shard_id, uint64_t tick,
                   const std::shared_ptr<const std::string>& snapshot,
                   const std::shared_ptr<const Results>& results);
  // Runs on the shard's strand: hands each session its subscriber's view.
  void FanOutViews(const std::string& shard_id,
                   const std::shared_ptr<const shard::ViewFrame>& frame);
  // Runs on the shard's strand: closes and forgets every session.
  void CloseForStop(const std::string& shard_id, int code,
                    const std::string& reason);
  // Posts `job` to the shard's strand; false (nothing posted) after
  // Shutdown, for an unknown shard, or with `need_sessions` and none.
  template <class Job>
  bool PostToShard(std::string_view shard_id, bool need_sessions, Job job) {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return false;
    auto it = shards.find(shard_id);
    if (it == shards.end()) return false;
    if (need_sessions && it->second->sessions == 0) return false;
    asio::post(it->second->strand, std::move(job));
    return true;
  }
  bool HasSessions(std::string_view shard_id) const {
    std::lock_guard<std::mutex> lock(mu);
    auto it = shards.find(shard_id);
    return !shut_down && it != shards.end() && it->second->sessions > 0;
  }
  // Sessions matching (shard, subscriber or all when null).
  std::vector<SessionPtr> Collect(std::string_view shard_id,
                                  const std::string_view* subscriber) const;

  asio::io_context& ioc;
  mutable std::mutex mu;
  bool shut_down GUARDED_BY(mu) = false;
  std::map<std::string, std::unique_ptr<ShardEntry>, std::less<>> shards
      GUARDED_BY(mu);
  size_t session_count GUARDED_BY(mu) = 0;
};

namespace {

// The input results of one tick, grouped by subscriber.
std::map<std::string_view, std::shared_ptr<Results>> GroupResults(
    const Results* results) {
  std::map<std::string_view, std::shared_ptr<Results>> by_subscriber;
  if (results == nullptr) return by_subscriber;
  for (const shard::InputResult& r : *results) {
    if (r.subscriber.empty()) continue;  // the server side's inputs
    auto& group = by_subscriber[r.subscriber];
    if (group == nullptr) group = std::make_shared<Results>();
    group->push_back(r);
  }
  return by_subscriber;
}

// Connections with input results this tick go first: on a big shard the
// frames of one tick leave over several milliseconds, and those waiting
// for an answer (ACK/REJECT, or the frame that acks) should not also wait
// for everyone else's frame. Order is otherwise kept.
template <class Targets, class HasResults>
void AnsweredFirst(Targets& targets, HasResults has_results) {
  std::stable_partition(targets.begin(), targets.end(), has_results);
}

}  // namespace

void Hub::Impl::FanOutFrame(const std::string& shard_id, uint64_t tick,
                            const std::shared_ptr<const std::string>& snapshot,
                            const std::shared_ptr<const Results>& results) {
  // Group the results by subscriber first (outside the lock).
  std::map<std::string_view, std::shared_ptr<Results>> by_subscriber =
      GroupResults(results.get());
  std::vector<std::pair<SessionPtr, std::shared_ptr<const Results>>> targets;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return;
    auto it = shards.find(shard_id);
    if (it == shards.end()) return;
    targets.reserve(it->second->sessions);
    for (const auto& [subscriber, sessions] : it->second->subscribers) {
      auto group = by_subscriber.find(subscriber);
      std::shared_ptr<const Results> mine;
      if (group != by_subscriber.end()) mine = group->second;
      for (const SessionPtr& s : sessions) targets.emplace_back(s, mine);
    }
  }
  AnsweredFirst(targets, [](const auto& t) { return t.second != nullptr; });
  for (auto& [session, mine] : targets) {
    session->PostFrame(tick, snapshot, std::move(mine));
  }
}

void Hub::Impl::FanOutViews(
    const std::string& shard_id,
    const std::shared_ptr<const shard::ViewFrame>& frame) {
  std::map<std::string_view, std::shared_ptr<Results>> by_subscriber =
      GroupResults(&frame->inputs);
  struct Target {
    SessionPtr session;
    const shard::SubscriberView* view;
    std::shared_ptr<const Results> results;
  };
  std::vector<Target> targets;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return;
    auto it = shards.find(shard_id);
    if (it == shards.end()) return;
    targets.reserve(it->second->sessions);
    // The subscribers, the views and the result groups are all sorted by
    // subscriber: one merge walk pairs them.
    auto view = frame->views.begin();
    auto group = by_subscriber.begin();
    for (const auto& [subscriber, sessions] : it->second->subscribers) {
      while (group != by_subscriber.end() && group->first < subscriber) {
        ++group;
      }
      std::shared_ptr<const Results> mine;
      if (group != by_subscriber.end() && group->first == subscriber) {
        mine = group->second;
      }
      while (view != frame->views.end() && view->subscriber < subscriber) {
        ++view;
      }
      const shard::SubscriberView* found =
          view != frame->views.end() && view->subscriber == subscriber
              ? &*view
              : nullptr;
      for (const SessionPtr& s : sessions) targets.push_back({s, found, mine});
    }
  }
  AnsweredFirst(targets, [](const Target& t) { return t.results != nullptr; });
  for (Target& t : targets) {
    if (t.view == nullptr) {
      t.session->PostView(frame->tick, frame->replication, nullptr, nullptr,
                          false, std::move(t.results));
    } else {
      t.session->PostView(
          frame->tick, frame->replication,
          frame->replication ? frame->snapshot : t.view->snapshot,
          t.view->entities, t.view->baseline, std::move(t.results));
    }
  }
}

void Hub::Impl::CloseForStop(const std::string& shard_id, int code,
                             const std::string& reason) {
  std::unique_ptr<ShardEntry> entry;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) return;
    auto it = shards.find(shard_id);
    if (it == shards.end()) return;
    entry = std::move(it->second);
    shards.erase(it);
    session_count -= entry->sessions;
  }
  for (auto& [subscriber, sessions] : entry->subscribers) {
    for (const SessionPtr& s : sessions) s->PostClose(code, reason);
  }
}

std::vector<SessionPtr> Hub::Impl::Collect(
    std::string_view shard_id, const std::string_view* subscriber) const {
  std::vector<SessionPtr> out;
  std::lock_guard<std::mutex> lock(mu);
  auto it = shards.find(shard_id);
  if (it == shards.end()) return out;
  for (const auto& [sub, sessions] : it->second->subscribers) {
    if (subscriber != nullptr && sub != *subscriber) continue;
    out.insert(out.end(), sessions.begin(), sessions.end());
  }
  return out;
}

Hub::Hub(asio::io_context& ioc) : impl_(std::make_unique<Impl>(ioc)) {}

Hub::~Hub() { Shutdown(); }

bool Hub::Add(std::string_view shard_id, std::string_view subscriber,
              std::shared_ptr<HubSession> session) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->shut_down) return false;
  auto it = impl_->shards.find(shard_id);
  if (it == impl_->shards.end()) {
    it = impl_->shards
             .emplace(std::string(shard_id),
                      std::make_unique<ShardEntry>(
                          asio::make_strand(impl_->ioc.get_executor())))
             .first;
  }
  ShardEntry& entry = *it->second;
  auto sub = entry.subscribers.find(subscriber);
  if (sub == entry.subscribers.end()) {
    sub = entry.subscribers
              .emplace(std::string(subscriber), std::vector<SessionPtr>())
              .first;
  }
  sub->second.push_back(std::move(session));
  ++entry.sessions;
  ++impl_->session_count;
  return true;
}

void Hub::Remove(std::string_view shard_id, std::string_view subscriber,
                 const HubSession* session) {
  SessionPtr released;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->shards.find(shard_id);
  if (it == impl_->shards.end()) return;
  ShardEntry& entry = *it->second;
  auto sub = entry.subscribers.find(subscriber);
  if (sub == entry.subscribers.end()) return;
  auto& sessions = sub->second;
  for (auto s = sessions.begin(); s != sessions.end(); ++s) {
    if (s->get() != session) continue;
    released = std::move(*s);
    sessions.erase(s);
    --entry.sessions;
    --impl_->session_count;
    break;
  }
  if (sessions.empty()) entry.subscribers.erase(sub);
  // The entry (and its strand) stays while the shard may still send frames;
  // CloseForStop forgets it.
}

void Hub::OnFrame(std::string_view shard_id, uint64_t tick,
                  std::string_view snapshot,
                  const std::vector<shard::InputResult>& inputs) {
  if (!impl_->HasSessions(shard_id)) return;  // spare the copies
  // The one copy of the snapshot, shared by every connection's write.
  auto shared_snapshot = std::make_shared<const std::string>(snapshot);
  auto results = std::make_shared<const Results>(inputs);
  impl_->PostToShard(
      shard_id, /*need_sessions=*/false,
      [impl = impl_.get(), id = std::string(shard_id), tick,
       snap = std::move(shared_snapshot),
       res = std::move(results)] { impl->FanOutFrame(id, tick, snap, res); });
}

void Hub::OnViews(std::string_view shard_id,
                  std::shared_ptr<const shard::ViewFrame> frame) {
  impl_->PostToShard(
      shard_id, /*need_sessions=*/true,
      [impl = impl_.get(), id = std::string(shard_id),
       frame = std::move(frame)] { impl->FanOutViews(id, frame); });
}

void Hub::OnStopped(std::string_view shard_id, int code, std::string reason) {
  impl_->PostToShard(
      shard_id, /*need_sessions=*/false,
      [impl = impl_.get(), id = std::string(shard_id), code,
       reason = std::move(reason)] { impl->CloseForStop(id, code, reason); });
}

size_t Hub::CloseSubscriber(std::string_view shard_id,
                            std::string_view subscriber, int code,
                            std::string_view reason) {
  std::vector<SessionPtr> sessions = impl_->Collect(shard_id, &subscriber);
  for (const SessionPtr& s : sessions) s->PostClose(code, std::string(reason));
  return sessions.size();
}

size_t Hub::CloseShard(std::string_view shard_id, int code,
                       std::string_view reason) {
  std::vector<SessionPtr> sessions = impl_->Collect(shard_id, nullptr);
  for (const SessionPtr& s : sessions) s->PostClose(code, std::string(reason));
  return sessions.size();
}

size_t Hub::CloseAll(int code, std::string_view reason) {
  std::vector<SessionPtr> sessions;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (const auto& [id, entry] : impl_->shards) {
      for (const auto& [sub, list] : entry->subscribers) {
        sessions.insert(sessions.end(), list.begin(), list.end());
      }
    }
  }
  for (const SessionPtr& s : sessions) s->PostClose(code, std::string(reason));
  return sessions.size();
}

std::vector<std::string> Hub::Subscribers(std::string_view shard_id) const {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->shards.find(shard_id);
  if (it == impl_->shards.end()) return out;
  for (const auto& [sub, sessions] : it->second->subscribers) {
    if (!sessions.empty()) out.push_back(sub);
  }
  return out;
}

size_t Hub::session_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->session_count;
}

void Hub::Shutdown() {
  std::map<std::string, std::unique_ptr<ShardEntry>, std::less<>> dropped;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->shut_down = true;
    dropped.swap(impl_->shards);
    impl_->session_count = 0;
  }
  // Sessions released here may run their destructors, which call Remove.
}

}  // namespace tessera::net
