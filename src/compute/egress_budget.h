// A module's egress budget: at most `msgs_per_min` notifications and
// `bytes_per_min` payload bytes in any calendar minute (unix time). Pure;
// time passed in; not thread-safe.
#ifndef TESSERA_COMPUTE_EGRESS_BUDGET_H_
#define TESSERA_COMPUTE_EGRESS_BUDGET_H_

#include <cstdint>
#include <string>

namespace tessera::compute {

class EgressBudget {
 public:
  EgressBudget(int64_t msgs_per_min, int64_t bytes_per_min);
  void SetLimits(int64_t msgs_per_min, int64_t bytes_per_min);
  // Charges one message of `bytes` at `now_ms` when both budgets allow it;
  // otherwise charges nothing, returns false and sets `why` ("egress budget:
  // 600 messages per minute used; next minute starts in 12 s").
  bool Charge(int64_t now_ms, int64_t bytes, std::string* why);
  int64_t msgs_this_minute() const { return msgs_; }
  int64_t bytes_this_minute() const { return bytes_; }

 private:
  void Roll(int64_t now_ms);
  int64_t msgs_per_min_, bytes_per_min_;
  int64_t minute_ms_ = -1;
  int64_t msgs_ = 0, bytes_ = 0;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_EGRESS_BUDGET_H_
