// libFuzzer target: a shard's input log (src/shard/input_log_format.h), the
// bytes `tessera replay` and a restarting server read back from disk after
// any crash. Besides memory safety it checks:
//  - ParseSegment accounts for every byte (records read + ignored tail);
//  - each record it reads re-encodes to exactly the bytes it was read from,
//    so nothing is dropped or reinterpreted;
//  - ReadInputLog over the same bytes as one segment file never fails and
//    groups what ParseSegment read.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shard/input_log.h"
#include "shard/input_log_files.h"
#include "shard/input_log_format.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "input_log_fuzz: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::shard;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ParsedSegment parsed = ParseSegment(bytes);
  if (!parsed.has_magic) {
    Check(parsed.records.empty() && parsed.ignored_bytes == size,
          "a file without the magic gave records");
    return 0;
  }
  std::string again(kSegmentMagic);
  for (const LogRecord& record : parsed.records) again += EncodeRecord(record);
  Check(again.size() + parsed.ignored_bytes == size,
        "records and tail do not add up to the input");
  Check(bytes.substr(0, again.size()) == again,
        "a record does not re-encode to its bytes");

  MemoryLogFiles files;
  (void)files.Append("000000000000.log", bytes);
  auto log = ReadInputLog(files);
  Check(log.ok(), "ReadInputLog failed on memory files");
  size_t grouped = 0;
  for (const LoggedRun& run : log->runs) {
    grouped += 1 + run.saves.size() + run.ticks.size();
  }
  // Every record lands in a run, but a header repeating the run before it
  // (same id) continues that run rather than adding one.
  size_t expected = 0;
  const uint64_t* last_run_id = nullptr;
  for (const LogRecord& record : parsed.records) {
    if (const auto* run = std::get_if<RunRecord>(&record)) {
      if (last_run_id == nullptr || *last_run_id != run->run_id) ++expected;
      last_run_id = &run->run_id;
    } else {
      ++expected;
    }
  }
  const bool headed = !parsed.records.empty() &&
                      std::holds_alternative<RunRecord>(parsed.records[0]);
  Check(grouped == (headed ? expected : 0),
        "ReadInputLog lost or invented records");
  return 0;
}
