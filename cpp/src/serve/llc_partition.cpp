#include "servelab/serve/llc_partition.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "servelab/core/errors.hpp"

namespace servelab::serve {

namespace {

constexpr const char* kKnob = "llc_ways";

// Runs the inner executor after moving its thread into the partition of its llc_ways setting.
class LlcExecutor final : public Executor {
 public:
  LlcExecutor(std::unique_ptr<Executor> inner, std::shared_ptr<LlcPartitioner> partitioner)
      : inner_(std::move(inner)), partitioner_(std::move(partitioner)) {
    knobs_ = inner_->knobs();
    inner_reads_ways_ = std::find(knobs_.begin(), knobs_.end(), kKnob) != knobs_.end();
    if (!inner_reads_ways_) knobs_.emplace_back(kKnob);
    // Answered by the serving loop for machines' instances.
    inner_reads_share_ = std::find(knobs_.begin(), knobs_.end(), kLlcFirstWayKnob) != knobs_.end();
    for (const char* key : {kLlcFirstWayKnob, kLlcShareWaysKnob}) {
      if (std::find(knobs_.begin(), knobs_.end(), key) == knobs_.end()) knobs_.emplace_back(key);
    }
  }

  void run(const ExecRequest& request) override {
    const auto at = request.config.find(kLlcFirstWayKnob);
    const auto share = request.config.find(kLlcShareWaysKnob);
    if (at != request.config.end() && share != request.config.end()) {
      // An instance of a declared machine: its model's partition on the machine.
      if (share->second <= 0) {
        leave(request.worker);
      } else if (share->second != ways_ || at->second != first_) {
        ways_ = share->second;
        first_ = at->second;
        partitioner_->apply_at(request.worker, first_, ways_);
      }
    } else if (const auto it = request.config.find(kKnob); it != request.config.end()) {
      if (it->second <= 0) {  // no ways of its own: back to the root group
        leave(request.worker);
      } else {
        const bool low = partitioner_->low_end(request.model);
        // Only a change is applied: the thread stays in its group between batches.
        if (it->second != ways_ || low != low_ || first_ != kNone) {
          ways_ = it->second;
          low_ = low;
          first_ = kNone;
          partitioner_->apply(request.worker, request.model, ways_);
        }
      }
    }
    const bool strip_ways = !inner_reads_ways_ && request.config.contains(kKnob);
    const bool strip_share = !inner_reads_share_ && at != request.config.end();
    if (!strip_ways && !strip_share) return inner_->run(request);
    // The inner executor sees only the knobs it names (a Python executor is handed each one).
    ConfigKnobs config = request.config;
    if (strip_ways) config.erase(kKnob);
    if (strip_share) {
      config.erase(kLlcFirstWayKnob);
      config.erase(kLlcShareWaysKnob);
    }
    inner_->run(ExecRequest{request.worker, request.hardware, request.model, request.items, request.queries, config,
                            request.rng, request.stop, request.sizes, request.report, request.inputs, request.outputs});
  }
  std::vector<std::string> knobs() const override { return knobs_; }
  std::string describe() const override { return inner_->describe(); }

 private:
  // Back to the root group, once.
  void leave(sched::WorkerId worker) {
    if (ways_ == 0) return;
    ways_ = 0;
    first_ = kNone;
    partitioner_->leave(worker);
  }

  std::unique_ptr<Executor> inner_;
  std::shared_ptr<LlcPartitioner> partitioner_;
  std::vector<std::string> knobs_;
  bool inner_reads_ways_ = false;
  bool inner_reads_share_ = false;  // the inner executor names llc_first_way (and llc_share_ways)
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();
  std::int64_t ways_ = kNone;  // nothing applied yet
  bool low_ = false;
  std::int64_t first_ = kNone;  // the first way of a machine's layout (kNone: the model layout)
};

}  // namespace

LlcPartitioner::LlcPartitioner(std::filesystem::path root, ResctrlSupport support, sched::ModelId low_model)
    : root_(std::move(root)), support_(std::move(support)), low_model_(low_model) {
  if (!support_.supported)
    throw ValueError(str("llc: resctrl at ", root_.string(), " is unsupported: ", support_.reason));
}

LlcPartitioner::~LlcPartitioner() { remove_groups(); }

std::string LlcPartitioner::group_name(bool low, std::int64_t ways) const {
  return str("servelab-", ::getpid(), low ? "-low-" : "-high-", ways);
}

void LlcPartitioner::apply(sched::WorkerId worker, sched::ModelId model, std::int64_t ways) {
  const bool low = low_end(model);
  std::lock_guard lock(mutex_);
  if (closed_) return;
  auto& record = records_[worker];
  record.worker = worker;
  record.thread_id = static_cast<std::int64_t>(::syscall(SYS_gettid));
  try {
    join(record, group_name(low, ways), cat_mask(support_, ways, low), ways);
  } catch (const std::exception& e) {
    ++record.failed;
    if (record.error.empty()) record.error = str("llc_ways=", ways, ": ", e.what());
  }
}

void LlcPartitioner::apply_at(sched::WorkerId worker, std::int64_t first, std::int64_t ways) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  auto& record = records_[worker];
  record.worker = worker;
  record.thread_id = static_cast<std::int64_t>(::syscall(SYS_gettid));
  try {
    join(record, str("servelab-", ::getpid(), "-at", first, "-", ways), cat_mask_at(support_, first, ways), ways);
  } catch (const std::exception& e) {
    ++record.failed;
    if (record.error.empty()) record.error = str("llc_ways=", ways, " from way ", first, ": ", e.what());
  }
}

