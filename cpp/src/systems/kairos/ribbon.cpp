// Ribbon's query distribution (SC'21, as Kairos describes it in Sec. 7): first come, first served
// from a central queue, an idle instance of the base type preferred when several are idle. That is
// the generic fcfs(prefer=<base>) policy; this file only names it and finds the base type when
// none is given (the fastest type on the largest query, see ClusterRoles).
#include <memory>
#include <string>

#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/systems/kairos/baselines.hpp"
#include "servelab/systems/kairos/cluster_roles.hpp"

namespace servelab::kairos {
namespace {

class Ribbon final : public sched::Scheduler {
 public:
  Ribbon(std::string base, std::string description) : base_(std::move(base)), description_(std::move(description)) {}

  std::string describe() const override { return description_; }

  void on_start(const ClusterView& view, sched::Actions& actions) override {
    std::string prefer = base_;
    if (prefer.empty()) {
      const auto roles = find_roles(view, "");
      if (roles.base >= 0) prefer = view.profile().hardware()[roles.base];
    }
    fcfs_ = sched::make_fcfs(prefer);
    fcfs_->on_start(view, actions);
  }
  void on_arrival(const sched::Query& query, const ClusterView& view, sched::Actions& actions) override {
    fcfs_->on_arrival(query, view, actions);
  }
  void on_batch_done(const sched::BatchDone& done, const ClusterView& view, sched::Actions& actions) override {
    fcfs_->on_batch_done(done, view, actions);
  }
  void on_timer(std::int64_t tag, const ClusterView& view, sched::Actions& actions) override {
    fcfs_->on_timer(tag, view, actions);
  }
  void on_worker_ready(sched::WorkerId worker, const ClusterView& view, sched::Actions& actions) override {
    fcfs_->on_worker_ready(worker, view, actions);
  }

 private:
  std::string base_, description_;
  std::shared_ptr<sched::Scheduler> fcfs_;
};

}  // namespace

void register_ribbon(sched::SchedulerRegistry& registry) {
  registry.add({"ribbon",
                "Ribbon (SC'21) as compared in Kairos: FCFS from a central queue, preferring an idle instance of the "
                "base type (fcfs(prefer=<base>)).",
                {base_type_param()},
                [](const Params& p) { return std::make_shared<Ribbon>(p.get_string("base"), p.describe()); }});
}

}  // namespace servelab::kairos
