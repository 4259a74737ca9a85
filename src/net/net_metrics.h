// The network layer's metrics (names in docs: tessera_ws_*, tessera_inputs_*).
#ifndef TESSERA_NET_NET_METRICS_H_
#define TESSERA_NET_NET_METRICS_H_

#include "common/metrics.h"

namespace tessera::net {

struct NetMetrics {
  explicit NetMetrics(Metrics& registry);
  // Counts a close the server sent (or Beast sent for it, e.g. 1009).
  void CountClose(int code);

  Metrics& registry;
  Gauge* connections;
  Counter* messages_in;
  Counter* messages_out;
  Counter* bytes_in;
  Counter* bytes_out;
  Counter* inputs_submitted;
  Counter* inputs_accepted;
  Counter* inputs_refused_module;
  Counter* inputs_refused_rate;
  Counter* inputs_refused_queue;
  Counter* frames_superseded;
  Counter* baselines_resent;
  Counter* http_requests;
  // Round trips of the connections' WebSocket pings (every sample).
  Histogram* connection_rtt;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_NET_METRICS_H_
