// The io threads the bots run on (the load test's driver and bench/net):
// one io_context per thread, kept running until released, with a bounded
// wait for the threads to finish.
//
// Threading: the owner's thread calls every method; the io_contexts are
// run by the threads Start launches.
#ifndef TESSERA_LOADTEST_IO_THREADS_H_
#define TESSERA_LOADTEST_IO_THREADS_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::loadtest {

// Counts down from n; Wait returns when it reaches zero or times out.
// Thread-safe.
class Countdown {
 public:
  explicit Countdown(int n) : left_(n) {}
  void Done();
  bool Wait(std::chrono::steady_clock::duration timeout);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int left_;
};

class IoThreads {
 public:
  // `threads` io_contexts with work (so they run until Release).
  explicit IoThreads(int threads);
  // Stops what still runs and joins.
  ~IoThreads();
  IoThreads(const IoThreads&) = delete;
  IoThreads& operator=(const IoThreads&) = delete;

  int size() const { return static_cast<int>(iocs_.size()); }
  boost::asio::io_context& ioc(int i) { return *iocs_[i]; }
  std::vector<boost::asio::io_context*> pointers() const;

  // Launches one thread per io_context.
  void Start();
  // Lets each thread end once its io_context has nothing left to do.
  void Release() { guards_.clear(); }
  // True once every thread ended; false after `timeout`.
  bool WaitDone(std::chrono::steady_clock::duration timeout) {
    return done_.Wait(timeout);
  }
  // Stops every io_context (what is pending is abandoned).
  void Stop();
  // Joins the threads (after WaitDone or Stop).
  void Join();

 private:
  using Guard =
      boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> iocs_;
  std::vector<Guard> guards_;
  std::vector<std::thread> threads_;
  Countdown done_;
};

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_IO_THREADS_H_
