// An in-process TCP proxy that delays traffic, to load a local server as
// if its clients were far away: every chunk of bytes read from one side is
// written to the other side `delay` +- a uniform `jitter` later, in order
// (a chunk never overtakes an earlier one of the same direction, so a
// jittered chunk may wait for its predecessor). Each direction of each
// connection is delayed independently; end-of-stream is passed on after
// the data.
//
// Threading: the acceptor runs on the first io_context, each connection on
// one of them (round robin); each io_context must be run by one thread.
// Start, Stop and endpoint may be called from any thread. Ownership:
// destroy the proxy only while its io_contexts do not run (after they were
// stopped or their threads joined) and before they are destroyed.
#ifndef TESSERA_LOADTEST_DELAY_PROXY_H_
#define TESSERA_LOADTEST_DELAY_PROXY_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "common/status.h"

namespace tessera::loadtest {

struct DelayProxyOptions {
  boost::asio::ip::tcp::endpoint target;
  std::chrono::microseconds delay{0};
  std::chrono::microseconds jitter{0};  // at most `delay`
  uint64_t seed = 1;
};

// The delay of one chunk: `delay` +- a uniform `jitter`, never negative.
// Pure but for `rng`.
std::chrono::microseconds DrawDelay(const DelayProxyOptions& options,
                                    std::mt19937_64& rng);

class DelayProxy {
 public:
  // Listens on 127.0.0.1 (any free port). Errors: kInvalidArgument for a
  // negative delay, kIo if it cannot listen.
  static Result<std::unique_ptr<DelayProxy>> Start(
      std::vector<boost::asio::io_context*> iocs, DelayProxyOptions options);
  ~DelayProxy();
  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  // Where clients connect instead of the target.
  boost::asio::ip::tcp::endpoint endpoint() const { return endpoint_; }
  uint64_t connections() const { return connections_.load(); }
  // Stops accepting; open connections go on until their ends close them.
  // The io_contexts must still run for it to take effect; idempotent.
  void StopAccepting();
  // StopAccepting, and drops every connection now.
  void Stop();

  class Link;

 private:
  DelayProxy(std::vector<boost::asio::io_context*> iocs,
             DelayProxyOptions options);
  void Accept();

  std::vector<boost::asio::io_context*> iocs_;
  const DelayProxyOptions options_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::ip::tcp::endpoint endpoint_;
  std::atomic<uint64_t> connections_{0};
  std::mutex mu_;
  bool accepting_ = true;                   // guarded by mu_
  std::vector<std::weak_ptr<Link>> links_;  // guarded by mu_
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_DELAY_PROXY_H_
