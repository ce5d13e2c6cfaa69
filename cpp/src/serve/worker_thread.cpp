#include "worker_thread.hpp"

#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::serve {

void Inbox::post(Completion completion) {
  {
    std::lock_guard lock(mutex_);
    items_.push_back(std::move(completion));
  }
  posted_.notify_one();
}

void Inbox::wait_until(SteadyClock::time_point deadline, std::vector<Completion>& out) {
  std::unique_lock lock(mutex_);
  posted_.wait_until(lock, deadline, [this] { return !items_.empty(); });
  for (auto& c : items_) out.push_back(std::move(c));
  items_.clear();
}

void Inbox::take(std::vector<Completion>& out) {
  std::lock_guard lock(mutex_);
  for (auto& c : items_) out.push_back(std::move(c));
  items_.clear();
}

WorkerThread::WorkerThread(sched::WorkerId worker, sched::HardwareId hardware, std::unique_ptr<Executor> executor,
                           Rng rng, const RunClock& clock, Inbox& inbox, const QueryInputs* inputs)
    : worker_(worker),
      hardware_(hardware),
      executor_(std::move(executor)),
      rng_(std::move(rng)),
      clock_(clock),
      inbox_(inbox),
      inputs_(inputs) {
  if (!executor_) throw RuntimeError(str("the executor factory returned no executor for worker=", worker));
  knobs_ = executor_->knobs();
  name_ = executor_->describe();
  thread_ = std::jthread([this](std::stop_token stop) { loop(std::move(stop)); });
}

void WorkerThread::submit(Job job) {
  {
    std::lock_guard lock(mutex_);
    job_ = std::move(job);
  }
  submitted_.notify_one();
}

void WorkerThread::loop(std::stop_token stop) {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      if (!submitted_.wait(lock, stop, [this] { return job_.has_value(); })) return;  // stop requested
      job = std::move(*job_);
      job_.reset();
    }
    Completion done;
    done.worker = worker_;
    done.start = clock_.now();
    ExecReport report;
    try {
      executor_->run(ExecRequest{worker_, hardware_, job.model, job.items, job.queries, job.config, rng_, stop,
                                 job.sizes, &report, inputs_});
    } catch (...) {
      done.error = std::current_exception();  // the controller drops the batch's queries (or stops)
    }
    done.finish = clock_.now();
    done.exec = report.compute >= 0 ? report.compute : done.finish - done.start;
    if (stop.stop_requested()) return;  // the run is over; nobody reads the inbox any more
    inbox_.post(std::move(done));
  }
}

}  // namespace servelab::serve
