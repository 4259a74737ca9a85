// Shard ticks on the hub: what the shard host reports (frames, views,
// stops, players that moved away; shard::ShardSink's calls) becomes
// messages on the topic "shard/<id>", and ShardReceiver is what a shard
// connection implements to get them back as frames. A tick is one message:
// the snapshot copied once into an immutable shared buffer, each
// subscriber's input results and view as its part. A move is one message
// with a part for the player that left: its TRANSFER.
//
// Threading: every method may be called from any thread (see hub.h); the
// ordering guarantees are the hub's: a connection sees its shard's ticks in
// order, a TRANSFER after the ticks published before it, and OnStopped's
// close after the last one.
#ifndef TESSERA_NET_SHARD_FANOUT_H_
#define TESSERA_NET_SHARD_FANOUT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "net/connections.h"
#include "net/hub.h"
#include "net/net_metrics.h"
#include "shard/shard_sink.h"
#include "shard/shard_types.h"
#include "shard/talk_types.h"

namespace tessera::net {

// The hub topic of a shard's ticks.
std::string ShardTopic(std::string_view shard_id);

// The TRANSFER message telling `moved.subscriber` where it went: a ticket
// for `moved.to` with the same subscriber and `moved.claims_json`, issued
// now by `clock` and valid shard::kMovedRecordSecs, signed with `secret`.
std::string EncodeTransferFor(std::string_view secret, const WallClock& clock,
                              const shard::MovedTo& moved);

// A connection joined to a shard (implemented by the shard session).
class ShardReceiver : public TopicSubscriber {
 public:
  using Results = std::vector<shard::InputResult>;
  // Queues the FRAME of `tick` (its header + the shared `snapshot`, not
  // copied), then the ACK/REJECTs of this connection's inputs among
  // `results` (the results of this connection's subscriber in that tick,
  // in submission order; may be null). Any thread; the work runs on the
  // connection's strand.
  virtual void PostFrame(uint64_t tick,
                         std::shared_ptr<const std::string> snapshot,
                         std::shared_ptr<const Results> results) = 0;
  // Queues this connection's part of a tick of a shard with interest or
  // replication (see shard::SubscriberView): with `replication`, a FRAME
  // carrying `entities` (skipped until the first `baseline`) and the
  // shard's `snapshot` (nil when it is the same buffer as the last one
  // sent); without, a FRAME with this subscriber's `snapshot`. Null
  // payloads (the subscriber is not yet known to the shard): no FRAME,
  // only the ACK/REJECTs. Any thread.
  virtual void PostView(uint64_t tick, bool replication,
                        std::shared_ptr<const std::string> snapshot,
                        std::shared_ptr<const std::string> entities,
                        bool baseline,
                        std::shared_ptr<const Results> results) = 0;

  // The subscriber moved to shard `to` at `moved_unix_ms`: a connection
  // whose ticket was issued before then sends `transfer` (the TRANSFER
  // message, shared by the subscriber's connections) as its last message
  // and closes with 4011; one with a later ticket joined after the move
  // and stays. Any thread.
  virtual void PostTransfer(std::shared_ptr<const std::string> transfer,
                            std::string to, int64_t moved_unix_ms) = 0;

  // Queues `message`, a whole protocol message (a NOTIFY, shared by every
  // connection it goes to), after what is queued, as an ACK/REJECT is: no
  // later frame supersedes it. Dropped before the join. Any thread.
  virtual void PostMessage(std::shared_ptr<const std::string> message) = 0;

  // TopicSubscriber: unpacks a shard tick into PostFrame or PostView, a
  // move into PostTransfer, a notification into PostMessage.
  void Post(const std::shared_ptr<const TopicMessage>& message,
            size_t part) final;
};

class ShardFanout;

// The network's side of the shard host: an observer of its events (input
// results counted in the net metrics, ticks put on the hub by the
// ShardFanout, a stopped shard's connections closed with 4006, a moved
// player's connections sent TRANSFER and closed with 4011) and the admin
// API's Connections. Owned by the net::Server (Server::shards()).
// Threading: every method from any thread.
class ShardConnections final : public shard::ShardSink, public Connections {
 public:
  // Not owned; must outlive this. `connection_count` counts every open
  // WebSocket connection of the server.
  ShardConnections(ShardFanout& fanout, const NetMetrics& metrics,
                   std::function<size_t()> connection_count)
      : fanout_(fanout),
        metrics_(metrics),
        connection_count_(std::move(connection_count)) {}

