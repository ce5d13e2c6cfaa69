#include "servelab/cluster/interference.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/core/param_builders.hpp"

namespace servelab::cluster {
namespace {

class NoInterference final : public InterferenceModel {
 public:
  double slowdown(const sched::ClusterView&, sched::WorkerId, std::span<const sched::WorkerId>) const override {
    return 1.0;
  }
  std::string describe() const override { return "none"; }
};

// Each co-runner adds the same share: 1 + slowdown x co-runners (INFaaS's linear model, Sec. 4.1).
class PerCoRunner final : public InterferenceModel {
 public:
  explicit PerCoRunner(double slowdown) : slowdown_(slowdown) {}
  double slowdown(const sched::ClusterView&, sched::WorkerId,
                  std::span<const sched::WorkerId> co_runners) const override {
    return 1.0 + slowdown_ * static_cast<double>(co_runners.size());
  }
  void slowdowns(const sched::ClusterView&, std::span<const sched::WorkerId> running,
                 std::span<double> out) const override {
    const double each = 1.0 + slowdown_ * static_cast<double>(running.size() - 1);
    std::fill(out.begin(), out.end(), each);
  }
  std::string describe() const override { return str("per_corunner(slowdown=", slowdown_, ")"); }

 private:
  double slowdown_;
};

// Busy threads sharing the machine's cores, fairly (an OS scheduler's time slices): with T
// threads of running batches (each instance's `threads_knob`, default 1) plus the controller's
// on C cores, each runs at C / T of its speed when T > C. An instance given its own cores (the
// "cores" knob) shares only those with its own threads.
class CpuShare final : public InterferenceModel {
 public:
  CpuShare(std::string threads_knob, double controller) : knob_(std::move(threads_knob)), controller_(controller) {}
  double slowdown(const sched::ClusterView& view, sched::WorkerId worker,
                  std::span<const sched::WorkerId> co_runners) const override {
    const auto threads = [&](sched::WorkerId w) { return static_cast<double>(view.config(w, knob_, 1)); };
    const std::int64_t own_cores = view.config(worker, sched::kCoresKnob, 0);
    if (own_cores > 0) return std::max(1.0, threads(worker) / static_cast<double>(own_cores));
    const auto cores = view.machine_resources(view.machine(worker)).cores;
    if (cores <= 0) {
      throw ValueError(str("cpu_share: machine=", view.machine(worker), " of worker=", worker,
                           " has no cores: declare them (machines[].cores)"));
    }
    // The co-runners that have cores of their own do not share the rest.
    double busy = controller_ + threads(worker);
    double shared = static_cast<double>(cores);
    for (const auto w : co_runners) {
      const std::int64_t theirs = view.config(w, sched::kCoresKnob, 0);
      if (theirs > 0) {
        shared -= static_cast<double>(theirs);
      } else {
        busy += threads(w);
      }
    }
    if (shared <= 0) {
      throw ValueError(str("cpu_share: worker=", worker, " has no cores of its own and the other instances of machine=",
                           view.machine(worker), " hold all its ", cores, ": give it a 'cores' knob"));
    }
    return std::max(1.0, busy / shared);
  }
  std::string describe() const override {
    return str("cpu_share(threads_knob='", knob_, "', controller=", controller_, ")");
  }

 private:
  std::string knob_;
  double controller_;
};

// A table of measured slowdowns, "model:co1+co2=1.4; model:co1=1.2": the batch's model, then the
// co-runners' models (any order). A co-runner set not in the table multiplies the pairs' entries
// ("model:co"), and a pair not in it adds `otherwise` per co-runner.
class MeasuredInterference final : public InterferenceModel {
 public:
  MeasuredInterference(const std::string& table, double otherwise) : table_text_(table), otherwise_(otherwise) {
    std::stringstream entries(table);
    std::string entry;
    std::size_t index = 0;
    while (std::getline(entries, entry, ';')) {
      const std::string where = str("measured: table entry ", index++, " ('", entry, "')");
      entry = trim(entry);
      if (entry.empty()) continue;
      const auto colon = entry.find(':'), equals = entry.find('=');
      if (colon == std::string::npos || equals == std::string::npos || equals < colon) {
        throw ValueError(str(where, " is not 'model:co_runner+co_runner=slowdown'"));
      }
      const std::string model = trim(entry.substr(0, colon));
      std::vector<std::string> co;
      std::stringstream names(entry.substr(colon + 1, equals - colon - 1));
      std::string name;
      while (std::getline(names, name, '+')) co.push_back(trim(name));
      double value = 0;
      const std::string number = trim(entry.substr(equals + 1));
      try {
        std::size_t used = 0;
        value = std::stod(number, &used);
        if (used != number.size()) throw std::invalid_argument(number);  // "1.4x": not a number
      } catch (const std::exception&) {
        throw ValueError(str(where, ": the slowdown '", number, "' is not a number"));
      }
      if (!std::isfinite(value) || value <= 0 || value > kMaxSlowdown) {
        throw ValueError(str(where, ": slowdown=", value, " must be a number in (0, ", kMaxSlowdown, "]"));
      }
      if (model.empty() || std::any_of(co.begin(), co.end(), [](const auto& n) { return n.empty(); }) || co.empty()) {
        throw ValueError(str(where, " names an empty model"));
      }
      std::sort(co.begin(), co.end());
      if (!entries_.emplace(key(model, co), value).second) throw ValueError(str(where, " repeats an entry"));
    }
    if (entries_.empty()) throw ValueError(str("measured: table='", table, "' has no entry"));
  }
  double slowdown(const sched::ClusterView& view, sched::WorkerId worker,
                  std::span<const sched::WorkerId> co_runners) const override {
    if (co_runners.empty()) return 1.0;
    const auto& names = view.profile().models();
    std::call_once(checked_, [&] { check_names(names); });
    const auto model_of = [&](sched::WorkerId w) { return names[static_cast<std::size_t>(view.running_model(w))]; };
    std::vector<std::string> co;
    for (const auto w : co_runners) co.push_back(model_of(w));
    std::sort(co.begin(), co.end());
    const std::string mine = model_of(worker);
    if (const auto it = entries_.find(key(mine, co)); it != entries_.end()) return it->second;
    double factor = 1.0;
    for (const auto& other : co) {
      const auto pair = entries_.find(key(mine, {other}));
      factor *= pair != entries_.end() ? pair->second : 1.0 + otherwise_;
    }
    return factor;
  }
  std::string describe() const override {
    return str("measured(table='", table_text_, "', otherwise=", otherwise_, ")");
  }

