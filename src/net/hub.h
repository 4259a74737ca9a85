// The registry of joined WebSocket sessions: shard -> subscriber -> sessions,
// and the fan-out of shard frames and stops to them.
//
// Threading and invariants:
// - Every method may be called from any thread; the registry is guarded by a
//   mutex held only for map operations (never while a session runs).
// - OnFrame/OnStopped run on shard workers and must be quick: they copy the
//   snapshot once into an immutable shared buffer and post one job to the
//   shard's strand on the io_context. That job posts the frame to each
//   session (which writes on its own strand). Because a shard's jobs run in
//   order on its strand and each session's strand is FIFO, every session sees
//   its shard's frames in tick order and OnStopped after the last frame.
// - Sessions are held by shared_ptr while registered; a session removes
//   itself (Remove) when it starts closing.
// - Shutdown() must run before the io_context is destroyed; afterwards
//   frames and stops are dropped and Add refuses.
#ifndef TESSERA_NET_HUB_H_
#define TESSERA_NET_HUB_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shard/shard_sink.h"
#include "shard/shard_types.h"

namespace boost::asio {
class io_context;
}

namespace tessera::net {

// What the hub needs of a joined connection (implemented by WsSession).
class HubSession {
 public:
  virtual ~HubSession() = default;
  // Queues the FRAME of `tick` (its header + the shared `snapshot`, not
  // copied), then the ACK/REJECTs of this connection's inputs among
  // `results` (the results of this session's subscriber in that tick, in
  // submission order; may be null). Any thread; the work runs on the
  // session's strand.
  virtual void PostFrame(
      uint64_t tick, std::shared_ptr<const std::string> snapshot,
      std::shared_ptr<const std::vector<shard::InputResult>> results) = 0;
  // Queues this connection's part of a tick of a shard with interest or
  // replication (see shard::SubscriberView): with `replication`, a FRAME
  // carrying `entities` (skipped until the first `baseline`) and the
  // shard's `snapshot` (nil when it is the same buffer as the last one
  // sent); without, a FRAME with this subscriber's `snapshot`. Null
  // payloads (the subscriber is not yet known to the shard): no FRAME,
  // only the ACK/REJECTs. Any thread.
  virtual void PostView(
      uint64_t tick, bool replication,
      std::shared_ptr<const std::string> snapshot,
      std::shared_ptr<const std::string> entities, bool baseline,
      std::shared_ptr<const std::vector<shard::InputResult>> results) = 0;
  // Closes the connection with a WebSocket close `code` and `reason`. Any
  // thread; idempotent (the first close wins).
  virtual void PostClose(int code, std::string reason) = 0;
};

class Hub {
 public:
  // `ioc` is not owned and must outlive the hub's Shutdown().
  explicit Hub(boost::asio::io_context& ioc);
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // Registers a joined session. False after Shutdown (the caller closes).
  bool Add(std::string_view shard_id, std::string_view subscriber,
           std::shared_ptr<HubSession> session);
  // Unregisters `session` (no-op if absent). Must not be called while the
  // caller holds a lock the hub's callers might need.
  void Remove(std::string_view shard_id, std::string_view subscriber,
              const HubSession* session);

  // From shard::ShardSink (worker threads). `inputs` may hold results of
  // subscribers with no session here (and of the server side, ""): they are
  // dropped.
  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<shard::InputResult>& inputs);
  // As OnFrame, with each subscriber's own view (worker threads).
  void OnViews(std::string_view shard_id,
               std::shared_ptr<const shard::ViewFrame> frame);
  // Closes every session of the shard with `code`/`reason`, in order after
  // the frames already posted.
  void OnStopped(std::string_view shard_id, int code, std::string reason);

  // Connections API: post closes; return how many sessions were asked.
  size_t CloseSubscriber(std::string_view shard_id, std::string_view subscriber,
                         int code, std::string_view reason);
  size_t CloseShard(std::string_view shard_id, int code,
                    std::string_view reason);
  size_t CloseAll(int code, std::string_view reason);
  std::vector<std::string> Subscribers(std::string_view shard_id) const;
  size_t session_count() const;

  // Drops every registration (outside the lock) and refuses later work.
  // Idempotent.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_HUB_H_
