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
                                 "Plain HTTP requests and upgrades read.")) {}

void NetMetrics::CountClose(int code) {
  registry
      .GetCounter("tessera_ws_closes_total",
                  "WebSocket connections closed by the server, by code.",
                  {{"code", std::to_string(code)}})
      ->Add();
}

}  // namespace tessera::net
