// Test support: a plain reference model of replication::SentHistory. Per
// subscriber it keeps every tick sent as a full map of what the stream
// held, and draws with the client's rules (clients/ts EntityTimeline.render)
// and the clamping written out directly. Slow and simple: the tests and the
// history benchmark compare SentHistory with it.
#ifndef TESSERA_REPLICATION_TESTING_SENT_MODEL_H_
#define TESSERA_REPLICATION_TESTING_SENT_MODEL_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "replication/sent_history.h"
#include "replication/subscriber_stream.h"

namespace tessera::replication::testing {

class SentModel {
 public:
  SentModel(uint32_t history_ticks, double precision)
      : history_(history_ticks), precision_(precision) {}

  // As SentHistory::RecordWorld: drops what is older than the ring.
  void World(uint64_t tick);
  // As SentHistory::RecordSent (a BASELINE starts again).
  void Sent(const std::string& subscriber, const SubscriberStream& stream,
            uint64_t tick);
  void Forget(const std::string& subscriber) { subscribers_.erase(subscriber); }
  std::optional<DrawnPicture> Draw(const std::string& subscriber, double view,
                                   std::optional<double> max_back) const;

 private:
  struct Held {
    uint64_t incarnation;
    std::array<int64_t, 3> q;
  };
  struct SentTick {
    uint64_t tick;
    std::map<uint64_t, Held> held;
  };
  uint32_t history_;
  double precision_;
  std::map<std::string, std::deque<SentTick>> subscribers_;
};

// "id:(x,y,z)" per drawn entity with %.17g (exact), "(nothing)" for none.
std::string PictureText(const std::optional<DrawnPicture>& p);

}  // namespace tessera::replication::testing

#endif  // TESSERA_REPLICATION_TESTING_SENT_MODEL_H_
