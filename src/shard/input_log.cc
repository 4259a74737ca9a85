#include "shard/input_log.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace tessera::shard {
namespace {

constexpr uint64_t kMinSegmentBytes = uint64_t{64} << 10;

// "000000000042.log" -> 42; nullopt for any other name.
std::optional<uint64_t> SegmentNumber(const std::string& name) {
  if (name.size() != 16 || name.substr(12) != ".log") return std::nullopt;
  uint64_t n = 0;
  for (size_t i = 0; i < 12; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return n;
}

std::string SegmentName(uint64_t n) {
  char name[32];
  std::snprintf(name, sizeof name, "%012llu.log",
                static_cast<unsigned long long>(n));
  return name;
}

}  // namespace

InputLog::InputLog(std::unique_ptr<LogFiles> files, InputLogOptions options)
    : files_(std::move(files)),
      options_(options),
      segment_bytes_(std::max(kMinSegmentBytes, options.segment_bytes != 0
                                                    ? options.segment_bytes
                                                    : options.ring_bytes / 8)) {
}

Result<std::unique_ptr<InputLog>> InputLog::Open(
    std::unique_ptr<LogFiles> files, InputLogOptions options) {
  std::unique_ptr<InputLog> log(new InputLog(std::move(files), options));
  Result<std::vector<std::string>> names = log->files_->List();
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    std::optional<uint64_t> n = SegmentNumber(name);
    if (!n) continue;
    Result<uint64_t> size = log->files_->Size(name);
    if (!size.ok()) return size.status();
    log->segments_.emplace_back(name, *size);
    log->total_bytes_ += *size;
    log->next_sequence_ = std::max(log->next_sequence_, *n + 1);
  }
  return log;
}

Status InputLog::Write(const std::string& bytes) {
  TESSERA_RETURN_IF_ERROR(files_->Append(current_, bytes));
  current_bytes_ += bytes.size();
  total_bytes_ += bytes.size();
  bytes_written_ += bytes.size();
  segments_.back().second = current_bytes_;
  return Status::Ok();
}

Status InputLog::StartSegment() {
  current_ = SegmentName(next_sequence_++);
  current_bytes_ = 0;
  segments_.emplace_back(current_, 0);
  TESSERA_RETURN_IF_ERROR(Write(std::string(kSegmentMagic)));
  TESSERA_RETURN_IF_ERROR(Write(EncodeRecord(*run_)));
  return Trim();
}

Status InputLog::Trim() {
  while (segments_.size() > 1 && total_bytes_ > options_.ring_bytes) {
    TESSERA_RETURN_IF_ERROR(files_->Remove(segments_.front().first));
    total_bytes_ -= segments_.front().second;
    segments_.erase(segments_.begin());
  }
  return Status::Ok();
}

Status InputLog::BeginRun(const RunRecord& run, const SaveRecord* initial) {
  run_ = run;
  TESSERA_RETURN_IF_ERROR(StartSegment());
  if (initial != nullptr)
    TESSERA_RETURN_IF_ERROR(Write(EncodeRecord(*initial)));
  return Status::Ok();
}

Status InputLog::Append(const LogRecord& record) {
  if (!run_) {
    return Status(StatusCode::kFailedPrecondition, "no run begun in the log");
  }
  std::string bytes = EncodeRecord(record);
  if (bytes.size() - 8 > kMaxRecordBytes) {
    return InvalidArgument("a log record of " + std::to_string(bytes.size()) +
                           " bytes is over the limit");
  }
  const bool save = std::holds_alternative<SaveRecord>(record);
  if ((save && current_bytes_ >= segment_bytes_) ||
      current_bytes_ >= 2 * segment_bytes_) {
    TESSERA_RETURN_IF_ERROR(StartSegment());
  }
  return Write(bytes);
}

Status InputLog::Sync() {
  if (current_.empty()) return Status::Ok();
  return files_->Sync(current_);
}

Status InputLog::Clear() {
  for (const auto& [name, size] : segments_) {
    TESSERA_RETURN_IF_ERROR(files_->Remove(name));
  }
  segments_.clear();
  total_bytes_ = 0;
  current_.clear();
  current_bytes_ = 0;
  run_.reset();
  return Status::Ok();
}

std::string InputLogDirName(std::string_view shard_id) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string name;
  for (unsigned char c : shard_id) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '-' || c == '_') {
      name.push_back(static_cast<char>(c));
    } else {
      name += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return name;
}

Result<ReadLog> ReadInputLog(LogFiles& files) {
  ReadLog log;
  Result<std::vector<std::string>> names = files.List();
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (!SegmentNumber(name)) {
      log.notes.push_back(name + ": not a log segment (skipped)");
      continue;
    }
    Result<std::string> bytes = files.Read(name);
    if (!bytes.ok()) return bytes.status();
    ParsedSegment segment = ParseSegment(*bytes);
    if (!segment.has_magic) {
      log.notes.push_back(name + ": not a log segment (skipped)");
      continue;
    }
    if (segment.ignored_bytes > 0) {
      log.notes.push_back(name + ": " + std::to_string(segment.ignored_bytes) +
                          " bytes at the end are torn or corrupt (ignored)");
    }
    if (segment.records.empty() ||
        !std::holds_alternative<RunRecord>(segment.records.front())) {
      log.notes.push_back(name + ": no run header (skipped)");
      continue;
    }
    // A run header starts a new run unless it repeats the current run's id
    // (a run's later segments begin with its header again). The writer puts
    // one only at a segment's start, but a header further in is read the
    // same way rather than dropped with the records after it.
    for (LogRecord& record : segment.records) {
      if (auto* run = std::get_if<RunRecord>(&record)) {
        if (log.runs.empty() || log.runs.back().run.run_id != run->run_id) {
          log.runs.push_back(LoggedRun{std::move(*run), {}, {}});
        }
      } else if (auto* save = std::get_if<SaveRecord>(&record)) {
        log.runs.back().saves.push_back(std::move(*save));
      } else if (auto* tick = std::get_if<TickRecord>(&record)) {
        log.runs.back().ticks.push_back(std::move(*tick));
      }
    }
  }
  return log;
}

}  // namespace tessera::shard