 private:
  static std::string trim(std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    return s;
  }
  static std::string key(const std::string& model, const std::vector<std::string>& co) {
    std::string k = model + ':';
    for (std::size_t i = 0; i < co.size(); ++i) k += (i ? "+" : "") + co[i];
    return k;
  }
  // A table naming a model the run's profile lacks is a typo that would never match.
  void check_names(const std::vector<std::string>& names) const {
    for (const auto& [k, value] : entries_) {
      std::string all = k;
      std::replace(all.begin(), all.end(), ':', '+');
      std::stringstream parts(all);
      std::string one;
      while (std::getline(parts, one, '+')) {
        if (std::find(names.begin(), names.end(), one) == names.end()) {
          throw ValueError(str("measured: table entry '", k, "' names model '", one, "', which the profile lacks"));
        }
      }
    }
  }

  std::string table_text_;
  double otherwise_;
  std::map<std::string, double> entries_;
  mutable std::once_flag checked_;
};

}  // namespace

void InterferenceModel::slowdowns(const sched::ClusterView& view, std::span<const sched::WorkerId> running,
                                  std::span<double> out) const {
  std::vector<sched::WorkerId> others;
  others.reserve(running.size());
  for (std::size_t i = 0; i < running.size(); ++i) {
    others.assign(running.begin(), running.end());
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    out[i] = slowdown(view, running[i], others);
  }
}

void bad_slowdown(const InterferenceModel& model, std::span<const sched::WorkerId> running, std::span<const double> out,
                  std::size_t i) {
  throw ValueError(str("interference model ", model.describe(), " gave slowdown=", out[i], " for worker=", running[i],
                       " with ", running.size() - 1, " co-runners: it must be a number in (0, ", kMaxSlowdown, "]"));
}

void register_interference_models(InterferenceModelRegistry& registry) {
  registry.add(
      {"none",
       "No interference: every batch runs at its profile time, whatever shares its machine.",
       {},
       [](const Params&) -> std::shared_ptr<InterferenceModel> { return std::make_shared<NoInterference>(); }});
  registry.add(
      {"per_corunner",
       "A fixed slowdown per co-runner: a batch runs 1 + slowdown x (instances running a batch on its "
       "machine besides it) times slower (INFaaS's linear interference).",
       {float_param("slowdown", 0.1, 0, 1000, "the extra time each co-runner adds, as a share of the time alone")},
       [](const Params& p) -> std::shared_ptr<InterferenceModel> {
         return std::make_shared<PerCoRunner>(p.get_float("slowdown"));
       }});
  registry.add(
      {"cpu_share",
       "Busy threads share the machine's cores (machines[].cores): with T threads of running batches (each "
       "instance's threads_knob, default 1) plus `controller` on C cores, each runs max(1, T / C) times "
       "slower; an instance with cores of its own (the 'cores' knob) shares only those.",
       {string_param("threads_knob", "threads", "the instance knob giving its batch's threads (default 1)"),
        float_param("controller", 0, 0, 1024, "threads the serving loop's controller keeps busy on the machine")},
       [](const Params& p) -> std::shared_ptr<InterferenceModel> {
         if (p.get_string("threads_knob").empty()) throw ValueError("cpu_share: threads_knob='' names no knob");
         return std::make_shared<CpuShare>(p.get_string("threads_knob"), p.get_float("controller"));
       }});
  registry.add(
      {"measured",
       "Slowdowns measured by co-runner set (servelab.fit_interference(servelab.profile_colocated(...)) fits it): "
       "table='m:c1+c2=1.4; "
       "m:c1=1.2' gives the slowdown of a batch of m while batches of c1 and c2 run on its machine; a set not "
       "in the table multiplies its pairs' entries, and a pair not in it adds `otherwise` per co-runner.",
       {string_param("table", "", "entries 'model:co_runner+co_runner=slowdown', separated by ';'"),
        float_param("otherwise", 0, 0, 1000, "the slowdown per co-runner for a pair the table lacks, minus 1")},
       [](const Params& p) -> std::shared_ptr<InterferenceModel> {
         return std::make_shared<MeasuredInterference>(p.get_string("table"), p.get_float("otherwise"));
       }});
}

}  // namespace servelab::cluster
