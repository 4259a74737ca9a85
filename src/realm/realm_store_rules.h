// The rule every RealmStore backend applies to an append before writing
// anything (realm_store.h, Append), with the same messages in each.
// Header-only, pure.
#ifndef TESSERA_REALM_REALM_STORE_RULES_H_
#define TESSERA_REALM_REALM_STORE_RULES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "realm/realm_store.h"

namespace tessera::realm {

// Whether `entry` continues a realm whose head is (`head_epoch`,
// `head_version`): the same epoch, and commits numbered from head + 1 on
// without a gap. `realm` names it in the message ("realm 'doc'").
// Errors: kFailedPrecondition saying what was expected and offered.
inline Status CheckAppendFits(const RealmAppend& entry, std::string_view realm,
                              int64_t head_epoch, int64_t head_version) {
  const int64_t expected = head_version + 1;
  if (entry.epoch != head_epoch) {
    return Status(
        StatusCode::kFailedPrecondition,
        "append to " + std::string(realm) + ": epoch " +
            std::to_string(entry.epoch) + " is not the current epoch " +
            std::to_string(head_epoch) + " (expected version " +
            std::to_string(expected) + " of epoch " +
            std::to_string(head_epoch) + ", offered " +
            (entry.commits.empty() ? std::string("none")
                                   : std::to_string(entry.commits[0].version)) +
            ")");
  }
  for (size_t i = 0; i < entry.commits.size(); ++i) {
    const int64_t want = expected + static_cast<int64_t>(i);
    if (entry.commits[i].version != want) {
      return Status(
          StatusCode::kFailedPrecondition,
          "append to " + std::string(realm) + " (epoch " +
              std::to_string(head_epoch) + "): expected version " +
              std::to_string(want) + ", offered " +
              std::to_string(entry.commits[i].version) +
              (i == 0 ? " (the head is " + std::to_string(head_version) + ")"
                      : " (commit " + std::to_string(i) + " of the entry)"));
    }
  }
  return Status::Ok();
}

}  // namespace tessera::realm

#endif  // TESSERA_REALM_REALM_STORE_RULES_H_
