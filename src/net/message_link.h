// What a protocol session (net/shard_session) needs of the connection it
// runs on, whatever carries it: a WebSocket (net/ws_connection) or a
// WebTransport session (net/webtransport/wt_link). Messages are whole
// protocol-v1 messages; the send queue's policy (net/send_queue) decides
// what is written when.
//
// Threading: every call on executor() (the connection's strand), and every
// Handler event there too.
#ifndef TESSERA_NET_MESSAGE_LINK_H_
#define TESSERA_NET_MESSAGE_LINK_H_

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tessera::net {

class SendQueue;

class MessageLink {
 public:
  // What the owner does with the connection's events (on the strand).
  class Handler {
   public:
    virtual ~Handler() = default;
    // The handshake is done; the connection is open.
    virtual void OnOpen() = 0;
    // A whole message arrived (the bytes are valid during the call).
    virtual void OnMessage(std::span<const uint8_t> bytes, bool binary) = 0;
    // Close() began (once): stop producing.
    virtual void OnClosing() = 0;
    // The connection is over (once).
    virtual void OnEnd() = 0;
  };

  virtual ~MessageLink() = default;
  // The strand: post work for the connection here.
  virtual const boost::asio::any_io_executor& executor() const = 0;
  // Open: messages may be queued.
  virtual bool open() const = 0;
  // The smoothed round trip (microseconds); nullopt until measured.
  virtual std::optional<int64_t> rtt_us() const = 0;
  // The send queue; call Flush() after changing it.
  virtual SendQueue& queue() = 0;
  // Queues `message` when open (a peer with too many waiting is closed).
  virtual void Send(std::string message) = 0;
  // Queues `message` before anything else queued (see SendQueue::SetUrgent).
  virtual void SendUrgent(std::string message) = 0;
  // Starts writing what waits.
  virtual void Flush() = 0;
  // Closes with `code`/`reason` after what is queued, or instead of it with
  // `drop_queued`. Idempotent: the first close wins.
  virtual void Close(int code, std::string_view reason, bool drop_queued) = 0;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_MESSAGE_LINK_H_
