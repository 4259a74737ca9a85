// libFuzzer target: wire protocol v1 decoding of untrusted bytes (both
// directions) and the MessagePack reader under it. Besides memory safety it
// checks that whatever decodes re-encodes to a message that decodes to the
// same values, every field included (HELLO and WELCOME flags, INPUT's view
// tick, FRAME last_seq, a nil snapshot and the replication entities
// payload, TRANSFER's shard and ticket), that encoding is canonical
// (re-encoding the decoded message gives the same bytes), and that a
// decoded view tick is in its range.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "net/msgpack.h"
#include "net/protocol_v1.h"

namespace {

using namespace tessera::net::v1;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::span<const uint8_t> Span(const std::string& s) {
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()),
                                  s.size());
}

std::string EncodeClient(const ClientMessage& m) {
  std::string bytes;
  if (auto* hello = std::get_if<Hello>(&m)) {
    bytes = EncodeHello(hello->ticket, hello->version, hello->flags);
  } else if (auto* input = std::get_if<Input>(&m)) {
    bytes = EncodeInput(input->seq, input->payload, input->view_tick);
  } else if (auto* ping = std::get_if<Ping>(&m)) {
    bytes = EncodePing(ping->nonce);
  } else {
    bytes = EncodePong(std::get<Pong>(m).nonce);
  }
  return bytes;
}

void RoundTripClient(const ClientMessage& m) {
  const std::string bytes = EncodeClient(m);
  auto again = DecodeClientMessage(Span(bytes));
  Check(again.ok() && again->index() == m.index());
  Check(EncodeClient(*again) == bytes);
  if (auto* hello = std::get_if<Hello>(&m)) {
    const Hello& h = std::get<Hello>(*again);
    Check(h.version == hello->version && h.ticket == hello->ticket &&
          h.flags == hello->flags);
  } else if (auto* input = std::get_if<Input>(&m)) {
    // Finite, 0..2^53 (NaN fails the comparisons), never -0.0.
    Check(!input->view_tick ||
          (*input->view_tick >= 0 &&
           *input->view_tick <= static_cast<double>(kMaxViewTick) &&
           !std::signbit(*input->view_tick)));
    const Input& i = std::get<Input>(*again);
    Check(i.seq == input->seq && i.payload == input->payload &&
          i.view_tick == input->view_tick);
  } else if (auto* ping = std::get_if<Ping>(&m)) {
    Check(std::get<Ping>(*again).nonce == ping->nonce);
  } else {
    Check(std::get<Pong>(*again).nonce == std::get<Pong>(m).nonce);
  }
}

// The server's encoders cannot write a FRAME with a nil snapshot and no
// entities (only replication FRAMEs have a nil snapshot), so such a decoded
// FRAME has no encoding to compare with; nullopt then.
std::optional<std::string> EncodeServer(const ServerMessage& m) {
  std::string bytes;
  if (auto* w = std::get_if<Welcome>(&m)) {
    bytes = EncodeWelcome(w->shard_id, w->subscriber_id, w->tick_rate, w->codec,
                          w->tick, w->flags);
  } else if (auto* ack = std::get_if<Ack>(&m)) {
    bytes = EncodeAck(ack->seq);
  } else if (auto* reject = std::get_if<Reject>(&m)) {
    bytes = EncodeReject(reject->seq, reject->error);
  } else if (auto* frame = std::get_if<Frame>(&m)) {
    if (frame->entities) {
      // A replication FRAME: [19, tick, last_seq, snapshot | nil, entities].
      std::optional<size_t> snapshot_size;
      if (!frame->snapshot_nil) snapshot_size = frame->snapshot.size();
      bytes =
          EncodeViewFrameHeader(frame->tick, frame->last_seq, snapshot_size) +
          (frame->snapshot_nil ? "" : frame->snapshot) +
          EncodeBinHeader(frame->entities->size()) + *frame->entities;
    } else if (frame->snapshot_nil) {
      Check(frame->snapshot.empty());
      return std::nullopt;
    } else {
      bytes = EncodeFrameHeader(frame->tick, frame->last_seq,
                                frame->snapshot.size()) +
              frame->snapshot;
    }
  } else if (auto* transfer = std::get_if<Transfer>(&m)) {
    bytes = EncodeTransfer(transfer->shard_id, transfer->ticket);
  } else if (auto* ping = std::get_if<Ping>(&m)) {
    bytes = EncodePing(ping->nonce);
  } else {
    bytes = EncodePong(std::get<Pong>(m).nonce);
  }
  return bytes;
}

void RoundTripServer(const ServerMessage& m) {
  const std::optional<std::string> bytes = EncodeServer(m);
  if (!bytes) return;
  auto again = DecodeServerMessage(Span(*bytes));
  Check(again.ok() && again->index() == m.index());
  Check(EncodeServer(*again) == bytes);
  if (auto* w = std::get_if<Welcome>(&m)) {
    const Welcome& x = std::get<Welcome>(*again);
    Check(x.shard_id == w->shard_id && x.subscriber_id == w->subscriber_id &&
          x.tick_rate == w->tick_rate && x.codec == w->codec &&
          x.tick == w->tick && x.flags == w->flags);
  } else if (auto* ack = std::get_if<Ack>(&m)) {
    Check(std::get<Ack>(*again).seq == ack->seq);
  } else if (auto* reject = std::get_if<Reject>(&m)) {
    const Reject& x = std::get<Reject>(*again);
    Check(x.seq == reject->seq && x.error == reject->error);
  } else if (auto* frame = std::get_if<Frame>(&m)) {
    const Frame& x = std::get<Frame>(*again);
    Check(x.tick == frame->tick && x.last_seq == frame->last_seq &&
          x.snapshot == frame->snapshot &&
          x.snapshot_nil == frame->snapshot_nil &&
          x.entities == frame->entities);
    Check(!x.snapshot_nil || x.snapshot.empty());
  } else if (auto* transfer = std::get_if<Transfer>(&m)) {
    const Transfer& x = std::get<Transfer>(*again);
    Check(x.shard_id == transfer->shard_id && x.ticket == transfer->ticket);
  } else if (auto* ping = std::get_if<Ping>(&m)) {
    Check(std::get<Ping>(*again).nonce == ping->nonce);
  } else {
    Check(std::get<Pong>(*again).nonce == std::get<Pong>(m).nonce);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  auto client = DecodeClientMessage(bytes);
  if (client.ok()) RoundTripClient(*client);
  auto server = DecodeServerMessage(bytes);
  if (server.ok()) RoundTripServer(*server);

  tessera::net::msgpack::Reader reader(bytes);
  while (!reader.AtEnd() && reader.Skip().ok()) {
  }
  Check(reader.offset() <= size);
  return 0;
}
