// Lets a Python class be a servelab Scheduler. Each hook hands Python the view and the actions as
// objects that share ownership of the run's ClusterState, so a policy that keeps a reference past
// the end of a run holds a valid (finished) cluster rather than a dangling pointer.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <utility>

#include "servelab/cluster/cluster_state.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/sched/scheduler.hpp"

namespace servelab::bindings {

// The Actions object a Python policy receives: its run's actions, usable only while one of the
// policy's hooks is running. Kept and called later - after the run, or from another thread
// between hooks while the world's own thread changes the cluster - it raises RuntimeError instead
// of acting on a finished run or racing the world.
class PolicyActions {
 public:
  explicit PolicyActions(std::shared_ptr<cluster::ClusterState> state) : state_(std::move(state)) {}

  // The run's actions for `action` (its name, for the error), if a hook is running.
  sched::Actions& use(const char* action) const {
    if (open_hooks_ == 0) {
      throw RuntimeError(str("actions.", action,
                             ": this Actions object was passed to a hook that has returned (its run has ended, or "
                             "the policy kept it): a policy can act only inside its hooks, through their actions"));
    }
    return *state_;
  }
  const sched::ClusterView& view() const { return *state_; }

  // Opens the actions for the duration of one hook call (hooks may nest: a hook's action can
  // make the world call another one).
  class HookScope {
   public:
    explicit HookScope(PolicyActions& actions) : actions_(actions) { ++actions_.open_hooks_; }
    ~HookScope() { --actions_.open_hooks_; }
    HookScope(const HookScope&) = delete;
    HookScope& operator=(const HookScope&) = delete;

   private:
    PolicyActions& actions_;
  };

 private:
  std::shared_ptr<cluster::ClusterState> state_;
  int open_hooks_ = 0;
};

class PyScheduler : public sched::Scheduler {
 public:
  using Scheduler::Scheduler;

  std::string describe() const override {
    pybind11::gil_scoped_acquire gil;
    if (auto override = pybind11::get_override(static_cast<const Scheduler*>(this), "describe")) {
      return override().cast<std::string>();
    }
    return pybind11::type::handle_of(pybind11::cast(this)).attr("__name__").cast<std::string>();
  }
  void on_start(const sched::ClusterView& view, sched::Actions& actions) override {
    call("on_start", view, actions, false);
  }
  void on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override {
    call("on_arrival", view, actions, true, query);
  }
  void on_batch_done(const sched::BatchDone& done, const sched::ClusterView& view, sched::Actions& actions) override {
    call("on_batch_done", view, actions, false, done);
  }
  void on_timer(std::int64_t tag, const sched::ClusterView& view, sched::Actions& actions) override {
    call("on_timer", view, actions, false, tag);
  }
  void on_worker_ready(sched::WorkerId worker, const sched::ClusterView& view, sched::Actions& actions) override {
    call("on_worker_ready", view, actions, false, worker);
  }

 private:
  template <typename... Args>
  void call(const char* hook, const sched::ClusterView& view, sched::Actions& actions, bool required,
            const Args&... args) {
    pybind11::gil_scoped_acquire gil;
    auto override = pybind11::get_override(static_cast<const Scheduler*>(this), hook);
    if (!override) {
      if (required) {
        throw pybind11::type_error(str(describe(), " must override ", hook, "(self, ..., view, actions)"));
      }
      return;
    }
    bind_objects(view);
    const PolicyActions::HookScope open(*actions_);
    override(args..., view_obj_, actions_obj_);
  }

  // (Re)creates the Python view/actions objects when a new run starts; the previous run's
  // actions stay closed for good.
  void bind_objects(const sched::ClusterView& view) {
    const auto* state = dynamic_cast<const cluster::ClusterState*>(&view);
    if (state == bound_) return;
    if (state == nullptr) throw RuntimeError("a Python scheduler needs a ClusterState-backed view");
    auto owner = std::const_pointer_cast<cluster::ClusterState>(state->shared_from_this());
    view_obj_ = pybind11::cast(std::shared_ptr<sched::ClusterView>(owner, owner.get()));
    actions_ = std::make_shared<PolicyActions>(owner);
    actions_obj_ = pybind11::cast(actions_);
    bound_ = state;
  }

  const cluster::ClusterState* bound_ = nullptr;
  std::shared_ptr<PolicyActions> actions_;
  pybind11::object view_obj_, actions_obj_;
};

}  // namespace servelab::bindings
