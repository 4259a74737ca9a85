// libFuzzer target: the guest's tessera_replicated() change lists
// (untrusted bytes) applied to a replication::Mirror. The input is a
// sequence of change lists, each as u32 LE length + bytes (a last one
// without enough bytes takes the rest), applied in turn; the whole input is
// also applied as one list. Besides memory safety it checks that a refused
// list changes nothing, that the mirror's order is consistent, and that a
// subscriber stream and the reference decoder reproduce the mirror's state
// after every accepted list.
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

void CheckOrder(const Mirror& m) {
  for (size_t i = 0; i < m.size(); ++i) {
    Check(m.entity_at(i).id == m.ids()[i]);
    Check(m.Find(m.ids()[i]) == &m.entity_at(i));
    if (i > 0) Check(m.ids()[i - 1] < m.ids()[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Config config;
  config.precision = 0.01;
  {
    Mirror whole(config);
    if (whole.Apply(input).ok()) CheckOrder(whole);
  }
  Mirror mirror(config);
  SubscriberStream stream;
  Decoder decoder;
  std::string payload;
  size_t pos = 0;
  uint64_t tick = 0;
  while (pos < size) {
    std::string_view list;
    if (size - pos >= 4) {
      const uint32_t len = uint32_t{data[pos]} | uint32_t{data[pos + 1]} << 8 |
                           uint32_t{data[pos + 2]} << 16 |
                           uint32_t{data[pos + 3]} << 24;
      pos += 4;
      list = input.substr(pos, len);
    } else {
      list = input.substr(pos);
    }
    pos += list.size();
    ++tick;
    const uint64_t version = mirror.version();
    const size_t count = mirror.size();
    tessera::Status s = mirror.Apply(list, tick);
    if (!s.ok()) {
      Check(!s.message().empty());
      Check(mirror.version() == version && mirror.size() == count);
      continue;
    }
    CheckOrder(mirror);
    stream.Encode(mirror, mirror.ids(), std::nullopt, tick, payload);
    Check(decoder.Apply(payload).ok());
    Check(testing::CompareWithMirror(decoder, mirror, mirror.ids()).empty());
  }
  return 0;
}
