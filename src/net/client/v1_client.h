// An asynchronous protocol-v1 client (docs/protocol.md) on one
// io_context, for the load-test and benchmark bots: connects (ws:// or
// wss://), sends HELLO with its flags, reports the WELCOME, numbers and
// times the inputs until their ACK, REJECT or (with frame acks) the FRAME
// that answers them, answers PINGs, reports a TRANSFER (the caller follows
// it with a new client), and can send inputs at a fixed rate.
// FRAMEs are counted, not decoded (see v1_inputs.h), unless the `frame`
// event asks for them.
//
// Threading: every method must be called on the io_context's thread, and
// the events run there. Ownership: the client keeps itself alive while
// operations are pending; it drops its events once the connection ended.
#ifndef TESSERA_NET_CLIENT_V1_CLIENT_H_
#define TESSERA_NET_CLIENT_V1_CLIENT_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "net/client/v1_inputs.h"
#include "net/client/ws_client.h"
#include "net/protocol_v1.h"

namespace tessera::net::client {

class V1Client : public std::enable_shared_from_this<V1Client> {
 public:
  using SteadyClock = std::chrono::steady_clock;

  // What the client saw. Each may be null.
  struct Events {
    std::function<void(const v1::Welcome&)> welcome;
    // Every message received, before it is handled: a FRAME or not.
    std::function<void(bool frame, size_t bytes)> received;
    // An input was answered after `rtt`: by an ACK or a FRAME (`reject`
    // null) or by a REJECT.
    std::function<void(uint64_t seq, SteadyClock::duration rtt,
                       const v1::Reject* reject)>
        answered;
    // An input sent by SendInputsAtRate.
    std::function<void(uint64_t seq)> input_sent;
    // Every FRAME, decoded (only when set: decoding costs).
    std::function<void(const v1::Frame&)> frame;
    // TRANSFER: the player moved to `shard_id`; join there with `ticket`.
    // The server closes (4011 transferred) right after; `closed` follows.
    std::function<void(const v1::Transfer&)> transfer;
    // A message that does not decode, or an answer to no pending input.
    std::function<void(const std::string& what)> error;
    // The connection ended (code and reason as WsClient::ClosedFn).
    std::function<void(int code, const std::string& reason)> closed;
  };

  // `tls` null: ws://. The context must outlive the client.
  static std::shared_ptr<V1Client> Create(boost::asio::io_context& ioc,
                                          boost::asio::ssl::context* tls,
                                          Events events);

  // Connects within `timeout` (`done` gets WsClient::Connect's errors),
  // then sends HELLO with `ticket` and `hello_flags` and reads until the
  // connection ends.
  void Connect(const WsTarget& target, std::chrono::milliseconds timeout,
               std::string ticket, uint64_t hello_flags,
               std::function<void(Status)> done);
  // Sends one INPUT, stamped with `view_tick` (the tick drawn; see
  // v1::EncodeInput) if set; returns its seq.
  uint64_t SendInput(std::string_view payload,
                     std::optional<double> view_tick = std::nullopt);
  // One input of SendInputsAtRate.
  struct Outgoing {
    std::string payload;
    std::optional<double> view_tick;
  };
  // nullopt: nothing to send this time (the interval is skipped).
  using MakeInputFn = std::function<std::optional<Outgoing>()>;
  // From now on, sends `make_input()` as an input every 1/rate seconds
  // until `until` (or `max_inputs` were sent, when > 0), the first after
  // `first_after`. One that fell behind (a busy thread) does not catch up
  // in a burst.
  void SendInputsAtRate(double rate, SteadyClock::time_point until,
                        SteadyClock::duration first_after,
                        MakeInputFn make_input, uint64_t max_inputs = 0);
  // Stops sending inputs and starts the close handshake (1000) after what
  // is queued.
  void Close();
  // Stops sending and drops the connection without events.
  void Abort();
  // Forgets the unanswered inputs; returns how many there were.
  uint64_t AbandonPending() { return pending_.Abandon(); }

  bool welcomed() const { return welcomed_; }
  // The TRANSFER received, if any (it is the connection's last message).
  const std::optional<v1::Transfer>& transfer() const { return transfer_; }
  // The WELCOME said the server answers inputs with FRAMEs.
  bool frame_acks() const { return frame_acks_; }
  uint64_t pending() const { return pending_.count(); }
  bool ended() const { return ended_; }

  V1Client(boost::asio::io_context& ioc, boost::asio::ssl::context* tls,
           Events events);

 private:
  void OnMessage(const uint8_t* data, size_t size);
  void OnClosed(int code, const std::string& reason);
  void Answered(uint64_t seq, const v1::Reject* reject);
  // Frame acks: a FRAME's last_seq answers every pending input up to it.
  void AnswerUpTo(uint64_t last_seq);
  void Error(const std::string& what);
  void ScheduleInput();

  std::shared_ptr<WsClient> ws_;
  boost::asio::steady_timer timer_;
  Events events_;
  PendingInputs pending_;
  bool welcomed_ = false;
  bool frame_acks_ = false;
  std::optional<v1::Transfer> transfer_;
  bool ended_ = false;
  double rate_ = 0;
  uint64_t inputs_left_ = 0;  // with a limit; else UINT64_MAX
  SteadyClock::time_point inputs_until_;
  SteadyClock::time_point next_input_;
  MakeInputFn make_input_;
};

}  // namespace tessera::net::client

#endif  // TESSERA_NET_CLIENT_V1_CLIENT_H_
