#include "shard/talk_types.h"

namespace tessera::shard {

const char* TransferStepName(TransferStep step) {
  switch (step) {
    case TransferStep::kOut:
      return "out";
    case TransferStep::kIn:
      return "in";
    case TransferStep::kBack:
      return "back";
  }
  return "unknown";
}

const char* TransferErrorCode(TransferError error) {
  switch (error) {
    case TransferError::kNone:
      return "OK";
    case TransferError::kRefused:
      return "SHARD_TRANSFER_REFUSED";
    case TransferError::kNotFound:
      return "SHARD_NOT_FOUND";
    case TransferError::kNoPlayer:
      return "SHARD_TRANSFER_NO_PLAYER";
    case TransferError::kBusy:
      return "SHARD_TRANSFER_BUSY";
    case TransferError::kUnsupported:
      return "SHARD_TRANSFER_UNSUPPORTED";
    case TransferError::kInvalid:
      return "INVALID_ARGUMENT";
    case TransferError::kFailed:
      return "SHARD_TRANSFER_FAILED";
  }
  return "UNKNOWN";
}

const char* MessageRefusalName(MessageRefusal reason) {
  switch (reason) {
    case MessageRefusal::kTopic:
      return "topic";
    case MessageRefusal::kTooBig:
      return "too_big";
    case MessageRefusal::kRate:
      return "rate";
    case MessageRefusal::kNotFound:
      return "not_found";
    case MessageRefusal::kNoHandler:
      return "no_handler";
    case MessageRefusal::kInboxFull:
      return "inbox_full";
    case MessageRefusal::kStopped:
      return "stopped";
  }
  return "unknown";
}

}  // namespace tessera::shard
