#include "compute/compute_types.h"

namespace tessera::compute {

const char* LanguageName(Language language) {
  return language == Language::kRust ? "rust" : "cpp";
}

const char* CompileStatusName(CompileStatus status) {
  switch (status) {
    case CompileStatus::kPending:
      return "pending";
    case CompileStatus::kCompiling:
      return "compiling";
    case CompileStatus::kSucceeded:
      return "succeeded";
    case CompileStatus::kFailed:
      return "failed";
  }
  return "pending";
}

const char* CircuitStateName(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

const char* TriggerTypeName(TriggerType type) {
  switch (type) {
    case TriggerType::kTick:
      return "tick";
    case TriggerType::kEvent:
      return "event";
    case TriggerType::kInvoke:
      return "invoke";
  }
  return "tick";
}

const char* TriggerSourceName(TriggerSource source) {
  switch (source) {
    case TriggerSource::kInit:
      return "init";
    case TriggerSource::kTick:
      return "tick";
    case TriggerSource::kEvent:
      return "event";
    case TriggerSource::kInvoke:
      return "invoke";
    case TriggerSource::kProbe:
      return "probe";
  }
  return "init";
}

}  // namespace tessera::compute
