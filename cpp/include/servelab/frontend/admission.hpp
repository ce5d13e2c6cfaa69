// The HTTP engine's limits and the places among max_concurrent: requests accepted and not
// answered yet, and bodies being read (each counts while it arrives, so that bodies read at once
// are bounded too). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace servelab::frontend {

struct Limits {
  std::int64_t max_body_bytes = 64 * 1024 * 1024;
  std::int64_t max_concurrent = 1024;
  double request_timeout_s = 30.0;
  // Throws ValueError naming the field and value.
  void check() const;
};

class Admission {
 public:
  explicit Admission(Limits limits) : limits_(limits) {}
  const Limits& limits() const { return limits_; }

  // A body is about to be read: overloaded (503) when inflight + reading is at the limit.
  void start_reading();
  void done_reading();
  // A request is about to be submitted: overloaded when inflight is at the limit, unavailable
  // while draining.
  void start_inflight();
  // Its outcome came (or submitting it failed).
  void done_inflight();

  // Another engine's requests (in flight or being read) sharing max_concurrent: +1 / -1.
  void add_external(std::int64_t delta);
  // This engine's own: in flight and being read (what the other engine counts).
  std::int64_t load() const;

  void begin_drain();
  bool draining() const;
  // Waits until nothing is in flight, at most `timeout`; true if so.
  bool wait_idle(std::chrono::steady_clock::duration timeout);
  std::int64_t inflight() const;
  std::int64_t reading() const;

 private:
  [[noreturn]] void overloaded() const;  // mutex_ held
  Limits limits_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::int64_t inflight_ = 0, reading_ = 0, external_ = 0;
  bool draining_ = false;
};

}  // namespace servelab::frontend
