// A shard's input log (docs/record-replay.md): for a kind with
// "recordInputs", every tick's inputs and dt, its fuel and snapshot hash,
// and periodic saves, appended to a bounded ring of segment files
// (input_log_format.h for the bytes, input_log_files.h for the files).
//
// Segments are named by a 12-digit sequence number ("000000000007.log").
// Each begins with the magic and its run's RunRecord, so every segment
// can be read on its own. A new run (BeginRun) starts a new segment; a
// segment over segment_bytes is closed at the next save (the new one then
// begins with that save, a replay's starting point), or at any tick once
// it is twice that. After a new segment starts, the oldest are removed
// while the ring holds more than ring_bytes (the newest always stays).
//
// Durability: Append writes (the OS has the bytes: a crash of the process
// loses nothing); Sync makes them durable (a crash of the machine loses
// nothing synced). A torn tail is skipped on read.
//
// Threading: one thread at a time (the shard's worker).
#ifndef TESSERA_SHARD_INPUT_LOG_H_
#define TESSERA_SHARD_INPUT_LOG_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "shard/input_log_files.h"
#include "shard/input_log_format.h"

namespace tessera::shard {

struct InputLogOptions {
  uint64_t ring_bytes = uint64_t{64} << 20;
  // 0: ring_bytes / 8, at least 64 KiB.
  uint64_t segment_bytes = 0;
};

class InputLog {
 public:
  // Continues the numbering of the segments already in `files`.
  static Result<std::unique_ptr<InputLog>> Open(std::unique_ptr<LogFiles> files,
                                                InputLogOptions options = {});

  // Starts a run in a new segment, with its starting state (a restored
  // run's, at tick 0) if any.
  Status BeginRun(const RunRecord& run, const SaveRecord* initial = nullptr);
  // A save or a tick of the current run (BeginRun first).
  Status Append(const LogRecord& record);
  Status Sync();
  // Removes every segment (a shard that stopped cleanly).
  Status Clear();

  uint64_t total_bytes() const { return total_bytes_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  InputLog(std::unique_ptr<LogFiles> files, InputLogOptions options);
  Status StartSegment();
  Status Write(const std::string& bytes);
  Status Trim();

  std::unique_ptr<LogFiles> files_;
  const InputLogOptions options_;
  const uint64_t segment_bytes_;
  uint64_t next_sequence_ = 0;
  std::optional<RunRecord> run_;
  std::string current_;  // the segment appended to
  uint64_t current_bytes_ = 0;
  uint64_t total_bytes_ = 0;                                // every segment's
  uint64_t bytes_written_ = 0;                              // by this object
  std::vector<std::pair<std::string, uint64_t>> segments_;  // oldest first
};

// The directory name of `shard_id`'s log under the host's input log
// directory: its letters, digits, '-' and '_' as they are, every other byte
// as %XX (so no id names "." or ".." or leaves the directory).
std::string InputLogDirName(std::string_view shard_id);

// What a log holds, grouped by run (oldest first): each run's saves and
// ticks in order.
struct LoggedRun {
  RunRecord run;
  std::vector<SaveRecord> saves;
  std::vector<TickRecord> ticks;
};

struct ReadLog {
  std::vector<LoggedRun> runs;
  // Readable lines about what was skipped (torn tails, foreign files).
  std::vector<std::string> notes;
};

// Reads every segment of `files`. Errors: the files' (kIo).
Result<ReadLog> ReadInputLog(LogFiles& files);

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_INPUT_LOG_H_
