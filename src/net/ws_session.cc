// A WebSocket session: HELLO/ticket check, join, inputs through the token
// bucket into the shard host, frames and ACK/REJECTs out.
//
// Threading: everything of one session runs on its strand (the executor of
// its socket): Beast's read/write/close handlers, the timers, and the jobs
// that PostFrame/PostClose post from other threads. No member needs a lock.
//
// Invariants:
// - One write at a time: a message goes out whole, either directly (one
//   non-blocking sendmsg while the send buffer has room, direct_write.h) or
//   as the one outstanding Beast write or close (`writing_`). Messages wait
//   in `queue_`, whose front is the one being written (the PONG jumps the
//   queue: at most one is pending, `pong_nonce_`).
// - A FRAME is its header plus the shard's shared buffers, never copied per
//   connection. With frame acks (HELLO flag) its last_seq is the ACK and a
//   tick's REJECTs are queued before it; otherwise ACK/REJECTs follow it.
// - A client slower than the tick rate skips frames: a whole-snapshot FRAME
//   replaces the one still waiting (in place; with frame acks it moves to
//   the end, after the REJECTs queued meanwhile). Replication deltas cannot
//   be skipped: beyond max_queued_frames the waiting ones are dropped and
//   the shard sends a new BASELINE. 1008 "too slow" closes a client that
//   finished no frame while max_queued_frames were skipped or between two
//   resyncs, one with more per-subscriber snapshots waiting than that
//   (their entered/left must not be lost), or with more than 16 times that
//   messages of any kind waiting.
// - After Close() the session is `kClosing`: it writes nothing but the close
//   frame, ignores incoming messages and keeps reading until Beast reports
//   the end of the connection; a timer drops the TCP connection if the
//   client does not finish the close handshake in time.
// - Seqs sent to ShardHost::SubmitInput are server-wide input ids
//   (ctx.next_input_id); `outstanding_` maps them back to the client's seq,
//   so results reach the connection that sent the input even when several
//   connections of one subscriber use the same client seqs.
#include "net/ws_session.h"

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <deque>
#include <optional>
#include <unordered_map>

#include "net/direct_write.h"
#include "net/hello_check.h"
#include "net/hub.h"
#include "net/outgoing.h"
#include "net/protocol_v1.h"
#include "net/rate_limiter.h"
#include "net/server_context.h"
#include "net/ticket.h"
#include "shard/shard_host.h"

namespace tessera::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

constexpr uint64_t kMaxSeq = uint64_t{1} << 53;
constexpr int kClosePolicyViolation = 1008;
// Read size while discarding the rest of a refused message.
constexpr size_t kDiscardChunk = 64 * 1024;

int64_t SteadyNowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* CodecName(shard::Codec codec) {
  return codec == shard::Codec::kJson ? "json" : "msgpack";
}

