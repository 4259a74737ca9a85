#include "net/client/v1_client.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <span>
#include <utility>
#include <variant>

namespace tessera::net::client {

namespace asio = boost::asio;
using SteadyClock = V1Client::SteadyClock;

std::shared_ptr<V1Client> V1Client::Create(asio::io_context& ioc,
                                           asio::ssl::context* tls,
                                           Events events) {
  return std::make_shared<V1Client>(ioc, tls, std::move(events));
}

V1Client::V1Client(asio::io_context& ioc, asio::ssl::context* tls,
                   Events events)
    : ws_(WsClient::Create(ioc, tls)),
      timer_(ioc),
      events_(std::move(events)) {}

void V1Client::Connect(const WsTarget& target,
                       std::chrono::milliseconds timeout, std::string ticket,
                       uint64_t hello_flags, std::function<void(Status)> done) {
  ws_->Connect(
      target, timeout,
      [self = shared_from_this(), ticket = std::move(ticket), hello_flags,
       done = std::move(done)](Status status) {
        if (!status.ok() || self->ended_) return done(status);
        self->ws_->Run([self](const uint8_t* data, size_t size,
                              bool) { self->OnMessage(data, size); },
                       [self](int code, const std::string& reason) {
                         self->OnClosed(code, reason);
                       });
        self->ws_->Send(v1::EncodeHello(ticket, v1::kVersion, hello_flags));
        done(Status::Ok());
      });
}

uint64_t V1Client::SendInput(std::string_view payload,
                             std::optional<double> view_tick) {
  const uint64_t seq = pending_.Sent(SteadyClock::now());
  ws_->Send(v1::EncodeInput(seq, payload, view_tick));
  return seq;
}

void V1Client::SendInputsAtRate(double rate, SteadyClock::time_point until,
                                SteadyClock::duration first_after,
                                MakeInputFn make_input, uint64_t max_inputs) {
  if (ended_ || !(rate > 0)) return;
  rate_ = rate;
  inputs_left_ = max_inputs > 0 ? max_inputs : UINT64_MAX;
  inputs_until_ = until;
  make_input_ = std::move(make_input);
  next_input_ = SteadyClock::now() + first_after;
  ScheduleInput();
}

void V1Client::ScheduleInput() {
  if (ended_ || next_input_ >= inputs_until_ || inputs_left_ == 0) return;
  timer_.expires_at(next_input_);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->ended_) return;
    if (std::optional<Outgoing> input = self->make_input_()) {
      --self->inputs_left_;
      const uint64_t seq = self->SendInput(input->payload, input->view_tick);
      if (self->events_.input_sent) self->events_.input_sent(seq);
    }
    self->next_input_ += std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(1.0 / self->rate_));
    self->next_input_ = std::max(self->next_input_, SteadyClock::now());
    self->ScheduleInput();
  });
}

void V1Client::Close() {
  timer_.cancel();
  inputs_until_ = {};
  ws_->Close();
}

void V1Client::Abort() {
  timer_.cancel();
  ended_ = true;
  // Dropped later: Abort may be called from one of the events.
  asio::post(timer_.get_executor(),
             [dropped = std::move(events_), make = std::move(make_input_)] {});
  events_ = {};
  make_input_ = nullptr;
  ws_->Abort();
}

void V1Client::Error(const std::string& what) {
  if (events_.error) events_.error(what);
}

void V1Client::OnMessage(const uint8_t* data, size_t size) {
  if (ended_) return;
  const bool frame = IsFrame(data, size);
  if (events_.received) events_.received(frame, size);
  if (frame && events_.frame) {
    Result<v1::ServerMessage> msg =
        v1::DecodeServerMessage(std::span<const uint8_t>(data, size));
    const v1::Frame* f = msg.ok() ? std::get_if<v1::Frame>(&*msg) : nullptr;
    if (f == nullptr) return Error("a FRAME that does not decode");
    events_.frame(*f);
    if (frame_acks_ && !ended_) AnswerUpTo(f->last_seq);
    return;
  }
  if (frame) {
    if (!frame_acks_) return;
    std::optional<uint64_t> last_seq = FrameLastSeq(data, size);
    if (!last_seq) return Error("a FRAME whose header does not decode");
    return AnswerUpTo(*last_seq);
  }
  Result<v1::ServerMessage> msg =
      v1::DecodeServerMessage(std::span<const uint8_t>(data, size));
  if (!msg.ok()) return Error(msg.status().message());
  if (auto* welcome = std::get_if<v1::Welcome>(&*msg)) {
    if (welcomed_) return Error("a second WELCOME");
    welcomed_ = true;
    frame_acks_ = (welcome->flags & v1::kHelloFrameAcks) != 0;
    if (events_.welcome) events_.welcome(*welcome);
  } else if (auto* ack = std::get_if<v1::Ack>(&*msg)) {
    Answered(ack->seq, nullptr);
  } else if (auto* reject = std::get_if<v1::Reject>(&*msg)) {
    Answered(reject->seq, reject);
  } else if (auto* ping = std::get_if<v1::Ping>(&*msg)) {
    ws_->Send(v1::EncodePong(ping->nonce));
  } else if (auto* transfer = std::get_if<v1::Transfer>(&*msg)) {
    if (transfer_) return Error("a second TRANSFER");
    transfer_ = *transfer;
    // No more inputs: the server refuses them from here on.
    timer_.cancel();
    inputs_until_ = {};
    if (events_.transfer) events_.transfer(*transfer_);
  } else if (auto* f = std::get_if<v1::Frame>(&*msg)) {
    // A FRAME whose header IsFrame did not recognise.
    if (events_.received) events_.received(true, 0);
    if (events_.frame) events_.frame(*f);
    if (frame_acks_) AnswerUpTo(f->last_seq);
  }
}

void V1Client::Answered(uint64_t seq, const v1::Reject* reject) {
  std::optional<SteadyClock::time_point> sent = pending_.Answer(seq);
  if (!sent)
    return Error("an answer to no pending input (seq " + std::to_string(seq) +
                 ")");
  if (events_.answered) {
    events_.answered(seq, SteadyClock::now() - *sent, reject);
  }
}

void V1Client::AnswerUpTo(uint64_t last_seq) {
  pending_.AnswerUpTo(last_seq, [this](uint64_t seq, auto sent) {
    if (events_.answered) {
      events_.answered(seq, SteadyClock::now() - sent, nullptr);
    }
  });
}

void V1Client::OnClosed(int code, const std::string& reason) {
  if (ended_) return;
  ended_ = true;
  timer_.cancel();
  auto closed = std::move(events_.closed);
  events_ = {};
  make_input_ = nullptr;
  if (closed) closed(code, reason);
}

}  // namespace tessera::net::client
