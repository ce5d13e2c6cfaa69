#include "servelab/systems/hera/interference.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <sstream>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/param_builders.hpp"
#include "servelab/sched/machine.hpp"

namespace servelab::hera {
namespace {

constexpr int kBisections = 48;            // as contention.cpp
constexpr double kMaxUtilisation = 0.999;  // as contention.cpp
constexpr double kNoCore = 1e6;            // the largest slowdown the engine accepts: cannot run

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

// "a=ncf, b=dlrm_d" or "ncf, dlrm_d" (a profile model named as its Table I model).
std::map<std::string, ModelProfile> parse_models(const std::string& text) {
  std::map<std::string, ModelProfile> out;
  std::stringstream entries(text);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    entry = trim(entry);
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    const std::string name = trim(entry.substr(0, eq));
    const std::string table1 = eq == std::string::npos ? name : trim(entry.substr(eq + 1));
    if (name.empty() || table1.empty())
      throw ValueError(str("hera_contention: models entry '", entry, "' is not 'profile_model=table1_model'"));
    ModelProfile p = table1_model(table1);  // KeyError naming the Table I models
    p.name = name;
    if (!out.emplace(name, std::move(p)).second)
      throw ValueError(str("hera_contention: models names '", name, "' twice"));
  }
  return out;
}

// What the contention model needs of one model on the machine.
struct Tenant {
  const ModelProfile* profile = nullptr;
  int workers = 0;  // live instances holding it
  int ways = 0;     // the sum of their llc_ways knobs
  double miss = 1, traffic_mb = 0, cpu_ms = 0, alone_ms = 1;
};

// A number of its own for every model made, so that a thread's cached lookups are never another's.
std::uint64_t next_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

ContentionInterference::ContentionInterference(NodeSpec node, std::map<std::string, ModelProfile> models,
                                               std::string spec)
    : node_(std::move(node)), models_(std::move(models)), spec_(std::move(spec)), id_(next_id()) {
  node_.validate();
  for (const auto& [name, m] : models_) m.validate();
}

const ModelProfile& ContentionInterference::profile_of(const sched::ClusterView& view, sched::ModelId model) const {
  const auto& names = view.profile().models();
  if (model < 0 || static_cast<std::size_t>(model) >= names.size())
    throw ValueError(str("hera_contention: model id ", model, " is not the profile's"));
  const std::string& name = names[static_cast<std::size_t>(model)];
  if (const auto it = models_.find(name); it != models_.end()) return it->second;
  try {
    return table1_model(name);
  } catch (const KeyError&) {
    throw KeyError(str("hera_contention: the profile's model '", name, "' is not a Table I model; map it with models='",
                       name, "=<table1 model>'"));
  }
}

double ContentionInterference::slowdown(const sched::ClusterView& view, sched::WorkerId worker,
                                        std::span<const sched::WorkerId> co_runners) const {
  std::vector<sched::WorkerId> running(co_runners.begin(), co_runners.end());
  running.push_back(worker);
  std::sort(running.begin(), running.end());
  std::vector<double> out(running.size());
  slowdowns(view, running, out);
  const auto at = std::find(running.begin(), running.end(), worker) - running.begin();
  return out[static_cast<std::size_t>(at)];
}

void ContentionInterference::slowdowns(const sched::ClusterView& view, std::span<const sched::WorkerId> running,
                                       std::span<double> out) const {
  if (running.empty()) return;
  const sched::MachineId machine = view.machine(running[0]);
  const sched::MachineResources declared = view.machine_resources(machine);
  const int total_ways = declared.llc_ways > 0 ? declared.llc_ways : node_.llc_ways;
  const double way_mb = node_.llc_mb / total_ways;
  const double bandwidth = declared.memory_bw_gbps > 0 ? declared.memory_bw_gbps : node_.mem_bandwidth_gbs;

  // Scratch reused by the calls of one thread (the engine calls this at every batch start and
  // end), and each profile model's Hera profile and time alone, looked up once per profile.
  thread_local struct {
    std::vector<sched::ModelId> ids;
    std::vector<Tenant> tenants;
    std::vector<double> cpu;
    std::vector<const Tenant*> of;
    std::uint64_t owner = 0;  // the model (id_) the lookups below are for, by profile model id
    std::vector<std::string> names;
    std::vector<const ModelProfile*> by_model;
    std::vector<double> alone_ms;
  } scratch;
  const auto& names = view.profile().models();
  if (scratch.owner != id_ || scratch.names.size() != names.size()) {
    scratch.owner = id_;
    scratch.names.assign(names.size(), std::string());
    scratch.by_model.assign(names.size(), nullptr);
    scratch.alone_ms.assign(names.size(), 0.0);
  }
  auto& ids = scratch.ids;
  auto& tenants = scratch.tenants;
  ids.clear();
  tenants.clear();
  auto tenant_of = [&](sched::ModelId m) -> Tenant& {
    const auto it = std::find(ids.begin(), ids.end(), m);
    if (it != ids.end()) return tenants[static_cast<std::size_t>(it - ids.begin())];
    if (m < 0 || static_cast<std::size_t>(m) >= scratch.by_model.size())
      throw ValueError(str("hera_contention: model id ", m, " is not the profile's"));
    const auto k = static_cast<std::size_t>(m);
    if (scratch.by_model[k] == nullptr || scratch.names[k] != names[k]) {  // another run's profile
      scratch.names[k] = names[k];
      scratch.by_model[k] = &profile_of(view, m);
      scratch.alone_ms[k] = scratch.by_model[k]->alone_latency_ms(node_.llc_mb, node_.core_bandwidth_gbs);
    }
    ids.push_back(m);
    tenants.push_back(Tenant{scratch.by_model[k]});
    tenants.back().alone_ms = scratch.alone_ms[k];
    return tenants.back();
  };
  int held_ways = 0, held_cores = 0;
  for (const sched::WorkerId w : view.instances(machine)) {
    if (view.status(w) == sched::WorkerStatus::Stopped) continue;
    const std::int64_t ways = std::max<std::int64_t>(0, view.config(w, sched::kLlcWaysKnob, 0));
    held_ways += static_cast<int>(ways);
    held_cores += static_cast<int>(std::max<std::int64_t>(0, view.config(w, sched::kCoresKnob, 0)));
    // An instance running a batch counts for the model it runs; an idle one for each it holds.
    const sched::ModelId now = view.running_model(w);
    if (now >= 0) {
      Tenant& t = tenant_of(now);
      ++t.workers;
      t.ways += static_cast<int>(ways);
    } else {
      for (const sched::ModelId m : view.models(w)) {
        Tenant& t = tenant_of(m);
        ++t.workers;
        t.ways += static_cast<int>(ways);
      }
    }
  }
  for (const sched::WorkerId w : running)
    tenant_of(view.running_model(w));  // a batch of a model no live instance holds
  // Models without ways share the ways nobody holds, their working sets together.
  const int free_ways = std::max(0, total_ways - held_ways);
  double shared_ws = 0;
  for (const auto& t : tenants)
    if (t.ways == 0) shared_ws += t.profile->shared_ws_mb + std::max(1, t.workers) * t.profile->private_ws_mb;
  for (auto& t : tenants) {
    const ModelProfile& p = *t.profile;
    const int ways = std::min(t.ways, total_ways);
    const double working_set = p.shared_ws_mb + std::max(1, t.workers) * p.private_ws_mb;
    t.miss = ways > 0 ? std::exp(-ways * way_mb / working_set)
                      : (free_ways > 0 ? std::exp(-free_ways * way_mb / shared_ws) : 1.0);
    t.traffic_mb = p.sparse_mb + p.dense_mb * t.miss;
    t.cpu_ms = p.compute_ms * (1 + p.cache_stall * t.miss);
  }

  // CPU: batches on instances without cores share the cores no instance holds.
  auto& cpu = scratch.cpu;
  cpu.assign(running.size(), 1.0);
  if (declared.cores > 0) {
    int pooled = 0;
    for (const sched::WorkerId w : running) pooled += view.config(w, sched::kCoresKnob, 0) <= 0;
    const int pool = declared.cores - held_cores;
    for (std::size_t i = 0; i < running.size(); ++i) {
      if (view.config(running[i], sched::kCoresKnob, 0) > 0) continue;
      cpu[i] = pool <= 0 ? kNoCore : std::max(1.0, static_cast<double>(pooled) / pool);
    }
  }
  auto& of = scratch.of;
  of.resize(running.size());
  for (std::size_t i = 0; i < running.size(); ++i) of[i] = &tenant_of(view.running_model(running[i]));
  // The batches that draw alike (one model, one CPU factor) as one term of the sum, so that the
  // bisection costs a few terms whatever the number of batches.
  struct Term {
    const Tenant* tenant;
    double cpu, count;
  };
  std::vector<Term> terms;
  for (std::size_t i = 0; i < running.size(); ++i) {
    if (cpu[i] >= kNoCore) continue;
    const auto same = [&](const Term& t) { return t.tenant == of[i] && t.cpu == cpu[i]; };
    if (const auto it = std::find_if(terms.begin(), terms.end(), same); it != terms.end()) {
      it->count += 1;
    } else {
      terms.push_back({of[i], cpu[i], 1});
    }
  }

  // DRAM: the fixed point of what the running batches draw (contention.cpp's bisection).
  // rho^p by squaring when p is a whole number (the knee is 8): the bisection's cost is its powers.
  const double knee = node_.bandwidth_knee;
  const bool whole = knee == std::floor(knee) && knee >= 1 && knee <= 64;
  const auto power = [&](double rho) {
    if (!whole) return std::pow(rho, knee);
    double out = 1, base = rho;
    for (auto k = static_cast<unsigned>(knee); k != 0; k >>= 1) {
      if (k & 1U) out *= base;
      base *= base;
    }
    return out;
  };
  const auto time_at = [&](const Tenant& t, double rho) {
    return t.cpu_ms + t.traffic_mb / node_.core_bandwidth_gbs / (1.0 - power(rho));
  };
  const auto drawn = [&](double rho) {
    double gbs = 0;  // MB per ms
    for (const Term& t : terms) gbs += t.count * t.tenant->traffic_mb / (t.cpu * time_at(*t.tenant, rho));
    return gbs / bandwidth;
  };
  double lo = 0, hi = kMaxUtilisation;
  if (drawn(0) <= 0) {
    hi = 0;
  } else {
    for (int k = 0; k < kBisections; ++k) {
      const double mid = 0.5 * (lo + hi);
      (drawn(mid) > mid ? lo : hi) = mid;
    }
  }
  for (std::size_t i = 0; i < running.size(); ++i)
    out[i] = cpu[i] >= kNoCore ? kNoCore : std::min(kNoCore, cpu[i] * time_at(*of[i], hi) / of[i]->alone_ms);
}

void register_contention_model(cluster::InterferenceModelRegistry& registry) {
  registry.add(
      {"hera_contention",
       "Hera's contention model of a CPU node (docs/hera.md): a batch of model M runs f x t_M / t_alone_M times "
       "slower, t_M the service time its machine's partition gives it now (miss ratio of its working set in the "
       "LLC ways its instances hold, the DRAM queue of every batch running on the machine), t_alone_M its time "
       "alone on the whole node (the profile's service time), f > 1 for an instance without a core of its own "
       "(the 'cores' knob) sharing the cores nobody holds. The machine's cores, llc_ways and memory_bw_gbps "
       "override the node's.",
       {string_param("node", "xeon-gold-6242", "the node: Table II's Xeon Gold 6242 (the only preset in C++)"),
        string_param("models", "",
                     "the profile's models as Table I models, 'mine=ncf, other=dlrm_d' or 'ncf, dlrm_d' ('': the "
                     "profile's names are Table I names)"),
        float_param("llc_mb", 0, 0, 1e6, "the LLC's capacity, MB (0: the node's, 22)"),
        float_param("mem_bandwidth_gbs", 0, 0, 1e6,
                    "the DRAM bandwidth, GB/s, when the machine declares none (0: the node's, 128)"),
        float_param("core_bandwidth_gbs", 0, 0, 1e6, "the DRAM bandwidth one core draws alone, GB/s (0: 20)"),
        float_param("bandwidth_knee", 0, 0, 1e3, "the DRAM queue's sharpness p in 1 / (1 - rho^p) (0: 8)")},
       [](const Params& p) -> std::shared_ptr<cluster::InterferenceModel> {
         if (p.get_string("node") != "xeon-gold-6242")
           throw KeyError(str("hera_contention: node='", p.get_string("node"), "'; known: xeon-gold-6242"));
         NodeSpec node = baseline_node();
         if (p.get_float("llc_mb") > 0) node.llc_mb = p.get_float("llc_mb");
         if (p.get_float("mem_bandwidth_gbs") > 0) node.mem_bandwidth_gbs = p.get_float("mem_bandwidth_gbs");
         if (p.get_float("core_bandwidth_gbs") > 0) node.core_bandwidth_gbs = p.get_float("core_bandwidth_gbs");
         if (p.get_float("bandwidth_knee") > 0) node.bandwidth_knee = p.get_float("bandwidth_knee");
         const std::string spec =
             str("hera_contention(node='", p.get_string("node"), "', models='", p.get_string("models"),
                 "', llc_mb=", node.llc_mb, ", mem_bandwidth_gbs=", node.mem_bandwidth_gbs,
                 ", core_bandwidth_gbs=", node.core_bandwidth_gbs, ", bandwidth_knee=", node.bandwidth_knee, ")");
         return std::make_shared<ContentionInterference>(node, parse_models(p.get_string("models")), spec);
       }});
}

}  // namespace servelab::hera
