// libFuzzer target: `entities` payloads (untrusted bytes on the client
// side) through the reference replication::Decoder, and the encoder/decoder
// round trip.
//
// 1. The input is a sequence of payloads, each as u32 LE length + bytes (a
//    last one without enough bytes takes the rest), applied in turn to one
//    decoder; the whole input is also applied as one payload. Whatever it
//    accepts must leave a consistent state.
// 2. The input also parameterises a random world (seed, precision, budget,
//    ids, visibility): a mirror, a subscriber stream and a decoder run for
//    a few ticks, and the decoder must hold exactly what the stream says
//    the client holds (and the mirror's state when there is no budget).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "replication/decoder.h"
#include "replication/mirror.h"
#include "replication/subscriber_stream.h"
#include "replication/testing/guest_store.h"

namespace {

using namespace tessera::replication;

void Check(bool ok) {
  if (!ok) std::abort();
}

void CheckState(const Decoder& d, const tessera::Status& s) {
  if (!s.ok() && !Decoder::Ignored(s)) {
    Check(!d.has_baseline() && d.entities().empty());
    return;
  }
  const int64_t max_q = int64_t{1} << 52;
  for (size_t i = 0; i < d.entities().size(); ++i) {
    const DecodedEntity& e = d.entities()[i];
    if (i > 0) Check(d.entities()[i - 1].id < e.id);
    Check(e.id < (uint64_t{1} << 53));
    for (int64_t q : e.q) Check(q >= -max_q && q <= max_q);
    for (size_t j = 1; j < e.components.size(); ++j) {
      Check(e.components[j - 1].id < e.components[j].id);
    }
  }
  for (size_t i = 1; i < d.entered().size(); ++i) {
    Check(d.entered()[i - 1] < d.entered()[i]);
  }
}

void Decode(std::string_view input) {
  {
    Decoder whole;
    CheckState(whole, whole.Apply(input));
  }
  Decoder d;
  size_t pos = 0;
  while (pos < input.size()) {
    std::string_view payload;
    if (input.size() - pos >= 4) {
      const auto* p = reinterpret_cast<const uint8_t*>(input.data() + pos);
      const uint32_t len = uint32_t{p[0]} | uint32_t{p[1]} << 8 |
                           uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
      pos += 4;
      payload = input.substr(pos, len);
    } else {
      payload = input.substr(pos);
    }
    pos += payload.size();
    CheckState(d, d.Apply(payload));
  }
}

void RoundTrip(std::string_view input) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (char c : input)
    hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  auto byte = [&](size_t i) -> uint8_t {
    return i < input.size() ? static_cast<uint8_t>(input[i]) : 0;
  };
  testing::Rng rng(hash);
  Config config;
  const double precisions[] = {0.01, 0.05, 0.5, 1e-6};
  const uint32_t budgets[] = {0, 0, 24, 120, 900};
  config.precision = precisions[byte(0) % 4];
  config.max_bytes_per_tick = budgets[byte(1) % 5];
  config.y_up = (byte(2) & 1) != 0;
  testing::RandomOptions options;
  options.max_id = 1 + byte(3) % 64 * (byte(4) % 2 == 0 ? 1 : 1000);
  options.events = 1 + byte(5) % 8;
  options.step = 0.01 + byte(6) % 32;
  const double keep = byte(7) % 2 == 0 ? 1.0 : 0.3 + (byte(7) % 7) * 0.1;
  Mirror mirror(config);
  testing::GuestStore store;
  SubscriberStream stream;
  Decoder decoder;
  std::string payload;
  for (uint64_t tick = 1; tick <= 6; ++tick) {
    testing::RandomTick(store, rng, options);
    Check(mirror.Apply(store.TakeChanges(), tick).ok());
    if (byte(8 + tick) == 0xff) stream.Reset();
    const std::vector<uint64_t> visible =
        keep >= 1
            ? std::vector<uint64_t>(mirror.ids().begin(), mirror.ids().end())
            : testing::RandomVisible(mirror, rng, keep);
    const Focus focus{(rng.Uniform() * 2 - 1) * 100,
                      (rng.Uniform() * 2 - 1) * 100, 1.0 + byte(21) % 50};
    stream.Encode(mirror, visible, focus, tick, payload);
    Check(stream.last().bytes == payload.size());
    Check(decoder.Apply(payload).ok());
    Check(testing::CompareWithHeld(decoder, stream.held(), mirror).empty());
    if (config.max_bytes_per_tick == 0) {
      Check(testing::CompareWithMirror(decoder, mirror, visible).empty());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Decode(input);
  RoundTrip(input);
  return 0;
}
