// Applying the workers' `llc_ways` setting (ClusterView::config, set by Hera's hera_rmu and
// parties, or any scheduler) to the L3 cache through resctrl while serving.
//
// Layout, kept simple so that Hera's two co-located models get disjoint partitions without the
// workers talking to each other: the workers of the run's first model (the lowest model id the
// initial worker groups hold) take their ways from the low end of the cache, every other model's
// workers from the high end. Workers with the same end and the same ways share one resctrl group,
// "servelab-<pid>-<low|high>-<ways>" (so at most two groups per ways value, few CLOSIDs): with two
// models whose ways sum to at most the cache's ways, as Hera splits them, the masks do not overlap.
//
// Each worker's thread applies its setting itself, before the first batch after it changed: it
// creates the group if needed (mkdir, schemata "L3:<id>=<mask>;..." for every L3 domain of the
// root's schemata) and writes its thread id into the group's tasks. A failure (ways the cache
// cannot give, the kernel refusing, no CLOSID left) is recorded once per worker and the batch runs
// anyway. A group left empty is removed at once; every group the run created is removed at its end.
// A worker whose llc_ways is 0 goes back to the root group (no partition of its own).
//
// Instances on declared machines (RunSpec::machines) are laid out by machine and model instead,
// as Hera gives each co-located model one class of service: the executor asks for the knobs
// "llc_first_way" and "llc_share_ways" and the serving loop answers, per batch, the partition of
// the instance's model on its machine (serve::instance_llc_share: the instances of one model
// share one partition of their llc_ways summed; the machine's models and the machines before it
// take consecutive ways). Their groups are "servelab-<pid>-at<first>-<ways>"; a model holding no
// ways sends its instances' threads back to the root group. An executor that names these knobs
// sees them too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "servelab/serve/executor.hpp"
#include "servelab/serve/resctrl.hpp"

namespace servelab::serve {

// The knobs through which the serving loop tells an instance of a declared machine its partition:
// where its model's ways start and how many they are.
inline constexpr const char* kLlcFirstWayKnob = "llc_first_way";
inline constexpr const char* kLlcShareWaysKnob = "llc_share_ways";

// One worker's LLC partition as its thread applied it.
struct LlcRecord {
  sched::WorkerId worker = -1;
  std::string group;           // the resctrl group it is in ("": none yet)
  std::string mask;            // that group's CBM
  std::int64_t ways = 0;       // the llc_ways it applied (0: none yet)
  std::int64_t thread_id = 0;  // the worker thread's kernel id (gettid)
  int applied = 0;             // how many times its setting changed and was applied
  int failed = 0;              // how many applications failed
  std::string error;           // the first failure's reason ("": none)
};

class LlcPartitioner {
 public:
  // `support` must be supported (probe_resctrl); `low_model` takes the low end of the cache.
  LlcPartitioner(std::filesystem::path root, ResctrlSupport support, sched::ModelId low_model);
  ~LlcPartitioner();
  LlcPartitioner(const LlcPartitioner&) = delete;
  LlcPartitioner& operator=(const LlcPartitioner&) = delete;

  // Called on the worker's own thread: moves it into the group of `ways` at `model`'s end. Never
  // throws; a failure goes to the worker's record. Does nothing once remove_groups() ran.
  void apply(sched::WorkerId worker, sched::ModelId model, std::int64_t ways);
  // The same for an instance of a declared machine: `ways` ways from way `first` (counted from
  // the cache's lowest way).
  void apply_at(sched::WorkerId worker, std::int64_t first, std::int64_t ways);
  // llc_ways=0 (an instance given no ways of its own, e.g. one a policy is draining): the thread
  // goes back to the root group (the cache its partitions do not take) and leaves its group.
  void leave(sched::WorkerId worker);
  // True when `model`'s workers take the low end.
  bool low_end(sched::ModelId model) const { return model == low_model_; }

  // By worker id.
  std::vector<LlcRecord> records() const;
  const ResctrlSupport& support() const { return support_; }
  const std::filesystem::path& root() const { return root_; }
  // The groups created during the run, in creation order (removed ones included).
  std::vector<std::string> created_groups() const;
  // Removes every group still present and stops further applications; returns the reasons of the
  // removals that failed (the run's end calls it; later calls do nothing).
  std::vector<std::string> remove_groups();

 private:
  std::string group_name(bool low, std::int64_t ways) const;
  // Moves the calling thread into `group` (created with `mask` if new); under mutex_.
  void join(LlcRecord& record, const std::string& group, const std::string& mask, std::int64_t ways);

  std::filesystem::path root_;
  ResctrlSupport support_;
  sched::ModelId low_model_;
  mutable std::mutex mutex_;
  std::map<sched::WorkerId, LlcRecord> records_;
  std::map<std::string, int> members_;  // present groups -> workers in them
  std::vector<std::string> created_;
  std::vector<std::string> removal_errors_;  // empty groups that could not be removed mid-run
  bool closed_ = false;
};

// The model whose workers take the low end: the lowest model id the spec's worker groups hold (a
// group listing no models holds every model the profile has on its hardware).
sched::ModelId first_model(const cluster::RunSpec& spec);

// Wraps `inner`: each executor adds "llc_ways" to its knobs and, before a batch whose llc_ways (or
// model end) differs from the last applied, has `partitioner` apply it on the worker's thread.
ExecutorFactory llc_partitioned_executors(ExecutorFactory inner, std::shared_ptr<LlcPartitioner> partitioner);

}  // namespace servelab::serve
