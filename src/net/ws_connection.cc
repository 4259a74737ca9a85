// Invariants (see also send_queue.h):
// - One write at a time: a message goes out whole, either directly (one
//   non-blocking sendmsg while the send buffer has room, direct_write.h) or
//   as the one outstanding Beast write or close (SendQueue::writing()).
// - The read loop is ours: a message growing past max_message_bytes is
//   refused with a clean close (1009) and its remaining bytes are read and
//   discarded, instead of Beast's own limit, which tears the connection
//   down at once and may lose the close frame to a TCP reset.
// - A ping is a write too: while one is in flight (`pinging`) nothing else
//   is written, not even directly (its bytes would interleave with the
//   ping frame), and the close waits for it.
#include "net/ws_connection.h"

#include <algorithm>
#include <array>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <utility>

#include "common/text.h"
#include "net/connections.h"
#include "net/direct_write.h"
#include "net/net_metrics.h"
#include "net/rtt_estimator.h"

namespace tessera::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

constexpr int kClosePolicyViolation = 1008;
constexpr int kCloseTooBig = 1009;
// Read size while discarding the rest of a refused message.
constexpr size_t kDiscardChunk = 64 * 1024;

}  // namespace

bool OffersSubprotocol(std::string_view list, std::string_view protocol) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view token = list.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) {
      token.remove_prefix(1);
    }
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) {
      token.remove_suffix(1);
    }
    if (token == protocol) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

struct WsConnection::Impl {
  enum class State { kAccepting, kOpen, kClosing, kDone };

  Impl(beast::tcp_stream stream, Options opts, NetMetrics& m, Handler& h)
      : ws(std::move(stream)),
        strand(ws.get_executor()),
        options(std::move(opts)),
        metrics(m),
        handler(h),
        close_timer(strand),
        ping_timer(strand),
        queue(options.max_queued_frames),
        clock(options.clock != nullptr ? *options.clock : *RealClock::Get()),
        rtt(clock) {}

  // What each pending operation holds.
  std::shared_ptr<void> Keep() const { return owner.lock(); }

  void Start(http::request<http::string_body> request);
  void OnAccept(beast::error_code ec);
  void DoRead();
  void OnRead(beast::error_code ec, size_t bytes);
  void Close(int code, std::string_view reason, bool drop_queued);
  void StartWrite();
  void AsyncWrite(const Outgoing& message);
  void OnWrite(beast::error_code ec, size_t bytes);
  void ArmPingTimer();
  void SendPing();
  void OnPong(std::string_view payload);
  void WriteFailed() {
    queue.Clear();
    DropConnection();  // ends the read loop too
  }
  void OnCloseSent(beast::error_code ec) {
    queue.Clear();
    if (ec) DropConnection();
    // Otherwise the read loop ends when Beast has the peer's close.
  }
  // Closes the TCP connection at once (pending operations fail).
  void DropConnection() { beast::get_lowest_layer(ws).close(); }
  // The read loop ended: the connection is over.
  void Finish();

  websocket::stream<beast::tcp_stream> ws;
  const asio::any_io_executor strand;
  const Options options;
  NetMetrics& metrics;
  Handler& handler;
  std::weak_ptr<void> owner;
  State state = State::kAccepting;
  beast::flat_buffer buffer;
  asio::steady_timer close_timer;
  asio::steady_timer ping_timer;
  SendQueue queue;
  const Clock& clock;
  RttEstimator rtt;
  int64_t last_heard_us = 0;  // when the peer last sent anything
  bool ping_due = false;      // the timer fired; the ping goes out next
  bool pinging = false;       // a ping is being written
  int batching = 0;           // live WsConnection::Batch scopes
  std::array<asio::const_buffer, 4> write_buffers;
  std::string direct_rest;  // the unwritten end of a short direct write
  size_t direct_room = 0;   // estimate: see WriteMessageDirect
};

void WsConnection::Impl::Start(http::request<http::string_body> request) {
  const bool offered =
      !options.subprotocol.empty() &&
      OffersSubprotocol(request[http::field::sec_websocket_protocol],
                        options.subprotocol);
  ws.set_option(websocket::stream_base::decorator(
      [offered, protocol = options.subprotocol](websocket::response_type& res) {
        res.set(http::field::server, "tessera");
        if (offered) res.set(http::field::sec_websocket_protocol, protocol);
      }));
  websocket::stream_base::timeout timeout{};
  timeout.handshake_timeout =
      std::chrono::milliseconds(std::max<int64_t>(options.close_timeout_ms, 1));
  timeout.idle_timeout = websocket::stream_base::none();
  timeout.keep_alive_pings = false;
  ws.set_option(timeout);
  // Called inside the read loop (on the strand) for each control frame.
  ws.control_callback(
      [this](websocket::frame_type kind, beast::string_view payload) {
        last_heard_us = clock.NowUs();
        if (kind == websocket::frame_type::pong) {
          OnPong(std::string_view(payload.data(), payload.size()));
        }
      });
  ws.read_message_max(0);  // no Beast limit: DoRead enforces ours
  ws.auto_fragment(false);
  ws.binary(true);
  ws.async_accept(
      request, [this, keep = Keep()](beast::error_code ec) { OnAccept(ec); });
}

