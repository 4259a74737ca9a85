#include "bench/net/bot.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>
#include <span>

#include "net/protocol_v1.h"

namespace tessera::bench {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace v1 = net::v1;

// A FRAME starts with an array header then the type 19; frames are only
// counted, not decoded (the bots would otherwise spend more CPU decoding
// snapshots than the server spends sending them).
bool IsFrame(const uint8_t* p, size_t n) {
  if (n < 2) return false;
  const bool fixarray = (p[0] & 0xf0) == 0x90;
  return fixarray && p[1] == v1::kFrame;
}

constexpr Bot::Clock::time_point kAnswered = Bot::Clock::time_point::min();

}  // namespace

Bot::Bot(asio::io_context& ioc, BotConfig config, BotStats* stats)
    : config_(std::move(config)),
      stats_(stats),
      ws_(ioc),
      timer_(ioc),
      rng_(config_.seed) {}

void Bot::Join(std::function<void(bool)> on_joined) {
  on_joined_ = std::move(on_joined);
  auto self = shared_from_this();
  beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(30));
  beast::get_lowest_layer(ws_).async_connect(
      config_.endpoint, [self](beast::error_code ec) {
        if (ec) return self->Fail("connect");
        beast::error_code ignored;
        beast::get_lowest_layer(self->ws_).socket().set_option(
            asio::ip::tcp::no_delay(true), ignored);
        beast::get_lowest_layer(self->ws_).expires_never();
        self->ws_.set_option(websocket::stream_base::timeout::suggested(
            beast::role_type::client));
        self->ws_.binary(true);
        self->ws_.async_handshake(
            self->config_.host_header, "/shard/" + self->config_.shard,
            [self](beast::error_code ec) {
              if (ec) return self->Fail("upgrade");
              self->Send(v1::EncodeHello(self->config_.ticket));
              self->Read();
            });
      });
}

void Bot::AbandonPending() {
  if (stats_->in_flight == nullptr) return;
  for (auto& sent : pending_) {
    if (sent != kAnswered) stats_->in_flight->Answered();
    sent = kAnswered;
  }
}

void Bot::Fail(const char* /*what*/) {
  if (done_) return;
  done_ = true;
  AbandonPending();
  ++stats_->errors;
  timer_.cancel();
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
  if (!joined_ && on_joined_) {
    ++stats_->join_failures;
    auto callback = std::move(on_joined_);
    on_joined_ = nullptr;
    callback(false);
  }
}

void Bot::Read() {
  ws_.async_read(
      buffer_, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) {
          if (ec == websocket::error::closed) {
            if (!self->closing_) {
              ++self->stats_->server_closes[self->ws_.reason().code];
            }
            if (!self->joined_) return self->Fail("closed before WELCOME");
            self->done_ = true;
            self->timer_.cancel();
            return;
          }
          if (self->closing_) {
            self->done_ = true;
            return;
          }
          return self->Fail("read");
        }
        const auto data = self->buffer_.cdata();
        const auto* p = static_cast<const uint8_t*>(data.data());
        const size_t n = data.size();
        const int phase = self->stats_->current_phase();
        self->stats_->bytes_received[phase] += n;
        if (IsFrame(p, n)) {
          ++self->stats_->frames[phase];
        } else {
          self->OnMessage(std::string(reinterpret_cast<const char*>(p), n));
        }
        self->buffer_.consume(n);
        self->Read();
      });
}

void Bot::OnMessage(const std::string& bytes) {
  Result<v1::ServerMessage> msg = v1::DecodeServerMessage(
      std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!msg.ok()) {
    ++stats_->errors;
    return;
  }
  uint64_t answered = 0;
  if (std::holds_alternative<v1::Welcome>(*msg)) {
    if (joined_) return;
    joined_ = true;
    ++stats_->joined;
    auto callback = std::move(on_joined_);
    on_joined_ = nullptr;
    if (callback) callback(true);
    return;
  } else if (auto* ack = std::get_if<v1::Ack>(&*msg)) {
    ++stats_->acks;
    answered = ack->seq;
  } else if (auto* reject = std::get_if<v1::Reject>(&*msg)) {
    ++stats_->rejects;
    answered = reject->seq;
  } else if (auto* ping = std::get_if<v1::Ping>(&*msg)) {
    Send(v1::EncodePong(ping->nonce));
    return;
  } else if (std::holds_alternative<v1::Frame>(*msg)) {
    // A frame whose header IsFrame did not recognise.
    ++stats_->frames[stats_->current_phase()];
    return;
  } else {
    return;
  }
  if (answered < first_pending_seq_ ||
      answered - first_pending_seq_ >= pending_.size() ||
      pending_[answered - first_pending_seq_] == kAnswered) {
    ++stats_->errors;  // an answer to nothing, or a second one
    return;
  }
  auto& sent = pending_[answered - first_pending_seq_];
  stats_->rtt_us.push_back(static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - sent)
          .count()));
  sent = kAnswered;
  if (stats_->in_flight != nullptr) stats_->in_flight->Answered();
  while (!pending_.empty() && pending_.front() == kAnswered) {
    pending_.pop_front();
    ++first_pending_seq_;
  }
}

void Bot::Send(std::string message) {
  if (done_) return;
  outbox_.push_back(std::move(message));
  if (!writing_) Write();
}

void Bot::Write() {
  writing_ = true;
  ws_.async_write(asio::buffer(outbox_.front()),
                  [self = shared_from_this()](beast::error_code ec, size_t) {
                    self->writing_ = false;
                    if (ec) {
                      if (!self->closing_) self->Fail("write");
                      return;
                    }
                    self->outbox_.pop_front();
                    if (!self->outbox_.empty()) {
                      self->Write();
                    } else if (self->closing_ && !self->done_) {
                      self->Close();
                    }
                  });
}

void Bot::Close() {
  closing_ = true;
  timer_.cancel();
  if (done_ || writing_) return;  // Write() calls back when it is done
  writing_ = true;
  ws_.async_close(websocket::close_code::normal,
                  [self = shared_from_this()](beast::error_code) {
                    self->writing_ = false;
                    self->done_ = true;
                  });
}

void Bot::StartInputs(Clock::time_point until) {
  if (done_) return;
  inputs_until_ = until;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / config_.inputs_per_sec));
  std::uniform_int_distribution<int64_t> offset(0, interval.count());
  next_input_ = Clock::now() + Clock::duration(offset(rng_));
  ScheduleInput();
}

void Bot::ScheduleInput() {
  if (done_ || closing_ || next_input_ >= inputs_until_) return;
  timer_.expires_at(next_input_);
  timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;
    self->SendInput();
    self->next_input_ += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / self->config_.inputs_per_sec));
    self->ScheduleInput();
  });
}

void Bot::SendInput() {
  std::uniform_real_distribution<float> x(0, config_.arena_width);
  std::uniform_real_distribution<float> y(0, config_.arena_height);
  const std::vector<uint8_t> payload = nlohmann::json::to_msgpack(
      {{"move_to", {{"x", x(rng_)}, {"y", y(rng_)}}}});
  Send(v1::EncodeInput(
      next_seq_++,
      std::string_view(reinterpret_cast<const char*>(payload.data()),
                       payload.size())));
  pending_.push_back(Clock::now());
  ++stats_->inputs_sent;
  if (stats_->in_flight != nullptr) stats_->in_flight->Sent();
}

}  // namespace tessera::bench
