#include "net/net_metrics.h"

#include <string>

namespace tessera::net {

NetMetrics::NetMetrics(Metrics& r)
    : registry(r),
      connections(
          r.GetGauge("tessera_connections", "Open WebSocket connections.")),
      messages_in(r.GetCounter("tessera_ws_messages_in_total",
                               "WebSocket messages received.")),
      messages_out(r.GetCounter("tessera_ws_messages_out_total",
                                "WebSocket messages sent.")),
      bytes_in(r.GetCounter("tessera_ws_bytes_in_total",
                            "WebSocket message payload bytes received.")),
      bytes_out(r.GetCounter("tessera_ws_bytes_out_total",
                             "WebSocket message payload bytes sent.")),
      inputs_submitted(
          r.GetCounter("tessera_inputs_submitted_total",
                       "Inputs from connections queued to their shard.")),
      inputs_accepted(r.GetCounter("tessera_inputs_accepted_total",
                                   "Inputs the shards applied and accepted.")),
      inputs_refused_module(r.GetCounter("tessera_inputs_refused_total",
                                         "Inputs refused, by reason.",
                                         {{"reason", "module"}})),
      inputs_refused_rate(r.GetCounter("tessera_inputs_refused_total",
                                       "Inputs refused, by reason.",
                                       {{"reason", "rate_limited"}})),
      inputs_refused_queue(r.GetCounter("tessera_inputs_refused_total",
                                        "Inputs refused, by reason.",
                                        {{"reason", "not_queued"}})),
      frames_superseded(r.GetCounter(
          "tessera_ws_frames_superseded_total",
          "Snapshot frames a slow connection skipped: a newer one replaced "
          "them before they were written.")),
      baselines_resent(r.GetCounter(
          "tessera_ws_baselines_resent_total",
          "Slow connections whose queued replication frames were dropped "
          "for a new baseline.")),
      http_requests(r.GetCounter("tessera_http_requests_total",
                                 "Plain HTTP requests and upgrades read.")),
      connection_rtt(r.GetHistogram(
          "tessera_connection_rtt_seconds",
          "Round trips of the WebSocket pings the server sends each "
          "connection.",
          {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2})) {}

void NetMetrics::CountClose(int code) {
  registry
      .GetCounter("tessera_ws_closes_total",
                  "WebSocket connections closed by the server, by code.",
                  {{"code", std::to_string(code)}})
      ->Add();
}

}  // namespace tessera::net