class WsSession final : public HubSession,
                        public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(ServerContext& ctx, beast::tcp_stream stream, std::string shard_id)
      : ctx_(ctx),
        ws_(std::move(stream)),
        strand_(ws_.get_executor()),
        shard_id_(std::move(shard_id)),
        hello_timer_(strand_),
        ping_timer_(strand_),
        close_timer_(strand_) {}

  ~WsSession() override {
    // Released by the hub (Shutdown) or the io_context without a clean end.
    Leave();
    ctx_.RemoveSession(this);
  }

  // On the strand.
  void Start(http::request<http::string_body> request) {
    ctx_.AddSession(this, weak_from_this());
    const bool offered =
        OffersSubprotocol(request[http::field::sec_websocket_protocol]);
    ws_.set_option(websocket::stream_base::decorator(
        [offered](websocket::response_type& res) {
          res.set(http::field::server, "tessera");
          if (offered) {
            res.set(http::field::sec_websocket_protocol, kSubprotocol);
          }
        }));
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = std::chrono::milliseconds(
        std::max<int64_t>(ctx_.options.close_timeout_ms, 1));
    timeout.idle_timeout = websocket::stream_base::none();
    timeout.keep_alive_pings = false;
    ws_.set_option(timeout);
    ws_.read_message_max(0);  // no Beast limit: DoRead enforces ours
    ws_.auto_fragment(false);
    ws_.binary(true);
    ws_.async_accept(request, beast::bind_front_handler(&WsSession::OnAccept,
                                                        shared_from_this()));
  }

  // HubSession; any thread.
  void PostFrame(
      uint64_t tick, std::shared_ptr<const std::string> snapshot,
      std::shared_ptr<const std::vector<shard::InputResult>> results) override {
    asio::post(strand_,
               [self = shared_from_this(), tick, snapshot = std::move(snapshot),
                results = std::move(results)]() mutable {
                 self->DeliverFrame(tick, std::move(snapshot), results.get());
               });
  }

  void PostView(
      uint64_t tick, bool replication,
      std::shared_ptr<const std::string> snapshot,
      std::shared_ptr<const std::string> entities, bool baseline,
      std::shared_ptr<const std::vector<shard::InputResult>> results) override {
    asio::post(strand_, [self = shared_from_this(), tick, replication,
                         snapshot = std::move(snapshot),
                         entities = std::move(entities), baseline,
                         results = std::move(results)]() mutable {
      self->DeliverView(tick, replication, std::move(snapshot),
                        std::move(entities), baseline, results.get());
    });
  }

  void PostClose(int code, std::string reason) override {
    asio::post(strand_,
               [self = shared_from_this(), code, reason = std::move(reason)] {
                 self->Close(code, reason, /*drop_queued=*/false);
               });
  }

 private:
  enum class State { kAccepting, kAwaitHello, kJoined, kClosing, kDone };

  void OnAccept(beast::error_code ec) {
    if (ec) {
      Finish();
      return;
    }
    if (state_ != State::kAccepting) {  // closed while accepting
      StartWrite();
      DoRead();
      return;
    }
    state_ = State::kAwaitHello;
    int stop_code = 0;
    std::string stop_reason;
    if (ctx_.Stopping(&stop_code, &stop_reason)) {
      Close(stop_code, stop_reason, true);
    } else if (ctx_.options.hello_timeout_ms > 0) {
      hello_timer_.expires_after(
          std::chrono::milliseconds(ctx_.options.hello_timeout_ms));
      hello_timer_.async_wait(
          [self = shared_from_this()](beast::error_code ec) {
            if (ec || self->state_ != State::kAwaitHello) return;
            self->Close(
                kCloseHelloTimeout,
                "no HELLO within " +
                    std::to_string(self->ctx_.options.hello_timeout_ms) + " ms",
                false);
          });
    }
    DoRead();
  }

  // Reads the next message piecewise, so that the size limit is ours: a
  // message growing past max_message_bytes is refused with a clean close
  // (1009) and its remaining bytes are read and discarded, instead of
  // Beast's own limit, which tears the connection down at once and may lose
  // the close frame to a TCP reset.
  void DoRead() {
    const size_t limit = ctx_.options.max_message_bytes + 1;
    size_t room = kDiscardChunk;
    if (state_ == State::kAwaitHello || state_ == State::kJoined) {
      room = limit > buffer_.size() ? limit - buffer_.size() : 1;
    }
    ws_.async_read_some(
        buffer_, room,
        beast::bind_front_handler(&WsSession::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t bytes) {
    if (ec) {
      Finish();
      return;
    }
    ctx_.metrics.bytes_in->Add(bytes);
    const bool open = state_ == State::kAwaitHello || state_ == State::kJoined;
    if (open && buffer_.size() > ctx_.options.max_message_bytes) {
      Close(kCloseMessageTooBig,
            "message over " + std::to_string(ctx_.options.max_message_bytes) +
                " bytes",
            false);
    } else if (open && ws_.is_message_done()) {
      ctx_.metrics.messages_in->Add();
      if (!ws_.got_binary()) {
        Close(kCloseBadFrame, "text messages are not allowed", false);
      } else {
        HandleMessage();
      }
    } else if (open) {
      DoRead();  // the rest of the message
      return;
    }
    // Handled, refused, or closing (everything is discarded then).
    buffer_.consume(buffer_.size());
    // Reading goes on while closing, until Beast sees the peer's close.
    DoRead();
  }

  void HandleMessage() {
    auto data = buffer_.data();
    std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data.data()),
                                   data.size());
    Result<v1::ClientMessage> decoded = v1::DecodeClientMessage(bytes);
    if (!decoded.ok()) {
      Close(kCloseBadFrame, decoded.status().message(), false);
      return;
    }
    const v1::ClientMessage& msg = decoded.value();
    if (state_ == State::kAwaitHello) {
      if (const auto* hello = std::get_if<v1::Hello>(&msg)) {
        HandleHello(*hello);
      } else {
        Close(kCloseHelloExpected, "the first message must be HELLO", false);
      }
      return;
    }
    if (std::holds_alternative<v1::Hello>(msg)) {
      Close(kCloseHelloExpected, "HELLO was already received", false);
    } else if (const auto* input = std::get_if<v1::Input>(&msg)) {
      HandleInput(*input);
    } else if (const auto* ping = std::get_if<v1::Ping>(&msg)) {
      // One PONG pending at a time, for the latest PING (as RFC 6455 allows
      // for its own pings): a client flooding PINGs without reading cannot
      // grow the queue. It goes before queued frames, for a truer RTT.
      pong_nonce_ = ping->nonce;
      StartWrite();
    }
    // PONG: nothing to do (the ping only keeps the connection warm).
  }

  void HandleHello(const v1::Hello& hello) {
    hello_timer_.cancel();
    // A version we do not speak is refused before the ticket is looked at.
    TicketCheck check;
    if (hello.version == v1::kVersion) {
      check = VerifyTicket(ctx_.ticket_secret, hello.ticket, shard_id_,
                           ctx_.UnixNow());
    }
    if (std::optional<HelloRefusal> refused = CheckHello(hello, check)) {
      Close(refused->code, refused->reason, false);
      return;
    }
    shard::ShardHost* host = ctx_.host;
    std::optional<shard::ShardInfo> info;
    if (host != nullptr) info = host->Get(shard_id_);
    if (!info || info->status != shard::ShardStatus::kRunning) {
      Close(kCloseShardNotFound, "no running shard \"" + shard_id_ + "\"",
            false);
      return;
    }
    shard::KindConfig kind;
    if (ctx_.options.find_kind) {
      if (auto found = ctx_.options.find_kind(info->kind)) kind = *found;
    }
    subscriber_ = std::move(check.ticket.subscriber_id);
    frame_acks_ = (hello.flags & v1::kHelloFrameAcks) != 0;
    state_ = State::kJoined;
    bucket_.emplace(ctx_.options.input_rate_per_sec, ctx_.options.input_burst,
                    SteadyNowUs());
    // Register before WELCOME, so a client that has its WELCOME is listed.
    // Frames the hub posts meanwhile run on this strand after this handler,
    // so they follow the WELCOME queued below.
    if (!ctx_.hub.Add(shard_id_, subscriber_, shared_from_this())) {
      int code = kCloseGoingAway;
      std::string reason = "server shutting down";
      ctx_.Stopping(&code, &reason);
      Close(code, reason, false);
      return;
    }
    joined_ = true;
    Status added = host->AddSubscriber(shard_id_, subscriber_);
    host_subscribed_ = added.ok();
    // The shard may have stopped between Get and the hub registration, in
    // which case its OnStopped may have missed this session: look again.
    info = host->Get(shard_id_);
    if (!added.ok() || !info) {
      Close(kCloseShardNotFound, "no running shard \"" + shard_id_ + "\"",
            false);
      return;
    }
    if (info->status == shard::ShardStatus::kStopped) {
      std::string reason = shard::StopReasonName(info->stop_reason);
      if (!info->stop_message.empty()) reason += ": " + info->stop_message;
      Close(kCloseShardStopped, reason, false);
      return;
    }
    Send(v1::EncodeWelcome(shard_id_, subscriber_, kind.tick_rate,
                           CodecName(kind.codec), info->tick,
                           frame_acks_ ? v1::kHelloFrameAcks : 0));
    ArmPingTimer();
  }

  void HandleInput(const v1::Input& input) {
    if (input.seq <= last_received_seq_ || input.seq > kMaxSeq) {
      Close(kCloseBadFrame,
            input.seq > kMaxSeq
                ? "input seq " + std::to_string(input.seq) + " is above 2^53"
                : "input seq " + std::to_string(input.seq) +
                      " is not above the previous " +
                      std::to_string(last_received_seq_),
            false);
      return;
    }
    last_received_seq_ = input.seq;
    if (!bucket_->TryTake(SteadyNowUs())) {
      ctx_.metrics.inputs_refused_rate->Add();
      Send(v1::EncodeReject(input.seq, "rate limited"));
      ++strikes_;
      if (ctx_.options.max_strikes > 0 &&
          strikes_ >= ctx_.options.max_strikes) {
        Close(kCloseRateLimited,
              "too many inputs: " + std::to_string(strikes_) + " strikes",
              false);
      }
      return;
    }
    const uint64_t id = ctx_.next_input_id.fetch_add(1);
    outstanding_.emplace(id, input.seq);
    Status submitted =
        ctx_.host->SubmitInput(shard_id_, subscriber_, id, input.payload);
    if (!submitted.ok()) {
      outstanding_.erase(id);
      ctx_.metrics.inputs_refused_queue->Add();
      Send(v1::EncodeReject(input.seq, submitted.message()));
      return;
    }
    ctx_.metrics.inputs_submitted->Add();
  }

  // This connection's results among a tick's; updates last_applied_seq_.
  struct Reply {
    uint64_t seq = 0;
    const std::string* rejection = nullptr;  // null: accepted
  };
  std::vector<Reply> TakeReplies(
      const std::vector<shard::InputResult>* results) {
    std::vector<Reply> replies;
    if (results != nullptr) {
      for (const shard::InputResult& r : *results) {
        auto it = outstanding_.find(r.seq);
        if (it == outstanding_.end()) continue;  // another connection's
        const uint64_t seq = it->second;
        outstanding_.erase(it);
        last_applied_seq_ = std::max(last_applied_seq_, seq);
        replies.push_back(Reply{seq, r.accepted ? nullptr : &r.rejection});
      }
    }
    return replies;
  }

  void QueueMessage(std::string message) {
    Outgoing out;
    out.head = std::move(message);
    queue_.push_back(std::move(out));
  }

  // Queues `frame` (unless it is empty) and the tick's `replies`: after the
  // frame, or with frame acks the REJECTs before it and no ACKs (its
  // last_seq carries them; without a frame they go as ACK messages). False
  // when the connection was closed for being too slow.
  bool QueueFrame(Outgoing frame, const std::vector<Reply>& replies) {
    if (frame_acks_) {
      for (const Reply& r : replies) {
        if (r.rejection != nullptr) {
          QueueMessage(v1::EncodeReject(r.seq, *r.rejection));
        } else if (!frame.is_frame) {
          QueueMessage(v1::EncodeAck(r.seq));
        }
      }
    }
    const size_t max_frames = ctx_.options.max_queued_frames;
    if (frame.is_frame && frame.skip == Outgoing::Skip::kSupersede &&
        Supersede(frame)) {
      ctx_.metrics.frames_superseded->Add();
      if (++skipped_ >= max_frames) {
        Close(kClosePolicyViolation,
              "too slow: " + std::to_string(skipped_) +
                  " frames skipped without one written",
              true);
        return false;
      }
    } else if (frame.is_frame && queued_frames_ >= max_frames) {
      if (frame.skip != Outgoing::Skip::kResync || !wrote_since_resync_) {
        Close(kClosePolicyViolation,
              "too slow: " + std::to_string(queued_frames_) + " frames queued",
              true);
        return false;
      }
      Resync();
    } else if (frame.is_frame) {
      queue_.push_back(std::move(frame));
      ++queued_frames_;
    }
    if (!frame_acks_) {
      for (const Reply& r : replies) {
        QueueMessage(r.rejection == nullptr
                         ? v1::EncodeAck(r.seq)
                         : v1::EncodeReject(r.seq, *r.rejection));
      }
    }
    StartWrite();
    return true;
  }

  // Puts `frame` in the place of the newest frame still waiting to be
  // written, when that one may be superseded; false when there is none.
  // With frame acks the new frame goes last instead (after the REJECTs just
  // queued, which must come before a frame whose last_seq covers them).
  bool Supersede(Outgoing& frame) {
    const size_t in_flight = writing_ && !writing_pong_ ? 1 : 0;
    for (size_t i = queue_.size(); i > in_flight; --i) {
      Outgoing& queued = queue_[i - 1];
      if (!queued.is_frame) continue;
      if (queued.skip != Outgoing::Skip::kSupersede) return false;
      if (frame_acks_) {
        queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i - 1));
        queue_.push_back(std::move(frame));
      } else {
        queued = std::move(frame);
      }
      return true;
    }
    return false;
  }

  // Drops the replication frames waiting to be written (not the replies)
  // and waits for the BASELINE asked of the shard.
  void Resync() {
    const size_t in_flight = writing_ && !writing_pong_ ? 1 : 0;
    auto first = queue_.begin() + static_cast<std::ptrdiff_t>(in_flight);
    auto kept = std::stable_partition(
        first, queue_.end(), [](const Outgoing& o) { return !o.is_frame; });
    queued_frames_ -= static_cast<size_t>(queue_.end() - kept);
    queue_.erase(kept, queue_.end());
    got_baseline_ = false;
    wrote_since_resync_ = false;
    last_snapshot_.reset();  // the dropped frames may have carried it
    ctx_.metrics.baselines_resent->Add();
    (void)ctx_.host->RequestBaseline(shard_id_, subscriber_);
  }

  void DeliverFrame(uint64_t tick, std::shared_ptr<const std::string> snapshot,
                    const std::vector<shard::InputResult>* results) {
    if (state_ != State::kJoined) return;
    std::vector<Reply> replies = TakeReplies(results);
    Outgoing frame;
    frame.head =
        v1::EncodeFrameHeader(tick, last_applied_seq_, snapshot->size());
    frame.body = std::move(snapshot);
    frame.is_frame = true;
    frame.skip = Outgoing::Skip::kSupersede;
    QueueFrame(std::move(frame), replies);
  }

  // See HubSession::PostView.
  void DeliverView(uint64_t tick, bool replication,
                   std::shared_ptr<const std::string> snapshot,
                   std::shared_ptr<const std::string> entities, bool baseline,
                   const std::vector<shard::InputResult>* results) {
    if (state_ != State::kJoined) return;
    std::vector<Reply> replies = TakeReplies(results);
    Outgoing frame;
    if (!replication && snapshot != nullptr) {
      frame.head =
          v1::EncodeFrameHeader(tick, last_applied_seq_, snapshot->size());
      frame.body = std::move(snapshot);
      frame.is_frame = true;
    } else if (replication && entities != nullptr &&
               (baseline || got_baseline_)) {
      got_baseline_ = true;
      const bool send_snapshot =
          snapshot != nullptr && snapshot != last_snapshot_;
      frame.head = v1::EncodeViewFrameHeader(
          tick, last_applied_seq_,
          send_snapshot ? std::optional<size_t>(snapshot->size())
                        : std::nullopt);
      if (send_snapshot) {
        frame.body = snapshot;
        last_snapshot_ = std::move(snapshot);
      }
      frame.mid = v1::EncodeBinHeader(entities->size());
      frame.body2 = std::move(entities);
      frame.is_frame = true;
      frame.skip = Outgoing::Skip::kResync;
    }
    QueueFrame(std::move(frame), replies);
  }

  void ArmPingTimer() {
    if (ctx_.options.ping_interval_ms <= 0) return;
    ping_timer_.expires_after(
        std::chrono::milliseconds(ctx_.options.ping_interval_ms));
    ping_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->state_ != State::kJoined) return;
      self->Send(v1::EncodePing(++self->ping_nonce_));
      self->ArmPingTimer();
    });
  }

  void Send(std::string message) {
    if (state_ != State::kAwaitHello && state_ != State::kJoined) return;
    // Replies (PONG, ACK, REJECT) are bounded too: a client flooding PINGs
    // without reading must not grow the queue.
    if (queue_.size() >= MaxQueuedMessages()) {
      Close(kClosePolicyViolation,
            "too slow: " + std::to_string(queue_.size()) + " messages queued",
            true);
      return;
    }
    Outgoing out;
    out.head = std::move(message);
    queue_.push_back(std::move(out));
    StartWrite();
  }

  size_t MaxQueuedMessages() const {
    return std::max<size_t>(ctx_.options.max_queued_frames, 1) * 16;
  }

  // Starts the close handshake with `code`/`reason` after the messages
  // already queued (or instead of them with `drop_queued`).
  void Close(int code, std::string_view reason, bool drop_queued) {
    if (state_ == State::kClosing || state_ == State::kDone) return;
    const bool accepting = state_ == State::kAccepting;
    state_ = State::kClosing;
    ctx_.metrics.CountClose(code);
    Leave();
    hello_timer_.cancel();
    ping_timer_.cancel();
    pong_nonce_.reset();
    if (drop_queued) DropQueued();
    Outgoing out;
    out.head = TruncateCloseReason(reason);
    out.is_close = true;
    out.close_code = code;
    queue_.push_back(std::move(out));
    close_timer_.expires_after(std::chrono::milliseconds(
        std::max<int64_t>(ctx_.options.close_timeout_ms, 1)));
    close_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->DropConnection();
    });
    if (!accepting) StartWrite();  // else OnAccept starts it
  }

  // Forgets every queued message except the one being written.
  void DropQueued() {
    const size_t in_flight = writing_ && !writing_pong_ ? 1 : 0;
    while (queue_.size() > in_flight) {
      if (queue_.back().is_frame) --queued_frames_;
      queue_.pop_back();
    }
  }

  void StartWrite() {
    if (writing_ || state_ == State::kAccepting || state_ == State::kDone) {
      return;
    }
    if (pong_nonce_ && state_ == State::kJoined) {
      writing_ = true;
      writing_pong_ = true;
      pong_message_ = v1::EncodePong(*pong_nonce_);
      pong_nonce_.reset();
      ws_.async_write(
          asio::buffer(pong_message_),
          beast::bind_front_handler(&WsSession::OnWrite, shared_from_this()));
      return;
    }
    if (state_ != State::kAccepting && WriteDirect()) return;
    if (queue_.empty()) return;
    Outgoing& item = queue_.front();
    if (item.is_close) {
      if (!ws_.is_open()) {  // the peer's close is already being answered
        queue_.clear();
        queued_frames_ = 0;
        return;
      }
      writing_ = true;
      websocket::close_reason cr(static_cast<websocket::close_code>(
                                     static_cast<uint16_t>(item.close_code)),
                                 item.head);
      ws_.async_close(cr, beast::bind_front_handler(&WsSession::OnCloseSent,
                                                    shared_from_this()));
      return;
    }
    writing_ = true;
    const std::array<std::string_view, 4> parts = item.Parts();
    for (size_t i = 0; i < parts.size(); ++i) {
      write_buffers_[i] = asio::buffer(parts[i]);
    }
    ws_.async_write(
        write_buffers_,
        beast::bind_front_handler(&WsSession::OnWrite, shared_from_this()));
  }

  void OnWrite(beast::error_code ec, size_t bytes) {
    writing_ = false;
    if (writing_pong_) {
      writing_pong_ = false;
    } else if (!queue_.empty()) {
      PopWritten();
    }
    if (ec) {
      WriteFailed();
      return;
    }
    ctx_.metrics.messages_out->Add();
    ctx_.metrics.bytes_out->Add(bytes);
    StartWrite();
  }

  // The queue's front message has been written.
  void PopWritten() {
    if (queue_.front().is_frame) {
      --queued_frames_;
      skipped_ = 0;
      wrote_since_resync_ = true;
    }
    queue_.pop_front();
  }

  void WriteFailed() {
    queue_.clear();
    queued_frames_ = 0;
    DropConnection();  // ends the read loop too
  }

  // Writes queued messages with one sendmsg each (net/direct_write.h) while
  // the socket's buffer has room for them. False when the rest must go
  // through Beast (the front is the close, or the buffer is filling up);
  // true when nothing more may be written now: a short write is being
  // finished (writing_), or the connection failed.
  bool WriteDirect() {
    if (!ws_.is_open()) return false;  // Beast answers the peer's close
    auto& socket = beast::get_lowest_layer(ws_).socket();
    while (!queue_.empty() && !queue_.front().is_close) {
      const std::array<std::string_view, 4> payload = queue_.front().Parts();
      size_t size = 0;
      for (std::string_view p : payload) size += p.size();
      int error = 0;
      switch (WriteMessageDirect(socket.native_handle(), payload, &direct_room_,
                                 &direct_rest_, &error)) {
        case DirectResult::kNoRoom:
          return false;
        case DirectResult::kFailed:
          WriteFailed();
          return true;
        case DirectResult::kShort:  // rare: finish it before anything else
          writing_ = true;
          asio::async_write(
              socket, asio::buffer(direct_rest_),
              asio::bind_executor(strand_, [self = shared_from_this(), size](
                                               beast::error_code ec, size_t) {
                self->direct_rest_.clear();
                self->OnWrite(ec, size);
              }));
          return true;
        case DirectResult::kWritten:
          PopWritten();
          ctx_.metrics.messages_out->Add();
          ctx_.metrics.bytes_out->Add(size);
          break;
      }
    }
    return false;
  }

  void OnCloseSent(beast::error_code ec) {
    writing_ = false;
    queue_.clear();
    queued_frames_ = 0;
    if (ec) DropConnection();
    // Otherwise the read loop ends when Beast has the peer's close.
  }

  // Closes the TCP connection at once (pending operations fail).
  void DropConnection() { beast::get_lowest_layer(ws_).close(); }

  // The read loop ended: the connection is over.
  void Finish() {
    state_ = State::kDone;
    Leave();
    hello_timer_.cancel();
    ping_timer_.cancel();
    close_timer_.cancel();
    DropQueued();
    DropConnection();
  }

  // Unregisters from the hub and the host (once).
  void Leave() {
    if (!joined_ || left_) return;
    left_ = true;
    ctx_.hub.Remove(shard_id_, subscriber_, this);
    if (host_subscribed_ && ctx_.host != nullptr) {
      ctx_.host->RemoveSubscriber(shard_id_, subscriber_);
    }
    outstanding_.clear();
  }

  ServerContext& ctx_;
  websocket::stream<beast::tcp_stream> ws_;
  const beast::tcp_stream::executor_type strand_;
  const std::string shard_id_;
  std::string subscriber_;
  State state_ = State::kAccepting;
  bool joined_ = false;           // registered with the hub
  bool host_subscribed_ = false;  // AddSubscriber succeeded
  bool left_ = false;
  beast::flat_buffer buffer_;
  asio::steady_timer hello_timer_;
  asio::steady_timer ping_timer_;
  asio::steady_timer close_timer_;
  std::deque<Outgoing> queue_;
  bool writing_ = false;
  size_t queued_frames_ = 0;
  bool frame_acks_ = false;  // HELLO flag: FRAMEs' last_seq carry the ACKs
  std::string direct_rest_;  // the unwritten end of a short direct write
  size_t direct_room_ = 0;   // estimate: see WriteMessageDirect
  // Frames superseded since a frame was last written.
  size_t skipped_ = 0;
  // False from a Resync until a frame is written: a second resync with
  // nothing written in between closes the connection instead.
  bool wrote_since_resync_ = true;
  std::array<asio::const_buffer, 4> write_buffers_;
  bool got_baseline_ = false;  // replication: FRAMEs flow from a baseline on
  std::shared_ptr<const std::string> last_snapshot_;  // replication
  std::optional<TokenBucket> bucket_;                 // from the join on
  int strikes_ = 0;
  uint64_t last_received_seq_ = 0;
  uint64_t last_applied_seq_ = 0;
  std::unordered_map<uint64_t, uint64_t> outstanding_;  // input id -> seq
  uint64_t ping_nonce_ = 0;
  std::optional<uint64_t> pong_nonce_;  // the PONG to send next
  std::string pong_message_;            // the PONG being written
  bool writing_pong_ = false;
};

}  // namespace

std::string TruncateCloseReason(std::string_view reason) {
  constexpr size_t kMax = 123;
  if (reason.size() <= kMax) return std::string(reason);
  size_t n = kMax;
  // Back up over UTF-8 continuation bytes so no sequence is split.
  while (n > 0 && (static_cast<uint8_t>(reason[n]) & 0xC0) == 0x80) --n;
  return std::string(reason.substr(0, n));
}

void RunWebSocketSession(ServerContext& ctx, beast::tcp_stream stream,
                         http::request<http::string_body> request,
                         std::string shard_id) {
  auto session =
      std::make_shared<WsSession>(ctx, std::move(stream), std::move(shard_id));
  session->Start(std::move(request));
}

}  // namespace tessera::net