void LlcPartitioner::leave(sched::WorkerId worker) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  auto& record = records_[worker];
  record.worker = worker;
  record.thread_id = static_cast<std::int64_t>(::syscall(SYS_gettid));
  try {
    if (!record.group.empty()) {
      add_task(root_, record.thread_id);
      if (--members_[record.group] == 0) {
        try {
          remove_group(root_ / record.group);
          members_.erase(record.group);
        } catch (const std::exception& e) {
          removal_errors_.push_back(e.what());
        }
      }
    }
    record.group.clear();
    record.mask.clear();
    record.ways = 0;
    ++record.applied;
  } catch (const std::exception& e) {
    ++record.failed;
    if (record.error.empty()) record.error = str("llc_ways=0: ", e.what());
  }
}

void LlcPartitioner::join(LlcRecord& record, const std::string& group, const std::string& mask, std::int64_t ways) {
  const auto dir = root_ / group;
  if (!members_.contains(group)) {
    create_group(dir, schemata_line(support_, mask));
    members_[group] = 0;
    created_.push_back(group);
  }
  add_task(dir, record.thread_id);
  ++members_[group];
  // The worker left its previous group: remove that group once nobody is in it (frees its CLOSID).
  if (!record.group.empty() && record.group != group && --members_[record.group] == 0) {
    try {
      remove_group(root_ / record.group);
      members_.erase(record.group);
    } catch (const std::exception& e) {
      removal_errors_.push_back(e.what());
    }
  }
  record.group = group;
  record.mask = mask;
  record.ways = ways;
  ++record.applied;
}

std::vector<LlcRecord> LlcPartitioner::records() const {
  std::lock_guard lock(mutex_);
  std::vector<LlcRecord> out;
  for (const auto& [worker, record] : records_) out.push_back(record);
  return out;
}

std::vector<std::string> LlcPartitioner::created_groups() const {
  std::lock_guard lock(mutex_);
  return created_;
}

std::vector<std::string> LlcPartitioner::remove_groups() {
  std::lock_guard lock(mutex_);
  if (closed_) return {};
  closed_ = true;
  auto errors = std::move(removal_errors_);
  for (const auto& [group, count] : members_) {
    try {
      remove_group(root_ / group);
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  }
  members_.clear();
  return errors;
}

sched::ModelId first_model(const cluster::RunSpec& spec) {
  const auto& profile = *spec.profile;
  auto lowest = std::numeric_limits<sched::ModelId>::max();
  for (const auto& group : spec.workers) {
    if (!group.models.empty()) {
      for (const auto& name : group.models) lowest = std::min(lowest, profile.model_index(name));
      continue;
    }
    const auto hardware = profile.hardware_index(group.hardware);
    for (sched::ModelId m = 0; m < static_cast<sched::ModelId>(profile.models().size()); ++m) {
      if (profile.has_latency(hardware, m)) {
        lowest = std::min(lowest, m);
        break;
      }
    }
  }
  return lowest == std::numeric_limits<sched::ModelId>::max() ? 0 : lowest;
}

ExecutorFactory llc_partitioned_executors(ExecutorFactory inner, std::shared_ptr<LlcPartitioner> partitioner) {
  if (!partitioner) throw ValueError("llc_partitioned_executors: no partitioner");
  return [inner = std::move(inner), partitioner = std::move(partitioner)](
             sched::WorkerId worker, sched::HardwareId hardware,
             const cluster::RunSpec& spec) -> std::unique_ptr<Executor> {
    return std::make_unique<LlcExecutor>(inner(worker, hardware, spec), partitioner);
  };
}

}  // namespace servelab::serve
