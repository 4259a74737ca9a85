#include "loadtest/io_threads.h"

namespace tessera::loadtest {

namespace asio = boost::asio;

void Countdown::Done() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--left_ == 0) cv_.notify_all();
}

bool Countdown::Wait(std::chrono::steady_clock::duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return left_ <= 0; });
}

IoThreads::IoThreads(int threads) : done_(threads) {
  for (int t = 0; t < threads; ++t) {
    iocs_.push_back(std::make_unique<asio::io_context>(1));
    guards_.push_back(asio::make_work_guard(*iocs_.back()));
  }
}

IoThreads::~IoThreads() {
  Release();
  Stop();
  Join();
}

std::vector<asio::io_context*> IoThreads::pointers() const {
  std::vector<asio::io_context*> out;
  for (const auto& ioc : iocs_) out.push_back(ioc.get());
  return out;
}

void IoThreads::Start() {
  for (auto& ioc : iocs_) {
    threads_.emplace_back([ioc = ioc.get(), this] {
      ioc->run();
      done_.Done();
    });
  }
}

void IoThreads::Stop() {
  for (auto& ioc : iocs_) ioc->stop();
}

void IoThreads::Join() {
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace tessera::loadtest
