#include "shard/input_log_format.h"

#include <type_traits>

#include "common/fnv.h"

namespace tessera::shard {
namespace {

enum RecordType : uint8_t { kRun = 1, kSave = 2, kTick = 3 };

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutBytes(std::string& out, std::string_view bytes) {
  PutVarint(out, bytes.size());
  out.append(bytes);
}

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// Reads a body; any read past the end or malformed value sets `bad`.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool bad() const { return bad_; }
  bool done() const { return pos_ == bytes_.size(); }

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) break;
      const auto b = static_cast<uint8_t>(bytes_[pos_++]);
      if (shift == 63 && b > 1) break;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    bad_ = true;
    return 0;
  }
  std::string Bytes() {
    const uint64_t n = Varint();
    if (bad_ || n > bytes_.size() - pos_) {
      bad_ = true;
      return {};
    }
    std::string out(bytes_.substr(pos_, n));
    pos_ += n;
    return out;
  }
  uint8_t Byte() {
    if (pos_ >= bytes_.size()) {
      bad_ = true;
      return 0;
    }
    return static_cast<uint8_t>(bytes_[pos_++]);
  }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    return v;
  }
  bool Flag() {
    const uint8_t b = Byte();
    if (b > 1) bad_ = true;
    return b == 1;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  bool bad_ = false;
};

void EncodeBody(std::string& out, const RunRecord& r) {
  out.push_back(static_cast<char>(kRun));
  PutVarint(out, r.run_id);
  PutBytes(out, r.kind);
  PutBytes(out, r.module_version);
  PutBytes(out, r.params);
  out.push_back(r.restored ? 1 : 0);
}

void EncodeBody(std::string& out, const SaveRecord& r) {
  out.push_back(static_cast<char>(kSave));
  PutVarint(out, r.tick);
  PutBytes(out, r.state);
}

void EncodeBody(std::string& out, const TickRecord& r) {
  out.push_back(static_cast<char>(kTick));
  PutVarint(out, r.tick);
  PutVarint(out, static_cast<uint64_t>(r.dt_us));
  PutVarint(out, static_cast<uint64_t>(r.fuel));
  out.push_back(
      static_cast<char>((r.snapshot_taken ? 1 : 0) | (r.messages ? 2 : 0)));
  PutU64(out, r.snapshot_hash);
  out.push_back(static_cast<char>(r.stop));
  PutBytes(out, r.message);
  PutVarint(out, r.inputs.size());
  for (const LoggedInput& in : r.inputs) {
    PutBytes(out, in.subscriber);
    PutVarint(out, in.seq);
    PutBytes(out, in.bytes);
    out.push_back(in.rewind ? 1 : 0);
    if (in.rewind) PutBytes(out, *in.rewind);
  }
}

std::optional<LogRecord> DecodeBody(std::string_view body) {
  Reader r(body);
  const uint8_t type = r.Byte();
  LogRecord record;
  if (type == kRun) {
    RunRecord run;
    run.run_id = r.Varint();
    run.kind = r.Bytes();
    run.module_version = r.Bytes();
    run.params = r.Bytes();
    run.restored = r.Flag();
    record = std::move(run);
  } else if (type == kSave) {
    SaveRecord save;
    save.tick = r.Varint();
    save.state = r.Bytes();
    record = std::move(save);
  } else if (type == kTick) {
    TickRecord tick;
    tick.tick = r.Varint();
    tick.dt_us = static_cast<int64_t>(r.Varint());
    tick.fuel = static_cast<int64_t>(r.Varint());
    const uint8_t flags = r.Byte();
    if (flags > 3) return std::nullopt;
    tick.snapshot_taken = (flags & 1) != 0;
    tick.messages = (flags & 2) != 0;
    tick.snapshot_hash = r.U64();
    tick.stop = r.Byte();
    if (tick.stop != 0 && tick.stop != 3 && tick.stop != 4) return std::nullopt;
    tick.message = r.Bytes();
    const uint64_t count = r.Varint();
    // Each input takes at least 4 bytes: no count beyond what is left.
    if (r.bad() || count > body.size() / 4) return std::nullopt;
    tick.inputs.reserve(count);
    for (uint64_t i = 0; i < count && !r.bad(); ++i) {
      LoggedInput in;
      in.subscriber = r.Bytes();
      in.seq = r.Varint();
      in.bytes = r.Bytes();
      if (r.Flag()) in.rewind = r.Bytes();
      tick.inputs.push_back(std::move(in));
    }
    record = std::move(tick);
  } else {
    return std::nullopt;
  }
  if (r.bad() || !r.done()) return std::nullopt;
  return record;
}

uint32_t Checksum(std::string_view length, std::string_view body) {
  Fnv1a64 h;
  h.Add(length);
  h.Add(body);
  return static_cast<uint32_t>(h.value());
}

uint32_t ReadU32(std::string_view bytes) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  }
  return v;
}

}  // namespace

uint64_t SnapshotHash(std::string_view snapshot) {
  Fnv1a64 h;
  h.Add(snapshot);
  return h.value();
}

std::string EncodeRecord(const LogRecord& record) {
  std::string body;
  std::visit([&](const auto& r) { EncodeBody(body, r); }, record);
  std::string out;
  out.reserve(body.size() + 8);
  PutU32(out, static_cast<uint32_t>(body.size()));
  PutU32(out, Checksum(std::string_view(out.data(), 4), body));
  out.append(body);
  return out;
}

ParsedSegment ParseSegment(std::string_view bytes) {
  ParsedSegment parsed;
  if (bytes.substr(0, kSegmentMagic.size()) != kSegmentMagic) {
    parsed.ignored_bytes = bytes.size();
    return parsed;
  }
  parsed.has_magic = true;
  size_t pos = kSegmentMagic.size();
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 8) break;
    const uint32_t length = ReadU32(bytes.substr(pos, 4));
    if (length == 0 || length > kMaxRecordBytes ||
        length > bytes.size() - pos - 8) {
      break;
    }
    const std::string_view body = bytes.substr(pos + 8, length);
    if (ReadU32(bytes.substr(pos + 4, 4)) !=
        Checksum(bytes.substr(pos, 4), body)) {
      break;
    }
    std::optional<LogRecord> record = DecodeBody(body);
    if (!record) break;
    parsed.records.push_back(std::move(*record));
    pos += 8 + length;
  }
  parsed.ignored_bytes = bytes.size() - pos;
  return parsed;
}

}  // namespace tessera::shard
