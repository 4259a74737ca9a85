#include "net/shard_fanout.h"

#include <map>
#include <utility>

#include "net/protocol_v1.h"
#include "net/ticket.h"

namespace tessera::net {
namespace {

using Results = ShardReceiver::Results;

constexpr char kShardTopicPrefix[] = "shard/";

// What a shard's topic carries: ticks, moves and notifications.
struct ShardTopicMessage : TopicMessage {
  enum class Kind { kTick, kTransfer, kNotify };
  explicit ShardTopicMessage(Kind k) : kind(k) {}
  const Kind kind;
};

// A player that left the shard: its part is the TRANSFER for its
// connections.
struct ShardTransfer final : ShardTopicMessage {
  ShardTransfer() : ShardTopicMessage(Kind::kTransfer) {}
  size_t part_count() const override { return 1; }
  std::string_view part_member(size_t) const override { return subscriber; }
  bool part_first(size_t) const override { return true; }

  std::string subscriber;
  std::string to;
  int64_t moved_unix_ms = 0;
  std::shared_ptr<const std::string> message;  // the encoded TRANSFER
};

// A notification (NOTIFY) for every connection of the shard or, with
// `only`, for those of the listed subscribers (each of them a part).
struct ShardNotify final : ShardTopicMessage {
  ShardNotify() : ShardTopicMessage(Kind::kNotify) {}
  size_t part_count() const override { return only ? only->size() : 0; }
  std::string_view part_member(size_t i) const override { return (*only)[i]; }

  std::shared_ptr<const std::string> message;
  std::shared_ptr<const std::vector<std::string>> only;  // null: everyone
};

// One tick of a shard, as published on its topic.
struct ShardTick final : ShardTopicMessage {
  ShardTick() : ShardTopicMessage(Kind::kTick) {}

  struct Part {
    std::string_view subscriber;                  // into `results` or the view
    std::shared_ptr<const Results> results;       // may be null
    const shard::SubscriberView* view = nullptr;  // OnViews; may be null
  };

  size_t part_count() const override { return parts.size(); }
  std::string_view part_member(size_t i) const override {
    return parts[i].subscriber;
  }
  bool part_first(size_t i) const override {
    return parts[i].results != nullptr;
  }

