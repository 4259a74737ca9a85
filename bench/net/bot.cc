#include "bench/net/bot.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "net/client/url.h"

namespace tessera::bench {

namespace client = net::client;
namespace v1 = net::v1;

Bot::Bot(boost::asio::io_context& ioc, BotConfig config, BotStats* stats)
    : ioc_(ioc),
      config_(std::move(config)),
      stats_(stats),
      rng_(config_.seed) {}

void Bot::Join(std::function<void(bool)> on_joined) {
  on_joined_ = std::move(on_joined);
  auto self = shared_from_this();
  client::V1Client::Events events;
  events.welcome = [self](const v1::Welcome&) {
    if (self->joined_ || self->done_) return;
    self->joined_ = true;
    ++self->stats_->joined;
    if (auto callback = std::exchange(self->on_joined_, nullptr)) {
      callback(true);
    }
  };
  // Frames are counted, not decoded.
  events.received = [self](bool frame, size_t bytes) {
    const int phase = self->stats_->current_phase();
    self->stats_->bytes_received[phase] += bytes;
    if (frame) ++self->stats_->frames[phase];
  };
  events.answered = [self](uint64_t, Clock::duration rtt,
                           const v1::Reject* reject) {
    self->OnAnswered(rtt, reject != nullptr);
  };
  events.input_sent = [self](uint64_t) {
    ++self->stats_->inputs_sent;
    if (self->stats_->in_flight != nullptr) self->stats_->in_flight->Sent();
  };
  events.error = [self](const std::string&) { ++self->stats_->errors; };
  events.closed = [self](int code, const std::string&) {
    self->OnClosed(code);
  };
  client_ = client::V1Client::Create(ioc_, nullptr, std::move(events));
  client::WsTarget target;
  target.endpoint = config_.endpoint;
  target.host = config_.endpoint.address().to_string();
  target.host_header = config_.host_header;
  target.path = "/shard/" + client::PercentEncode(config_.shard);
  client_->Connect(target, std::chrono::seconds(30), config_.ticket,
                   /*hello_flags=*/0, [self](Status status) {
                     if (!status.ok()) self->Fail();
                   });
}

void Bot::OnAnswered(Clock::duration rtt, bool refused) {
  ++(refused ? stats_->rejects : stats_->acks);
  stats_->rtt_us.push_back(static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(rtt).count()));
  if (stats_->in_flight != nullptr) stats_->in_flight->Answered();
}

void Bot::Fail() {
  if (done_) return;
  done_ = true;
  // Every unanswered input is no longer in flight.
  const uint64_t abandoned = client_->AbandonPending();
  for (uint64_t i = 0; stats_->in_flight != nullptr && i < abandoned; ++i) {
    stats_->in_flight->Answered();
  }
  ++stats_->errors;
  client_->Abort();
  if (!joined_ && on_joined_) {
    ++stats_->join_failures;
    std::exchange(on_joined_, nullptr)(false);
  }
}

void Bot::OnClosed(int code) {
  if (code != client::kClosedAbnormally) {  // the server's close frame
    if (!closing_) ++stats_->server_closes[code];
    if (!joined_) return Fail();  // closed before WELCOME
    done_ = true;
    return;
  }
  if (closing_) {
    done_ = true;
    return;
  }
  Fail();
}

void Bot::Close() {
  closing_ = true;
  if (done_) return;
  client_->Close();
}

void Bot::StartInputs(Clock::time_point until) {
  if (done_) return;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / config_.inputs_per_sec));
  std::uniform_int_distribution<int64_t> offset(0, interval.count());
  client_->SendInputsAtRate(config_.inputs_per_sec, until,
                            Clock::duration(offset(rng_)),
                            [self = shared_from_this()] {
                              return std::optional<client::V1Client::Outgoing>(
                                  {self->NextMove(), std::nullopt});
                            });
}

std::string Bot::NextMove() {
  std::uniform_real_distribution<float> x(0, config_.arena_width);
  std::uniform_real_distribution<float> y(0, config_.arena_height);
  const std::vector<uint8_t> payload = nlohmann::json::to_msgpack(
      {{"move_to", {{"x", x(rng_)}, {"y", y(rng_)}}}});
  return std::string(payload.begin(), payload.end());
}

}  // namespace tessera::bench