void WsConnection::Impl::OnAccept(beast::error_code ec) {
  if (ec) {
    Finish();
    return;
  }
  if (state != State::kAccepting) {  // closed while accepting
    StartWrite();
    DoRead();
    return;
  }
  state = State::kOpen;
  last_heard_us = clock.NowUs();
  ArmPingTimer();
  handler.OnOpen();
  DoRead();
}

void WsConnection::Impl::DoRead() {
  size_t room = kDiscardChunk;
  if (state == State::kOpen) {
    const size_t limit = options.max_message_bytes + 1;
    room = limit > buffer.size() ? limit - buffer.size() : 1;
  }
  ws.async_read_some(
      buffer, room,
      [this, keep = Keep()](beast::error_code ec, size_t n) { OnRead(ec, n); });
}

void WsConnection::Impl::OnRead(beast::error_code ec, size_t bytes) {
  if (ec) {
    Finish();
    return;
  }
  metrics.bytes_in->Add(bytes);
  last_heard_us = clock.NowUs();
  const bool open = state == State::kOpen;
  if (open && buffer.size() > options.max_message_bytes) {
    Close(
        kCloseTooBig,
        "message over " + std::to_string(options.max_message_bytes) + " bytes",
        false);
  } else if (open && ws.is_message_done()) {
    metrics.messages_in->Add();
    auto data = buffer.data();
    handler.OnMessage(
        std::span<const uint8_t>(static_cast<const uint8_t*>(data.data()),
                                 data.size()),
        ws.got_binary());
  } else if (open) {
    DoRead();  // the rest of the message
    return;
  }
  // Handled, refused, or closing (everything is discarded then).
  buffer.consume(buffer.size());
  // Reading goes on while closing, until Beast sees the peer's close.
  DoRead();
}

void WsConnection::Impl::Close(int code, std::string_view reason,
                               bool drop_queued) {
  if (state == State::kClosing || state == State::kDone) return;
  const bool was_accepting = state == State::kAccepting;
  state = State::kClosing;
  metrics.CountClose(code);
  handler.OnClosing();
  ping_timer.cancel();
  ping_due = false;
  queue.PushClose(code, std::string(Utf8Prefix(reason, kMaxCloseReasonBytes)),
                  drop_queued);
  close_timer.expires_after(std::chrono::milliseconds(
      std::max<int64_t>(options.close_timeout_ms, 1)));
  close_timer.async_wait([this, keep = Keep()](beast::error_code ec) {
    if (!ec) DropConnection();
  });
  if (!was_accepting) StartWrite();  // else OnAccept starts it
}

void WsConnection::Impl::StartWrite() {
  if (batching > 0 || queue.writing() || pinging ||
      state == State::kAccepting || state == State::kDone) {
    return;
  }
  if (ping_due && state == State::kOpen && ws.is_open()) {
    SendPing();
    return;
  }
  auto& socket = beast::get_lowest_layer(ws).socket();
  while (const Outgoing* next = queue.Next()) {
    if (queue.next_is_urgent()) {
      AsyncWrite(queue.Started());
      return;
    }
    if (next->is_close) {
      if (!ws.is_open()) {  // the peer's close is already being answered
        queue.Clear();
        return;
      }
      const Outgoing& close = queue.Started();
      websocket::close_reason cr(static_cast<websocket::close_code>(
                                     static_cast<uint16_t>(close.close_code)),
                                 close.head);
      ws.async_close(
          cr, [this, keep = Keep()](beast::error_code ec) { OnCloseSent(ec); });
      return;
    }
    // Directly, as many queued messages as fit with one sendmsg, while the
    // socket's buffer has room (not while Beast answers the peer's close).
    if (ws.is_open()) {
      std::array<MessageParts, kMaxDirectBatch> batch;
      std::array<size_t, kMaxDirectBatch> sizes;
      size_t count = 0;
      for (const Outgoing* m = next;
           m != nullptr && !m->is_close && count < kMaxDirectBatch;
           m = queue.Peek(count)) {
        batch[count] = m->Parts();
        sizes[count] = 0;
        for (std::string_view p : batch[count]) sizes[count] += p.size();
        ++count;
      }
      int error = 0;
      size_t whole = 0;
      const DirectResult result = WriteMessagesDirect(
          socket.native_handle(), std::span(batch.data(), count), &direct_room,
          &direct_rest, &error, &whole);
      for (size_t i = 0; i < whole; ++i) {
        queue.Finished();
        metrics.messages_out->Add();
        metrics.bytes_out->Add(sizes[i]);
      }
      if (result == DirectResult::kWritten) continue;
      if (result == DirectResult::kFailed) {
        WriteFailed();
        return;
      }
      if (result == DirectResult::kShort) {  // rare: finish it first
        queue.Started();
        const size_t size = sizes[whole];
        asio::async_write(
            socket, asio::buffer(direct_rest),
            asio::bind_executor(strand, [this, keep = Keep(), size](
                                            beast::error_code ec, size_t) {
              direct_rest.clear();
              OnWrite(ec, size);
            }));
        return;
      }
      // kNoRoom: the send buffer is filling up; Beast waits for room.
    }
    AsyncWrite(queue.Started());
    return;
  }
}

