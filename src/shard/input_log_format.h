// The bytes of a shard's input log (docs/record-replay.md): what the host
// writes for a kind with "recordInputs" and `tessera replay` reads. Pure:
// no files, no clock.
//
// A segment file is the 8-byte magic kSegmentMagic followed by records:
//
//   [u32 body length, LE][u32 checksum, LE][body]
//
// where the checksum is the low 32 bits of FNV-1a 64 over the length's four
// bytes and the body, and the body is a type byte and its fields (unsigned
// LEB128 varints; strings as a varint length and the bytes):
//
//   kRun  (1): run_id, kind, module_version, params, restored (0/1)
//   kSave (2): tick, state
//   kTick (3): tick, dt_us, fuel, flags (bit 0 snapshot taken, bit 1
//              messages delivered in the tick), snapshot_hash (u64 LE),
//              stop (0 none, 3 finished, 4 failed), message, input count,
//              then per input: subscriber, seq, bytes, has_rewind, [rewind]
//
// A record cut short (a crash in the middle of a write) or whose checksum
// does not match ends the segment's readable part: ParseSegment returns the
// records before it and says how many bytes it ignored.
#ifndef TESSERA_SHARD_INPUT_LOG_FORMAT_H_
#define TESSERA_SHARD_INPUT_LOG_FORMAT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tessera::shard {

inline constexpr std::string_view kSegmentMagic("TSRILOG1", 8);
// Bodies above this are refused when written and when read.
inline constexpr uint32_t kMaxRecordBytes = uint32_t{128} << 20;

// A run of the shard: one Create or Restore.
struct RunRecord {
  uint64_t run_id = 0;
  std::string kind;
  std::string module_version;
  std::string params;
  bool restored = false;  // the run began from saved state (a kSave at 0)
};

// The module's saved state after `tick` ticks of the run.
struct SaveRecord {
  uint64_t tick = 0;
  std::string state;
};

struct LoggedInput {
  std::string subscriber;
  uint64_t seq = 0;
  std::string bytes;
  std::optional<std::string> rewind;  // lag compensation's encoded Rewind
};

// One tick that ran: the inputs applied before it, its dt, and what the
// sandbox reported (the fuel of the inputs, the tick and the snapshot).
struct TickRecord {
  uint64_t tick = 0;  // the run's tick count after it (the first is 1)
  int64_t dt_us = 0;
  int64_t fuel = 0;
  bool snapshot_taken = false;
  bool messages = false;       // shard messages went to on_messages in the tick
  uint64_t snapshot_hash = 0;  // SnapshotHash of the snapshot, if taken
  uint8_t stop = 0;            // StopReason: 0, 3 (finished), 4 (failed)
  std::string message;         // the finish reason or the failure line
  std::vector<LoggedInput> inputs;
};

using LogRecord = std::variant<RunRecord, SaveRecord, TickRecord>;

// FNV-1a 64 of the snapshot bytes.
uint64_t SnapshotHash(std::string_view snapshot);

// One record, framed (length, checksum, body).
std::string EncodeRecord(const LogRecord& record);

struct ParsedSegment {
  std::vector<LogRecord> records;
  bool has_magic = false;    // false: not a segment (nothing else read)
  size_t ignored_bytes = 0;  // a torn or corrupt tail
};

// Reads a segment's bytes; never fails (see the file comment).
ParsedSegment ParseSegment(std::string_view bytes);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_INPUT_LOG_FORMAT_H_
