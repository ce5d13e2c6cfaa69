#include "servelab/frontend/admission.hpp"

#include <cmath>

#include "servelab/core/errors.hpp"
#include "servelab/frontend/errors.hpp"

namespace servelab::frontend {

void Limits::check() const {
  if (max_body_bytes < 1) throw ValueError(str("max_body_bytes=", max_body_bytes, " must be a positive integer"));
  if (max_concurrent < 1) throw ValueError(str("max_concurrent=", max_concurrent, " must be a positive integer"));
  if (!(std::isfinite(request_timeout_s) && request_timeout_s > 0)) {
    throw ValueError(str("request_timeout_s=", request_timeout_s, " must be a positive number of seconds"));
  }
}

void Admission::overloaded() const {
  throw FrontendError(ErrorKind::Overloaded,
                      str(inflight_ + reading_ + external_, " requests are in flight, the limit (max_concurrent=",
                          limits_.max_concurrent, "); retry later"));
}

void Admission::start_reading() {
  std::lock_guard lock(mutex_);
  if (inflight_ + reading_ + external_ >= limits_.max_concurrent) overloaded();
  ++reading_;
}

void Admission::done_reading() {
  std::lock_guard lock(mutex_);
  --reading_;
}

void Admission::start_inflight() {
  std::lock_guard lock(mutex_);
  if (draining_) throw FrontendError(ErrorKind::Unavailable, "the server is shutting down; no new requests");
  if (inflight_ + external_ >= limits_.max_concurrent) overloaded();
  ++inflight_;
}

void Admission::done_inflight() {
  {
    std::lock_guard lock(mutex_);
    --inflight_;
  }
  idle_.notify_all();
}

void Admission::add_external(std::int64_t delta) {
  std::lock_guard lock(mutex_);
  external_ += delta;
}

std::int64_t Admission::load() const {
  std::lock_guard lock(mutex_);
  return inflight_ + reading_;
}

void Admission::begin_drain() {
  std::lock_guard lock(mutex_);
  draining_ = true;
}

bool Admission::draining() const {
  std::lock_guard lock(mutex_);
  return draining_;
}

bool Admission::wait_idle(std::chrono::steady_clock::duration timeout) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, timeout, [this] { return inflight_ == 0; });
}

std::int64_t Admission::inflight() const {
  std::lock_guard lock(mutex_);
  return inflight_;
}

std::int64_t Admission::reading() const {
  std::lock_guard lock(mutex_);
  return reading_;
}

}  // namespace servelab::frontend