void WsConnection::Impl::AsyncWrite(const Outgoing& message) {
  const std::array<std::string_view, 4> parts = message.Parts();
  for (size_t i = 0; i < parts.size(); ++i) {
    write_buffers[i] = asio::buffer(parts[i]);
  }
  ws.async_write(write_buffers,
                 [this, keep = Keep()](beast::error_code ec, size_t n) {
                   OnWrite(ec, n);
                 });
}

void WsConnection::Impl::OnWrite(beast::error_code ec, size_t bytes) {
  queue.Finished();
  if (ec) {
    WriteFailed();
    return;
  }
  metrics.messages_out->Add();
  metrics.bytes_out->Add(bytes);
  StartWrite();
}

void WsConnection::Impl::ArmPingTimer() {
  if (options.ping_interval_ms <= 0) return;
  ping_timer.expires_after(std::chrono::milliseconds(options.ping_interval_ms));
  ping_timer.async_wait([this, keep = Keep()](beast::error_code ec) {
    if (ec || state != State::kOpen) return;
    const int64_t silent_us = clock.NowUs() - last_heard_us;
    if (options.silence_timeout_ms > 0 &&
        silent_us >= options.silence_timeout_ms * 1000) {
      Close(kCloseUnresponsive,
            "unresponsive: nothing received for " +
                std::to_string(silent_us / 1000000) + " s",
            /*drop_queued=*/true);
      return;
    }
    ping_due = true;
    StartWrite();
    ArmPingTimer();
  });
}

void WsConnection::Impl::SendPing() {
  ping_due = false;
  pinging = true;
  const std::string payload = rtt.NextPing();
  // Beast copies the payload into the frame it writes.
  ws.async_ping(websocket::ping_data(payload.data(), payload.size()),
                [this, keep = Keep()](beast::error_code ec) {
                  pinging = false;
                  if (ec) {
                    WriteFailed();
                    return;
                  }
                  StartWrite();
                });
}

void WsConnection::Impl::OnPong(std::string_view payload) {
  if (std::optional<int64_t> sample = rtt.OnPong(payload)) {
    metrics.connection_rtt->Observe(static_cast<double>(*sample) / 1e6);
  }
}

void WsConnection::Impl::Finish() {
  state = State::kDone;
  handler.OnEnd();
  close_timer.cancel();
  ping_timer.cancel();
  queue.DropQueued();
  DropConnection();
}

WsConnection::WsConnection(beast::tcp_stream stream, Options options,
                           NetMetrics& metrics, Handler& handler)
    : impl_(std::make_unique<Impl>(std::move(stream), std::move(options),
                                   metrics, handler)) {}

WsConnection::~WsConnection() = default;

void WsConnection::Start(http::request<http::string_body> request,
                         std::weak_ptr<void> owner) {
  impl_->owner = std::move(owner);
  impl_->Start(std::move(request));
}

const asio::any_io_executor& WsConnection::executor() const {
  return impl_->strand;
}

bool WsConnection::open() const { return impl_->state == Impl::State::kOpen; }

std::optional<int64_t> WsConnection::rtt_us() const {
  return impl_->rtt.srtt_us();
}

bool WsConnection::accepting() const {
  return impl_->state == Impl::State::kAccepting;
}

SendQueue& WsConnection::queue() { return impl_->queue; }

void WsConnection::Send(std::string message) {
  if (!open()) return;
  if (std::optional<std::string> too_slow =
          impl_->queue.Push(std::move(message))) {
    impl_->Close(kClosePolicyViolation, *too_slow, true);
    return;
  }
  impl_->StartWrite();
}

void WsConnection::SendUrgent(std::string message) {
  if (!open()) return;
  impl_->queue.SetUrgent(std::move(message));
  impl_->StartWrite();
}

void WsConnection::Flush() { impl_->StartWrite(); }

WsConnection::Batch::Batch(WsConnection& connection)
    : impl_(*connection.impl_) {
  ++impl_.batching;
}

WsConnection::Batch::~Batch() {
  if (--impl_.batching == 0) impl_.StartWrite();
}

void WsConnection::Close(int code, std::string_view reason, bool drop_queued) {
  impl_->Close(code, reason, drop_queued);
}

}  // namespace tessera::net
