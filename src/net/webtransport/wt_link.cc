#include "net/webtransport/wt_link.h"

#include <array>

#include "net/connections.h"
#include "net/protocol_v1.h"
#include "net/webtransport/tick_datagrams.h"
#include "net/webtransport/wt_wire.h"

namespace tessera::net::wt {

WtLink::WtLink(boost::asio::any_io_executor executor, Options options,
               MessageLink::Handler& handler)
    : executor_(std::move(executor)),
      options_(options),
      handler_(handler),
      queue_(options.max_queued_frames),
      close_timer_(executor_) {}

void WtLink::Opened(WtSessionIo& io) {
  io_ = &io;
  handler_.OnOpen();
}

void WtLink::StreamData(int64_t stream_id, std::span<const uint8_t> bytes,
                        bool fin) {
  if (stream_ < 0) stream_ = stream_id;
  if (stream_id != stream_ || closing_) return;  // one stream carries all
  in_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  size_t pos = 0;
  while (!closing_) {
    Reader r(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(in_.data()) + pos, in_.size() - pos));
    uint64_t length = 0;
    if (!r.Varint(&length)) break;
    if (length > options_.max_message_bytes) {
      Close(kCloseMessageTooBig, "message too big", false);
      break;
    }
    std::span<const uint8_t> message;
    if (!r.Bytes(static_cast<size_t>(length), &message)) break;
    pos += r.consumed();
    handler_.OnMessage(message, /*binary=*/true);
  }
  in_.erase(0, pos);
  if (fin && !closing_) Close(kCloseGoingAway, "stream finished", false);
}

void WtLink::Ended() {
  if (ended_) return;
  ended_ = true;
  io_ = nullptr;
  close_timer_.cancel();
  queue_.Clear();
  if (!closing_) {
    closing_ = true;
    handler_.OnClosing();
  }
  handler_.OnEnd();
}

std::optional<int64_t> WtLink::rtt_us() const {
  if (io_ == nullptr) return std::nullopt;
  return io_->rtt_us();
}

void WtLink::Send(std::string message) {
  if (!open()) return;
  if (std::optional<std::string> too_slow = queue_.Push(std::move(message))) {
    Close(1008, *too_slow, true);
    return;
  }
  Flush();
}

void WtLink::SendUrgent(std::string message) {
  if (!open()) return;
  queue_.SetUrgent(std::move(message));
  Flush();
}

void WtLink::ToStream(const Outgoing& m) {
  std::string bytes;
  size_t size = 0;
  for (std::string_view p : m.Parts()) size += p.size();
  AppendVarint(bytes, size);
  bytes.reserve(bytes.size() + size);
  for (std::string_view p : m.Parts()) bytes.append(p);
  io_->SendOnStream(stream_, std::move(bytes));
}

void WtLink::SendFrame(const Outgoing& m) {
  const std::array<std::string_view, 4> parts = m.Parts();
  std::vector<std::string> datagrams =
      SplitTick(m.tick, parts, io_->datagram_prefix(), io_->max_datagram());
  if (datagrams.empty()) {
    ToStream(m);  // too large for datagrams: the reliable way
    return;
  }
  for (std::string& d : datagrams) io_->SendDatagram(std::move(d));
  datagrams_sent_ += datagrams.size();
}

void WtLink::Flush() {
  if (io_ == nullptr) return;
  while (const Outgoing* m = queue_.Next()) {
    if (m->is_close) {
      const int code = m->close_code;
      std::string reason = m->head;
      queue_.Clear();
      if (stream_ < 0) {
        io_->CloseSession(static_cast<uint32_t>(code), reason);  // Ended()
        return;
      }
      Outgoing closing;
      closing.head = v1::EncodeClose(code, reason);
      ToStream(closing);
      io_->FinishStream(stream_);
      io_->Flush();
      CloseWhenDelivered(code, std::move(reason), 0, false);
      return;
    }
    if (stream_ < 0) break;  // nothing but a close goes before the HELLO
    // Only whole-snapshot FRAMEs may be lost (the next one replaces them):
    // replication deltas and interest's entered/left go on the stream
    // until the client acknowledges datagrams.
    if (m->is_frame && m->skip == Outgoing::Skip::kSupersede) {
      SendFrame(*m);
    } else {
      if (io_->StreamBacklog(stream_) > options_.max_stream_backlog) break;
      ToStream(*m);
    }
    queue_.Finished();
  }
  io_->Flush();
}

void WtLink::CloseWhenDelivered(int code, std::string reason, int64_t waited_ms,
                                bool delivered) {
  constexpr int64_t kPollMs = 20;
  if (io_ == nullptr) return;
  if (delivered || waited_ms >= options_.close_timeout_ms) {
    io_->CloseSession(static_cast<uint32_t>(code), reason);  // Ended()
    return;
  }
  const bool acked = io_->StreamBacklog(stream_) == 0;
  close_timer_.expires_after(std::chrono::milliseconds(kPollMs));
  close_timer_.async_wait([this, code, reason = std::move(reason), waited_ms,
                           acked](boost::system::error_code ec) mutable {
    if (ec) return;
    CloseWhenDelivered(code, std::move(reason), waited_ms + kPollMs, acked);
  });
}

void WtLink::Close(int code, std::string_view reason, bool drop_queued) {
  if (closing_ || io_ == nullptr) return;
  closing_ = true;
  queue_.PushClose(code, std::string(reason.substr(0, 1024)), drop_queued);
  handler_.OnClosing();
  Flush();
}

}  // namespace tessera::net::wt
