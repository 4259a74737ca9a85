// State shared by the server's sessions (internal to src/net): options,
// the hub, the shard host, metrics, and the set of live WebSocket sessions
// that Stop() closes. Owned by Server::Impl, which outlives every session.
//
// Threading: immutable after Start except the atomics and what `mu` guards;
// used from every io thread.
#ifndef TESSERA_NET_SERVER_CONTEXT_H_
#define TESSERA_NET_SERVER_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/metrics.h"
#include "net/http_types.h"
#include "net/hub.h"
#include "net/server.h"
#include "common/thread_annotations.h"

namespace tessera::shard {
class ShardHost;
}

namespace tessera::net {

// The network layer's metrics (names in docs: tessera_ws_*, tessera_inputs_*).
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
};

struct ServerContext {
  ServerContext(const ServerOptions& options, std::string ticket_secret,
                HttpHandler* http, Metrics& metrics, Hub& hub)
      : options(options),
        ticket_secret(std::move(ticket_secret)),
        http(http),
        metrics(metrics),
        hub(hub) {}

  int64_t UnixNow() const;
  // The stop code/reason once Stop() began, else false.
  bool Stopping(int* code, std::string* reason) const;
  void BeginStop(int code, std::string reason);

  // Live WebSocket sessions (joined or not), keyed by address.
  void AddSession(const HubSession* key, std::weak_ptr<HubSession> session);
  void RemoveSession(const HubSession* key);
  // Posts a close to every live session; returns how many.
  size_t CloseAllSessions(int code, const std::string& reason);
  size_t live_sessions() const { return live_sessions_.load(); }

  const ServerOptions& options;
  const std::string ticket_secret;
  HttpHandler* const http;           // may be null: 404 for every request
  shard::ShardHost* host = nullptr;  // set before Start
  NetMetrics metrics;
  Hub& hub;
  // Ids passed to ShardHost::SubmitInput as the seq, unique per server, so
  // each result finds the connection that sent it (client seqs are per
  // connection and may repeat across a subscriber's connections).
  std::atomic<uint64_t> next_input_id{1};

 private:
  mutable std::mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  int stop_code_ GUARDED_BY(mu_) = 0;
  std::string stop_reason_ GUARDED_BY(mu_);
  std::unordered_map<const HubSession*, std::weak_ptr<HubSession>> sessions_
      GUARDED_BY(mu_);
  std::atomic<size_t> live_sessions_{0};
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SERVER_CONTEXT_H_
