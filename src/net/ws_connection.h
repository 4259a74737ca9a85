// A server-side WebSocket connection, knowing nothing of what it carries:
// the Beast transport (accept, the read loop with our message size limit,
// writes one at a time, directly with one sendmsg while the socket has room
// (net/direct_write) or through Beast, the close handshake with a timeout)
// driving a net::SendQueue, whose policy decides what is written when.
// A protocol session (net/shard_session) owns one and implements Handler.
//
// Threading: everything runs on the connection's strand (the executor of
// its socket): Beast's handlers, the close timer, and whatever the owner
// posts to executor(). No member needs a lock.
//
// Lifetime: the owner keeps the connection; each pending operation holds a
// shared_ptr to the owner (taken from the weak_ptr given to Start), so the
// owner lives until the connection is over or the io_context is destroyed.
//
// Round trip: while open, the connection sends a WebSocket ping control
// frame every Options::ping_interval_ms and times the pong (RttEstimator);
// rtt_us() is the smoothed estimate. A ping is a write like any other (one
// at a time, before the queued messages when due). Beast's own idle timeout
// and keep-alive pings stay off (the pongs of ours would count as activity
// for it if it were turned on). A peer silent for
// Options::silence_timeout_ms is closed (4015), checked at each ping.
//
// States: accepting -> open -> closing -> done. After Close() the
// connection writes nothing but the close frame, hands no more messages to
// the handler and keeps reading until Beast reports the end of the
// connection; a timer drops the TCP connection if the peer does not finish
// the close handshake in time.
#ifndef TESSERA_NET_WS_CONNECTION_H_
#define TESSERA_NET_WS_CONNECTION_H_

#include <boost/asio/any_io_executor.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "net/message_link.h"
#include "net/send_queue.h"

namespace tessera::net {

struct NetMetrics;

// Whether the comma-separated Sec-WebSocket-Protocol `list` offers
// `protocol`.
bool OffersSubprotocol(std::string_view list, std::string_view protocol);

// The longest close reason a close frame carries (RFC 6455 5.5).
inline constexpr size_t kMaxCloseReasonBytes = 123;

class WsConnection final : public MessageLink {
  struct Impl;

 public:
  struct Options {
    size_t max_message_bytes = 64 * 1024;  // larger messages: close 1009
    int64_t close_timeout_ms = 2000;       // also the handshake timeout
    size_t max_queued_frames = 64;         // see SendQueue
    // Answered in Sec-WebSocket-Protocol when the client offers it.
    std::string subprotocol;
    // WebSocket pings for the round trip; 0: none (rtt_us() stays unknown).
    int64_t ping_interval_ms = 0;
    // With pings on: a peer that sent nothing (no message, no pong, no
    // control frame) for this long is closed with 4015 "unresponsive",
    // dropping what waits for it (a dead link or a frozen client holds no
    // slot for ever). Checked at each ping; 0: never.
    int64_t silence_timeout_ms = 0;
    // What the round trip is measured with; null: the real clock. Not
    // owned; must outlive the connection.
    const Clock* clock = nullptr;
  };

  using Handler = MessageLink::Handler;

  // `metrics` and `handler` are not owned and must outlive the connection.
  WsConnection(boost::beast::tcp_stream stream, Options options,
               NetMetrics& metrics, Handler& handler);
  ~WsConnection() override;
  WsConnection(const WsConnection&) = delete;
  WsConnection& operator=(const WsConnection&) = delete;

  // Accepts the WebSocket upgrade `request`; call on the strand. `owner`
  // (the object holding this connection) is kept alive by every pending
  // operation.
  void Start(
      boost::beast::http::request<boost::beast::http::string_body> request,
      std::weak_ptr<void> owner);

  // The strand: post work for the connection here.
  const boost::asio::any_io_executor& executor() const override;

  // Open: messages may be queued (not accepting, closing or done).
  bool open() const override;
  bool accepting() const;

  // The smoothed round trip of the WebSocket pings (microseconds); nullopt
  // until a pong answered one. On the strand.
  std::optional<int64_t> rtt_us() const override;

  // The send queue; call Flush() after changing it.
  SendQueue& queue() override;
  // Queues `message` when open; a peer with too many messages waiting is
  // closed with 1008 (see SendQueue::Push).
  void Send(std::string message) override;
  // Queues `message` to go before anything else queued (see
  // SendQueue::SetUrgent).
  void SendUrgent(std::string message) override;
  // Starts writing what waits, if nothing is being written.
  void Flush() override;

  // While a Batch lives, what is sent only waits; when the last one ends,
  // the waiting messages go out together (one sendmsg for as many as the
  // socket has room for). For a burst of messages made in one go, such as
  // several commits of one group commit. On the strand.
  class Batch {
   public:
    explicit Batch(WsConnection& connection);
    ~Batch();
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    Impl& impl_;
  };
  // Starts the close handshake with `code`/`reason` (cut to a close frame's
  // size on a character boundary) after the messages already queued, or
  // instead of them with `drop_queued`. Idempotent: the first close wins.
  void Close(int code, std::string_view reason, bool drop_queued) override;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_WS_CONNECTION_H_
