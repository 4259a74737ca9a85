// A MessageLink over a WebTransport session (docs/protocol.md
// "WebTransport"): protocol-v1 messages both ways on the client's first
// bidirectional stream, each preceded by its length as a QUIC varint;
// whole-snapshot FRAMEs as datagrams cut by tick (tick_datagrams.h), or on
// the stream when a tick needs more than kMaxTickChunks datagrams (FRAMEs
// that must not be lost, replication's and interest's, on the stream for
// now); and CLOSE [22,
// code, reason] on the stream, which then ends, before the session's
// close.
//
// Backpressure: while the stream holds more than `max_stream_backlog`
// unacknowledged bytes nothing more is taken from the send queue, whose
// policy then supersedes frames or closes the client as too slow.
//
// Threading: on the WebTransport port's io thread (executor()).
#ifndef TESSERA_NET_WEBTRANSPORT_WT_LINK_H_
#define TESSERA_NET_WEBTRANSPORT_WT_LINK_H_

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "net/message_link.h"
#include "net/send_queue.h"
#include "net/webtransport/wt_session.h"

namespace tessera::net::wt {

class WtLink final : public MessageLink {
 public:
  struct Options {
    size_t max_message_bytes = 64 * 1024;  // larger: close 1009
    size_t max_queued_frames = 64;
    size_t max_stream_backlog = 256 * 1024;
    // How long the CLOSE message may take to be acknowledged before the
    // session closes anyway.
    int64_t close_timeout_ms = 2000;
  };
  WtLink(boost::asio::any_io_executor executor, Options options,
         MessageLink::Handler& handler);

  // ---- The session's events (from its WtSessionHandler) ----
  void Opened(WtSessionIo& io);
  void StreamData(int64_t stream_id, std::span<const uint8_t> bytes, bool fin);
  void Ended();

  // MessageLink
  const boost::asio::any_io_executor& executor() const override {
    return executor_;
  }
  bool open() const override { return io_ != nullptr && !closing_; }
  std::optional<int64_t> rtt_us() const override;
  SendQueue& queue() override { return queue_; }
  void Send(std::string message) override;
  void SendUrgent(std::string message) override;
  void Flush() override;
  void Close(int code, std::string_view reason, bool drop_queued) override;

  uint64_t datagrams_sent() const { return datagrams_sent_; }

 private:
  void ToStream(const Outgoing& m);
  void SendFrame(const Outgoing& m);
  // The session closes once the stream (CLOSE and its end) was
  // acknowledged and a moment passed, or at the close timeout: a browser
  // drops what a stream still holds unread when its session closes.
  void CloseWhenDelivered(int code, std::string reason, int64_t waited_ms,
                          bool delivered);

  boost::asio::any_io_executor executor_;
  const Options options_;
  MessageLink::Handler& handler_;
  SendQueue queue_;
  WtSessionIo* io_ = nullptr;
  int64_t stream_ = -1;  // the client's first bidirectional stream
  std::string in_;       // its bytes not yet cut into messages
  bool closing_ = false;
  bool ended_ = false;
  boost::asio::steady_timer close_timer_;
  uint64_t datagrams_sent_ = 0;
};

}  // namespace tessera::net::wt

#endif  // TESSERA_NET_WEBTRANSPORT_WT_LINK_H_
