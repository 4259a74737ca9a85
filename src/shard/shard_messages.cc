// ShardHost: what a shard does after its tick for the shards around it (the
// moves its module asks for, its outbox, its groups), message delivery
// before its tick, Publish, and the host's refusal lines and counters.
// The checks, inboxes and routing are message_router.h's.
#include <string>
#include <utility>
#include <vector>

#include "common/text.h"
#include "shard/hosted_shard.h"
#include "shard/message_router.h"
#include "shard/shard_host.h"
#include "shard/transfers.h"

namespace tessera::shard {
namespace {

constexpr size_t kLogTextBytes = 256;

std::string Q(std::string_view text) {
  return "\"" + EscapeForLog(text, kLogTextBytes) + "\"";
}

std::string TargetName(const MessageTarget& to) {
  switch (to.kind) {
    case TargetKind::kShard:
      return to.name;
    case TargetKind::kGroup:
      return "group " + to.name;
    case TargetKind::kAll:
      return "all";
  }
  return "?";
}

Status RefusalStatus(MessageRefusal reason) {
  return InvalidArgument(
      reason == MessageRefusal::kTopic
          ? "a message topic has 1 to " + std::to_string(abi::kMaxTopicBytes) +
                " bytes"
          : "message data has at most " +
                std::to_string(abi::kMaxMessageDataBytes) + " bytes");
}

}  // namespace

void ShardHost::AfterTick(HostedShard& shard, int64_t now_us) {
  GuestShard& guest = *shard.guest;
  Result<std::vector<TransferRequestOut>> requests =
      guest.TakeTransferRequests();
  if (requests.ok() && !requests->empty()) {
    std::vector<std::shared_ptr<Move>> moves;
    std::vector<std::shared_ptr<Move>> over;
    {
      std::lock_guard<std::mutex> lock(shard.mu);
      for (TransferRequestOut& request : *requests) {
        auto move = std::make_shared<Move>();
        move->record.from_shard = shard.id;
        move->record.to_shard = std::move(request.to);
        move->record.subscriber = std::move(request.subscriber);
        auto claims = shard.claims.find(move->record.subscriber);
        if (claims != shard.claims.end()) {
          move->record.claims_json = claims->second;
        }
        move->requested_us = now_us;
        (moves.size() < abi::kMaxTransferRequestsPerTick ? moves : over)
            .push_back(std::move(move));
      }
    }
    for (auto& move : over) {
      move->outcome = TransferResult{
          TransferError::kInvalid,
          "over " + std::to_string(abi::kMaxTransferRequestsPerTick) +
              " transfer requests in one tick"};
      EndMove(*move, now_us);
    }
    StartMoves(shard, std::move(moves), now_us);
  }
  if (!guest.failed()) SendOutbox(shard);
  if (!guest.failed()) UpdateGroups(shard);
  if (guest.failed()) {
    Finish(shard, StopReason::kFailed, guest.failure(), now_us);
  }
}

void ShardHost::SendOutbox(HostedShard& shard) {
  Result<std::vector<OutgoingMessage>> outbox = shard.guest->TakeOutbox();
  if (!outbox.ok() || outbox->empty()) return;
  messages_sent_.fetch_add(outbox->size(), std::memory_order_relaxed);
  size_t sent = 0;
  for (OutgoingMessage& m : *outbox) {
    std::optional<MessageRefusal> refusal = CheckMessage(m.topic, m.data);
    if (!refusal && ++sent > options_.max_messages_sent_per_tick) {
      refusal = MessageRefusal::kRate;
    }
    if (refusal) {
      RefuseMessage(shard.id, TargetName(m.to), m.topic, *refusal);
      continue;
    }
    auto message = std::make_shared<ShardMessage>(
        ShardMessage{shard.id, std::move(m.topic), std::move(m.data)});
    RouteOutgoing(shard.id, m.to, std::move(message), nullptr, nullptr);
  }
}

void ShardHost::RouteOutgoing(std::string_view sender, const MessageTarget& to,
                              std::shared_ptr<const ShardMessage> message,
                              size_t* delivered, size_t* refused) {
  std::vector<RoutedRefusal> refusals;
  const size_t queued = router_->Route(sender, to, message, &refusals);
  for (const RoutedRefusal& r : refusals) {
    RefuseMessage(sender, r.target, message->topic, r.reason);
  }
  if (delivered != nullptr) *delivered += queued;
  if (refused != nullptr) *refused += refusals.size();
}

void ShardHost::DeliverInbox(HostedShard& shard) {
  std::vector<std::shared_ptr<const ShardMessage>> batch =
      shard.inbox->Take(options_.max_messages_applied_per_tick);
  if (batch.empty()) return;
  if (shard.guest->DeliverMessages(batch).ok()) {
    messages_delivered_.fetch_add(batch.size(), std::memory_order_relaxed);
  }
}

void ShardHost::UpdateGroups(HostedShard& shard) {
  Result<std::vector<std::string>> groups = shard.guest->Groups();
  if (!groups.ok()) return;
  GroupList list = CheckGroups(std::move(groups).value());
  if (!router_->SetGroups(shard.id, list.groups) || list.dropped.empty()) {
    return;
  }
  HostLog(shard.id, DroppedGroupsLine(shard.id, list));
}

void ShardHost::RefuseMessage(std::string_view sender, std::string_view target,
                              std::string_view topic, MessageRefusal reason,
                              uint64_t count) {
  messages_refused_[static_cast<size_t>(reason)].fetch_add(
      count, std::memory_order_relaxed);
  if (!options_.host_log) return;
  // The line is about the sender, or the stopped shard for kStopped.
  const std::string_view about =
      reason == MessageRefusal::kStopped ? target : sender;
  std::optional<uint64_t> suppressed =
      log_limiter_->Allow(about, clock_->NowUs());
  if (!suppressed) return;
  std::string line;
  if (reason == MessageRefusal::kStopped) {
    line = std::to_string(count) + " message" + (count == 1 ? "" : "s") +
           " queued for shard " + Q(target) +
           " refused: " + MessageRefusalName(reason);
  } else {
    line = "message from " +
           (sender.empty() ? std::string("the server") : "shard " + Q(sender)) +
           " to " + Q(target) + " topic " + Q(topic) +
           " refused: " + MessageRefusalName(reason);
  }
  if (*suppressed > 0) {
    line += " (" + std::to_string(*suppressed) +
            " more refusal lines held back since the last one)";
  }
  HostLog(about, line);
}

Result<ShardHost::PublishResult> ShardHost::Publish(const MessageTarget& to,
                                                    std::string topic,
                                                    std::string data) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) {
      return Status(StatusCode::kFailedPrecondition, "the host has shut down");
    }
  }
  messages_sent_.fetch_add(1, std::memory_order_relaxed);
  if (std::optional<MessageRefusal> refusal = CheckMessage(topic, data)) {
    RefuseMessage("", TargetName(to), topic, *refusal);
    return RefusalStatus(*refusal);
  }
  PublishResult result;
  auto message = std::make_shared<ShardMessage>(
      ShardMessage{"", std::move(topic), std::move(data)});
  RouteOutgoing("", to, std::move(message), &result.delivered, &result.refused);
  return result;
}

void ShardHost::HostLog(std::string_view shard_id,
                        std::string_view line) const {
  if (options_.host_log) options_.host_log(shard_id, line);
}

}  // namespace tessera::shard
