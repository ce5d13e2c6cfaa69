#include "servelab/serve/session.hpp"

#include <cmath>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::serve {

void SessionChannel::submit(Submission submission) {
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    if (!started_) throw RuntimeError("submit: the serving session has not started");
    if (closed_ || ended_) {
      throw RuntimeError(
          str("submit: the serving session is closed", end_reason_.empty() ? std::string() : " (" + end_reason_ + ")"));
    }
    // Stamped under the lock: the queue is in arrival order whatever thread submits.
    submission.arrival = now_();
    queued_.push_back(std::move(submission));
    wake = wake_;
  }
  wake();
}

void SessionChannel::close() {
  std::function<void()> wake;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    wake = wake_;
  }
  if (wake) wake();
}

void SessionChannel::abort() {
  {
    std::lock_guard lock(mutex_);
    aborted_ = true;
  }
  close();
}

void SessionChannel::attach(std::function<Nanos()> now, std::function<void()> wake) {
  {
    std::lock_guard lock(mutex_);
    now_ = std::move(now);
    wake_ = std::move(wake);
    started_ = true;
  }
  changed_.notify_all();
}

bool SessionChannel::take(std::deque<Submission>& out) {
  std::lock_guard lock(mutex_);
  for (auto& s : queued_) out.push_back(std::move(s));
  queued_.clear();
  return !closed_;
}

bool SessionChannel::aborted() const {
  std::lock_guard lock(mutex_);
  return aborted_;
}

void SessionChannel::end(const std::string& reason, std::exception_ptr error) {
  std::deque<Submission> left;
  {
    std::lock_guard lock(mutex_);
    ended_ = closed_ = true;
    end_reason_ = reason;
    error_ = std::move(error);
    // Nothing may wake a controller that is gone, nor stamp with its clock.
    wake_ = nullptr;
    left.swap(queued_);
  }
  changed_.notify_all();
  for (auto& s : left) {
    Outcome o;
    o.app = s.app;
    o.reason = reason;
    o.arrival = s.arrival;
    try {
      s.done(std::move(o));
    } catch (...) {  // a callback's error is its own: the others are still answered
    }
  }
}

void SessionChannel::wait_started() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return started_ || ended_; });
  if (!started_ && error_) std::rethrow_exception(error_);
}

bool SessionChannel::wait_ended(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline, [this] { return ended_; });
}

Session::Session(cluster::RunSpec spec, std::shared_ptr<sched::Scheduler> scheduler, ServeOptions options)
    : spec_(std::make_shared<const cluster::RunSpec>(std::move(spec))), scheduler_(std::move(scheduler)) {
  if (!scheduler_) throw ValueError("Session: scheduler is null");
  if (options.inputs) {
    throw ValueError("Session: inputs come with each submit(); ServeOptions::inputs must be empty");
  }
  options.session = channel_;
  thread_ = std::thread([this, options = std::move(options)] {
    try {
      result_ = serve(*spec_, *scheduler_, options);
      channel_->end("the serving session has ended");
    } catch (...) {
      error_ = std::current_exception();
      std::string what = "the serving session failed";
      try {
        throw;
      } catch (const std::exception& e) {
        what += str(": ", e.what());
      } catch (...) {
      }
      channel_->end(what, error_);
    }
  });
  try {
    channel_->wait_started();
  } catch (...) {
    thread_.join();
    throw;
  }
}

Session::~Session() {
  if (thread_.joinable()) {
    channel_->abort();
    thread_.join();
  }
}

void Session::submit(std::int32_t app, std::int32_t size, std::optional<InputArray> input, OutcomeCallback done,
                     Nanos slo, double accuracy_floor) {
  const auto apps = static_cast<std::int32_t>(spec_->workload->apps().size());
  if (app < 0 || app >= apps)
    throw ValueError(str("app=", app, " is not one of the session's ", apps, " applications"));
  if (size < 1 || size > kMaxQuerySize) throw ValueError(str("size=", size, " must be in 1..", kMaxQuerySize));
  if (!done) throw ValueError("submit: done (the outcome callback) is empty");
  if (slo < 0) throw ValueError(str("slo=", slo, " ns must be > 0 (0: the application's)"));
  if (accuracy_floor > 1 || std::isnan(accuracy_floor)) {
    throw ValueError(str("accuracy_floor=", accuracy_floor, " must be in [0, 1] (negative: the application's)"));
  }
  channel_->submit({app, size, std::move(input), std::move(done), 0, slo, accuracy_floor});
}

cluster::RunResult Session::result() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(error_);
  if (taken_ || !result_) throw RuntimeError("Session::result: the result was taken already");
  taken_ = true;
  return std::move(*result_);
}

}  // namespace servelab::serve