  uint64_t tick = 0;
  // OnFrame: the shared snapshot. OnViews: the frame (owning the views).
  std::shared_ptr<const std::string> snapshot;
  std::shared_ptr<const shard::ViewFrame> views;
  std::vector<Part> parts;  // sorted by subscriber
};

// The input results of one tick, grouped by subscriber.
std::map<std::string_view, std::shared_ptr<const Results>> GroupResults(
    const Results& results) {
  std::map<std::string_view, std::shared_ptr<Results>> groups;
  for (const shard::InputResult& r : results) {
    if (r.subscriber.empty()) continue;  // the server side's inputs
    auto& group = groups[r.subscriber];
    if (group == nullptr) group = std::make_shared<Results>();
    group->push_back(r);
  }
  std::map<std::string_view, std::shared_ptr<const Results>> out;
  for (auto& [subscriber, group] : groups) {
    // Keyed by the group's own copy of the name, which the message keeps.
    std::string_view key = group->front().subscriber;
    out.emplace_hint(out.end(), key, std::move(group));
  }
  return out;
}

}  // namespace

std::string ShardTopic(std::string_view shard_id) {
  std::string topic = kShardTopicPrefix;
  topic += shard_id;
  return topic;
}

std::string EncodeTransferFor(std::string_view secret, const WallClock& clock,
                              const shard::MovedTo& moved) {
  Ticket ticket;
  ticket.resource_id = moved.to;
  ticket.subscriber_id = moved.subscriber;
  ticket.claims_json = moved.claims_json;
  ticket.expires_unix = clock.UnixNowSecs() + shard::kMovedRecordSecs;
  return v1::EncodeTransfer(moved.to, MintTicket(secret, ticket, &clock));
}

void ShardReceiver::Post(const std::shared_ptr<const TopicMessage>& message,
                         size_t part) {
  const auto kind = static_cast<const ShardTopicMessage*>(message.get())->kind;
  if (kind == ShardTopicMessage::Kind::kNotify) {
    const auto* note = static_cast<const ShardNotify*>(message.get());
    if (note->only != nullptr && part == TopicMessage::kNoPart) return;
    PostMessage(note->message);
    return;
  }
  if (kind == ShardTopicMessage::Kind::kTransfer) {
    // Only the connections of the player that moved have a part.
    if (part == TopicMessage::kNoPart) return;
    const auto* moved = static_cast<const ShardTransfer*>(message.get());
    PostTransfer(moved->message, moved->to, moved->moved_unix_ms);
    return;
  }
  const auto* tick = static_cast<const ShardTick*>(message.get());
  const ShardTick::Part* mine =
      part == TopicMessage::kNoPart ? nullptr : &tick->parts[part];
  std::shared_ptr<const Results> results =
      mine != nullptr ? mine->results : nullptr;
  if (tick->views == nullptr) {
    PostFrame(tick->tick, tick->snapshot, std::move(results));
    return;
  }
  const shard::ViewFrame& frame = *tick->views;
  if (mine == nullptr || mine->view == nullptr) {
    PostView(frame.tick, frame.replication, nullptr, nullptr, false,
             std::move(results));
    return;
  }
  PostView(frame.tick, frame.replication,
           frame.replication ? frame.snapshot : mine->view->snapshot,
           mine->view->entities, mine->view->baseline, std::move(results));
}

bool ShardFanout::Add(std::string_view shard_id, std::string_view subscriber,
                      std::shared_ptr<ShardReceiver> receiver) {
  return hub_.Add(ShardTopic(shard_id), subscriber, std::move(receiver));
}

void ShardFanout::Remove(std::string_view shard_id, std::string_view subscriber,
                         const ShardReceiver* receiver) {
  hub_.Remove(ShardTopic(shard_id), subscriber, receiver);
}

void ShardFanout::OnFrame(std::string_view shard_id, uint64_t tick,
                          std::string_view snapshot,
                          const std::vector<shard::InputResult>& inputs) {
  const std::string topic = ShardTopic(shard_id);
  if (!hub_.HasSubscribers(topic)) return;  // spare the copies
  // The one copy of the snapshot, shared by every connection's write; the
  // grouping of the results runs on the topic's strand.
  auto shared_snapshot = std::make_shared<const std::string>(snapshot);
  auto results = std::make_shared<const Results>(inputs);
  hub_.Publish(topic, [tick, snap = std::move(shared_snapshot),
                       res = std::move(results)] {
    auto message = std::make_shared<ShardTick>();
    message->tick = tick;
    message->snapshot = snap;
    for (auto& [subscriber, group] : GroupResults(*res)) {
      message->parts.push_back({subscriber, group, nullptr});
    }
    return std::shared_ptr<const TopicMessage>(std::move(message));
  });
}

void ShardFanout::OnViews(std::string_view shard_id,
                          std::shared_ptr<const shard::ViewFrame> frame) {
  hub_.Publish(ShardTopic(shard_id), [frame = std::move(frame)] {
    auto message = std::make_shared<ShardTick>();
    message->tick = frame->tick;
    message->views = frame;
    // The views and the result groups are both sorted by subscriber: one
    // merge walk makes the parts.
    auto groups = GroupResults(frame->inputs);
    auto group = groups.begin();
    auto view = frame->views.begin();
    while (group != groups.end() || view != frame->views.end()) {
      const bool take_view =
          view != frame->views.end() &&
          (group == groups.end() || view->subscriber <= group->first);
      const bool take_group =
          group != groups.end() &&
          (view == frame->views.end() || group->first <= view->subscriber);
      ShardTick::Part part;
      if (take_view) {
        part.subscriber = view->subscriber;
        part.view = &*view++;
      }
      if (take_group) {
        part.subscriber = group->first;
        part.results = group->second;
        ++group;
      }
      message->parts.push_back(std::move(part));
    }
    return std::shared_ptr<const TopicMessage>(std::move(message));
  });
}

void ShardFanout::OnStopped(std::string_view shard_id, int code,
                            std::string reason) {
  hub_.EndTopic(ShardTopic(shard_id), code, std::move(reason));
}

void ShardFanout::OnTransfer(std::string_view from,
                             const shard::MovedTo& moved) {
  // The ticket is minted on the topic's strand, off the shard's worker.
  hub_.Publish(ShardTopic(from),
               [secret = ticket_secret_, clock = &clock_, moved] {
                 auto message = std::make_shared<ShardTransfer>();
                 message->subscriber = moved.subscriber;
                 message->to = moved.to;
                 message->moved_unix_ms = moved.moved_unix_ms;
                 message->message = std::make_shared<const std::string>(
                     EncodeTransferFor(secret, *clock, moved));
                 return std::shared_ptr<const TopicMessage>(std::move(message));
               });
}

size_t ShardFanout::Notify(
    std::string_view shard_id, std::shared_ptr<const std::string> message,
    std::shared_ptr<const std::vector<std::string>> only) {
  const std::string topic = ShardTopic(shard_id);
  const size_t reached = hub_.SubscriptionCount(topic, only.get());
  if (reached == 0) return 0;
  hub_.Publish(topic, [message = std::move(message), only = std::move(only)] {
    auto note = std::make_shared<ShardNotify>();
    note->message = message;
    note->only = only;
    return std::shared_ptr<const TopicMessage>(std::move(note));
  });
  return reached;
}

std::vector<std::string> ShardFanout::ConnectedShards() const {
  std::vector<std::string> out = hub_.Topics(kShardTopicPrefix);
  for (std::string& topic : out) topic.erase(0, sizeof(kShardTopicPrefix) - 1);
  return out;
}

size_t ShardFanout::CloseSubscriber(std::string_view shard_id,
                                    std::string_view subscriber, int code,
                                    std::string_view reason) {
  return hub_.CloseMember(ShardTopic(shard_id), subscriber, code, reason);
}

size_t ShardFanout::CloseShard(std::string_view shard_id, int code,
                               std::string_view reason) {
  return hub_.CloseTopic(ShardTopic(shard_id), code, reason);
}

std::vector<std::string> ShardFanout::Subscribers(
    std::string_view shard_id) const {
  return hub_.Members(ShardTopic(shard_id));
}

void ShardConnections::Count(
    const std::vector<shard::InputResult>& inputs) const {
  for (const shard::InputResult& r : inputs) {
    (r.accepted ? metrics_.inputs_accepted : metrics_.inputs_refused_module)
        ->Add();
  }
}

void ShardConnections::OnFrame(std::string_view shard_id, uint64_t tick,
                               std::string_view snapshot,
                               const std::vector<shard::InputResult>& inputs) {
  Count(inputs);
  fanout_.OnFrame(shard_id, tick, snapshot, inputs);
}

void ShardConnections::OnViews(std::string_view shard_id,
                               std::shared_ptr<const shard::ViewFrame> frame) {
  Count(frame->inputs);
  fanout_.OnViews(shard_id, std::move(frame));
}

void ShardConnections::OnStopped(std::string_view shard_id,
                                 shard::StopReason reason,
                                 std::string_view message) {
  if (!shard::StoppedForGood(reason)) {
    // The shard goes on from its last save (here or on another machine):
    // the client reconnects as after a restart.
    fanout_.OnStopped(shard_id, kCloseGoingAway,
                      "server restarting: reconnect (this machine lost the "
                      "database)");
    return;
  }
  std::string text = shard::StopReasonName(reason);
  if (!message.empty()) text.append(": ").append(message);
  fanout_.OnStopped(shard_id, kCloseShardStopped, std::move(text));
}

void ShardConnections::OnTransfer(std::string_view from,
                                  const shard::MovedTo& moved) {
  fanout_.OnTransfer(from, moved);
}

size_t ShardConnections::CloseSubscriber(std::string_view shard_id,
                                         std::string_view subscriber, int code,
                                         std::string_view reason) {
  return fanout_.CloseSubscriber(shard_id, subscriber, code, reason);
}

size_t ShardConnections::CloseShard(std::string_view shard_id, int code,
                                    std::string_view reason) {
  return fanout_.CloseShard(shard_id, code, reason);
}

std::vector<std::string> ShardConnections::Subscribers(
    std::string_view shard_id) const {
  return fanout_.Subscribers(shard_id);
}

}  // namespace tessera::net
