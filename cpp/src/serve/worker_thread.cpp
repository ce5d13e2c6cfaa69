#include "worker_thread.hpp"

#include <cxxabi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/serve/server.hpp"

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
  posted_.wait_until(lock, deadline, [this] { return !items_.empty() || woken_; });
  woken_ = false;
  for (auto& c : items_) out.push_back(std::move(c));
  items_.clear();
}

void Inbox::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  posted_.notify_one();
}

void Inbox::take(std::vector<Completion>& out) {
  std::lock_guard lock(mutex_);
  for (auto& c : items_) out.push_back(std::move(c));
  items_.clear();
}

WorkerThread::WorkerThread(sched::WorkerId worker, sched::HardwareId hardware, std::unique_ptr<Executor> executor,
                           Rng rng, std::shared_ptr<const RunClock> clock, std::shared_ptr<Inbox> inbox,
                           std::shared_ptr<const QueryInputs> inputs, std::shared_ptr<PinLog> pins)
    : worker_(worker),
      hardware_(hardware),
      executor_(std::move(executor)),
      rng_(std::move(rng)),
      clock_(std::move(clock)),
      inbox_(std::move(inbox)),
      inputs_(std::move(inputs)),
      pins_(std::move(pins)) {
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

bool WorkerThread::wait_returned(SteadyClock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return returned_cv_.wait_until(lock, deadline, [this] { return returned_; });
}

void WorkerThread::loop(std::stop_token stop) {
  // However the loop ends, wait_returned() and the abandoned list learn that it did.
  struct Returned {
    WorkerThread& t;
    ~Returned() {
      {
        std::lock_guard lock(t.mutex_);
        t.returned_ = true;
      }
      t.returned_cv_.notify_all();
    }
  } returned{*this};
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
    done.start = clock_->now();
    ExecReport report;
    try {
      if (!job.cpus.empty() && job.cpus != cpus_) {
        // Cores the kernel refused fail each batch asked to run on them, logged once.
        if (job.cpus != failed_cpus_) pin_error_ = apply_cpus(job);
        if (!pin_error_.empty()) throw RuntimeError(pin_error_);
      }
      const QueryInputs* inputs = job.inputs ? job.inputs.get() : inputs_.get();
      executor_->run(ExecRequest{worker_, hardware_, job.model, job.items, job.queries, job.config, rng_, stop,
                                 job.sizes, &report, inputs, job.outputs.get()});
    } catch (const abi::__forced_unwind&) {
      throw;  // the thread is being ended (pthread_exit, e.g. by Python at exit): let it end
    } catch (...) {
      done.error = std::current_exception();  // the controller drops the batch's queries (or stops)
    }
    done.finish = clock_->now();
    done.exec = report.compute >= 0 ? report.compute : done.finish - done.start;
    done.transport = report.transport;
    if (stop.stop_requested()) return;  // the run is over or gave up on this batch: nobody reads it
    inbox_->post(std::move(done));
  }
}

std::string WorkerThread::apply_cpus(const Job& job) {
  PinRecord record;
  record.worker = worker_;
  record.group = job.group;
  record.machine = job.machine;
  record.cores = job.cpus;
  record.core = job.cpus.front();
  record.at = job.dispatched;
  record.thread_id = static_cast<std::int64_t>(::syscall(SYS_gettid));
  try {
    record.applied = pin_this_thread(job.cpus);
    cpus_ = job.cpus;
    failed_cpus_.clear();
  } catch (const std::exception& e) {
    record.error = e.what();
    failed_cpus_ = job.cpus;
  }
  std::string why;
  if (!record.error.empty()) why = str("pinning worker ", worker_, " on machine ", job.machine, ": ", record.error);
  if (pins_) pins_->add(std::move(record));
  return why;
}

namespace {

// The threads abandoned by serving runs whose batches have not returned yet. Never destroyed, so
// the process's exit does not wait for them.
struct AbandonedThreads {
  std::mutex mutex;
  std::vector<std::unique_ptr<WorkerThread>> threads;

  static AbandonedThreads& get() {
    static auto* list = new AbandonedThreads;
    return *list;
  }

  // Takes out the threads that have returned; the caller destroys (joins) them outside the lock.
  std::vector<std::unique_ptr<WorkerThread>> take_returned() {
    std::vector<std::unique_ptr<WorkerThread>> out;
    std::lock_guard lock(mutex);
    const auto past = SteadyClock::time_point{};  // a deadline already passed: only checks
    auto keep = std::partition(threads.begin(), threads.end(), [&](auto& t) { return !t->wait_returned(past); });
    std::move(keep, threads.end(), std::back_inserter(out));
    threads.erase(keep, threads.end());
    return out;
  }
};

}  // namespace

void WorkerThread::abandon(std::unique_ptr<WorkerThread> thread) {
  if (!thread) return;
  thread->request_stop();
  auto& list = AbandonedThreads::get();
  auto returned = list.take_returned();
  std::lock_guard lock(list.mutex);
  list.threads.push_back(std::move(thread));
}  // `returned` joins here, outside the lock

std::size_t abandoned_worker_threads() {
  auto& list = AbandonedThreads::get();
  auto returned = list.take_returned();
  returned.clear();  // joins them
  std::lock_guard lock(list.mutex);
  return list.threads.size();
}

}  // namespace servelab::serve