  // shard::ShardSink
  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<shard::InputResult>& inputs) override;
  void OnViews(std::string_view shard_id,
               std::shared_ptr<const shard::ViewFrame> frame) override;
  void OnStopped(std::string_view shard_id, shard::StopReason reason,
                 std::string_view message) override;
  void OnTransfer(std::string_view from, const shard::MovedTo& moved) override;

  // Connections
  size_t CloseSubscriber(std::string_view shard_id, std::string_view subscriber,
                         int code, std::string_view reason) override;
  size_t CloseShard(std::string_view shard_id, int code,
                    std::string_view reason) override;
  std::vector<std::string> Subscribers(
      std::string_view shard_id) const override;
  size_t ConnectionCount() const override { return connection_count_(); }

  // The fan-out (NOTIFY: net/notify_fanout.h).
  ShardFanout& fanout() { return fanout_; }

 private:
  void Count(const std::vector<shard::InputResult>& inputs) const;

  ShardFanout& fanout_;
  const NetMetrics& metrics_;
  const std::function<size_t()> connection_count_;
};

class ShardFanout {
 public:
  // `hub` and `clock` are not owned and must outlive this; `ticket_secret`
  // signs the tickets of TRANSFER messages, dated by `clock`.
  ShardFanout(Hub& hub, std::string ticket_secret, const WallClock& clock)
      : hub_(hub), ticket_secret_(std::move(ticket_secret)), clock_(clock) {}

  // Registers a joined connection. False after the hub's Shutdown (the
  // caller closes).
  bool Add(std::string_view shard_id, std::string_view subscriber,
           std::shared_ptr<ShardReceiver> receiver);
  void Remove(std::string_view shard_id, std::string_view subscriber,
              const ShardReceiver* receiver);

  // From shard::ShardSink (worker threads). `inputs` may hold results of
  // subscribers with no connection here (and of the server side, ""):
  // they are dropped.
  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<shard::InputResult>& inputs);
  // As OnFrame, with each subscriber's own view (worker threads).
  void OnViews(std::string_view shard_id,
               std::shared_ptr<const shard::ViewFrame> frame);
  // Closes every connection of the shard with `code`/`reason`, in order
  // after the ticks already posted.
  void OnStopped(std::string_view shard_id, int code, std::string reason);
  // Sends the TRANSFER of `moved` to every connection of `moved.subscriber`
  // on `from` (after the ticks already posted; see PostTransfer).
  void OnTransfer(std::string_view from, const shard::MovedTo& moved);

  // Puts `message` (a whole protocol message: NOTIFY) on the shard's topic,
  // after the ticks already posted, for every connection of the shard or,
  // with `only` (sorted ascending, unique), for the connections of the
  // listed subscribers. Returns the connections it is for now; 0: nothing
  // was posted. Any thread.
  size_t Notify(std::string_view shard_id,
                std::shared_ptr<const std::string> message,
                std::shared_ptr<const std::vector<std::string>> only);
  // The shards with connections now, ascending.
  std::vector<std::string> ConnectedShards() const;

  // Connections API: post closes; return how many connections were asked.
  size_t CloseSubscriber(std::string_view shard_id, std::string_view subscriber,
                         int code, std::string_view reason);
  size_t CloseShard(std::string_view shard_id, int code,
                    std::string_view reason);
  size_t CloseAll(int code, std::string_view reason) {
    return hub_.CloseAll(code, reason);
  }
  std::vector<std::string> Subscribers(std::string_view shard_id) const;
  // Subscriptions of every topic of the hub.
  size_t session_count() const { return hub_.subscription_count(); }
  void Shutdown() { hub_.Shutdown(); }

 private:
  Hub& hub_;
  const std::string ticket_secret_;
  const WallClock& clock_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SHARD_FANOUT_H_
