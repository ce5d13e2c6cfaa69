// servelab._core.hera: Hera's node model, contention model, lookup tables, Algorithm 1 (affinity),
// the node unit's pair allocation and Algorithm 2 (cluster scheduling) with its baselines
// (servelab.hera wraps it). Long calls release the GIL and stop on Ctrl-C.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_owner.hpp"
#include "seed.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/systems/hera/node_sim.hpp"
#include "servelab/systems/hera/offline.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::hera;

py::array_t<double> grid(const std::vector<double>& values, int rows, int cols) {
  return to_numpy(std::vector<double>(values), {rows, cols});
}

py::dict colocation_dict(const Colocation& c) {
  py::dict d;
  d["workers_a"] = c.workers_a;
  d["workers_b"] = c.workers_b;
  d["ways_a"] = c.ways_a;
  d["ways_b"] = c.ways_b;
  d["qps_a"] = c.qps_a;
  d["qps_b"] = c.qps_b;
  d["load_a"] = c.load_a;
  d["load_b"] = c.load_b;
  d["emu"] = c.emu;
  d["bandwidth_utilisation"] = c.bandwidth_utilisation;
  d["feasible"] = c.feasible;
  d["reason"] = c.reason;
  return d;
}

py::dict scalability_dict(const Scalability& s) {
  py::dict d;
  d["slope"] = s.slope;
  d["high"] = s.high;
  d["useful_workers"] = s.useful_workers;
  return d;
}

// Tenants from Python: a list of (ModelProfile, workers, ways).
std::vector<Tenant> tenants_of(const std::vector<py::tuple>& items, std::vector<ModelProfile>& keep) {
  keep.clear();
  keep.reserve(items.size());
  std::vector<Tenant> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].size() != 3)
      throw ValueError(str("tenants[", i, "] must be (ModelProfile, workers, ways), got ", items[i].size(), " items"));
    keep.push_back(items[i][0].cast<ModelProfile>());
    out.push_back(
        {nullptr, to_int<int>(py::object(items[i][1]), "workers"), to_int<int>(py::object(items[i][2]), "ways")});
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].model = &keep[i];
  return out;
}

py::dict plan_dict(ClusterPlan&& plan) {
  const std::size_t s = plan.servers.size();
  std::vector<std::int32_t> a(s), b(s);
  std::vector<double> qa(s), qb(s), emu(s);
  for (std::size_t i = 0; i < s; ++i) {
    a[i] = plan.servers[i].a;
    b[i] = plan.servers[i].b;
    qa[i] = plan.servers[i].qps_a;
    qb[i] = plan.servers[i].qps_b;
    emu[i] = plan.servers[i].emu;
  }
  py::dict d;
  d["emu"] = plan.emu();
  d["model_a"] = to_numpy(std::move(a));
  d["model_b"] = to_numpy(std::move(b));
  d["qps_a"] = to_numpy(std::move(qa));
  d["qps_b"] = to_numpy(std::move(qb));
  d["server_emu"] = to_numpy(std::move(emu));
  d["serviced"] = to_numpy(std::move(plan.serviced));
  d["feasible"] = plan.feasible;
  d["reason"] = plan.reason;
  return d;
}

std::vector<double> vector_of(const DoubleArray& array, const char* name) {
  const auto span = as_span(array, name);
  return {span.begin(), span.end()};
}

std::vector<double> matrix_of(const DoubleArray& array, const char* name, std::size_t n) {
  if (array.ndim() != 2 || static_cast<std::size_t>(array.shape(0)) != n ||
      static_cast<std::size_t>(array.shape(1)) != n)
    throw ValueError(str(name, " must have shape (", n, ", ", n, "), got ", shape_of(array)));
  return {array.data(), array.data() + array.size()};
}

void bind_node_and_models(py::module_& m) {
  py::class_<NodeSpec>(m, "NodeSpec", "A CPU server node: cores, LLC ways, memory bandwidth and capacity.")
      .def(py::init<>())
      .def_readwrite("name", &NodeSpec::name)
      .def_readwrite("cores", &NodeSpec::cores)
      .def_readwrite("llc_ways", &NodeSpec::llc_ways)
      .def_readwrite("llc_mb", &NodeSpec::llc_mb)
      .def_readwrite("mem_bandwidth_gbs", &NodeSpec::mem_bandwidth_gbs)
      .def_readwrite("mem_capacity_gb", &NodeSpec::mem_capacity_gb)
      .def_readwrite("core_bandwidth_gbs", &NodeSpec::core_bandwidth_gbs)
      .def_readwrite("bandwidth_knee", &NodeSpec::bandwidth_knee)
      .def_property_readonly("way_mb", &NodeSpec::way_mb)
      .def("validate", &NodeSpec::validate);
  m.def("baseline_node", &baseline_node, "Table II's node (one Xeon Gold 6242 socket).");

  py::class_<ModelProfile>(m, "ModelProfile", "One recommendation model's worker profile (ms per query, MB, GB).")
      .def(py::init<>())
      .def_readwrite("name", &ModelProfile::name)
      .def_readwrite("sla_ms", &ModelProfile::sla_ms)
      .def_readwrite("memory_gb", &ModelProfile::memory_gb)
      .def_readwrite("compute_ms", &ModelProfile::compute_ms)
      .def_readwrite("cache_stall", &ModelProfile::cache_stall)
      .def_readwrite("shared_ws_mb", &ModelProfile::shared_ws_mb)
      .def_readwrite("private_ws_mb", &ModelProfile::private_ws_mb)
      .def_readwrite("sparse_mb", &ModelProfile::sparse_mb)
      .def_readwrite("dense_mb", &ModelProfile::dense_mb)
      .def_readwrite("query_items", &ModelProfile::query_items)
      .def("validate", &ModelProfile::validate)
      .def("alone_latency_ms", &ModelProfile::alone_latency_ms, py::arg("llc_mb"), py::arg("core_bandwidth_gbs"));
  m.def("table1_models", &table1_models, "The eight models of Table I.");
  m.def("table1_model", &table1_model, py::arg("name"));
}

void bind_contention(py::module_& m) {
  m.def(
      "latency_bounded_qps",
      [](const IntArg& workers, double service_ms, double sla_ms, double percentile) {
        return latency_bounded_qps(to_int<int>(workers, "workers", 1, 1 << 20), service_ms, sla_ms, percentile);
      },
      py::arg("workers"), py::arg("service_ms"), py::arg("sla_ms"), py::arg("percentile") = 0.95);
  m.def("max_workers", &max_workers, py::arg("node"), py::arg("model"));
  m.def(
      "evaluate",
      [](const NodeSpec& node, const std::vector<py::tuple>& items, double percentile, bool shared_llc) {
        std::vector<ModelProfile> keep;
        const auto tenants = tenants_of(items, keep);
        const auto load = evaluate(node, tenants, percentile, shared_llc);
        py::list out;
        for (const auto& t : load.tenants) {
          py::dict d;
          d["qps"] = t.qps;
          d["service_ms"] = t.service_ms;
          d["miss_ratio"] = t.miss_ratio;
          d["traffic_mb"] = t.traffic_mb;
          d["bandwidth_gbs"] = t.bandwidth_gbs;
          out.append(d);
        }
        py::dict d;
        d["tenants"] = out;
        d["bandwidth_utilisation"] = load.bandwidth_utilisation;
        return d;
      },
      py::arg("node"), py::arg("tenants"), py::arg("percentile") = 0.95, py::arg("shared_llc") = false,
      "Latency-bounded QPS of co-located tenants (model, workers, ways); shared_llc: no LLC "
      "partitioning, the ways ignored and the whole LLC shared.");
}

void bind_evaluate_at(py::module_& m) {
  m.def(
      "evaluate_at",
      [](const NodeSpec& node, const std::vector<py::tuple>& items, const std::vector<double>& arrival_qps,
         double percentile) {
        std::vector<ModelProfile> keep;
        const auto tenants = tenants_of(items, keep);
        py::list out;
        for (const auto& t : evaluate_at(node, tenants, arrival_qps, percentile)) {
          py::dict d;
          d["service_ms"] = t.service_ms;
          d["capacity_qps"] = t.capacity_qps;
          d["served_qps"] = t.served_qps;
          d["p95_ms"] = t.p95_ms;
          out.append(d);
        }
        return out;
      },
      py::arg("node"), py::arg("tenants"), py::arg("arrival_qps"), py::arg("percentile") = 0.95,
      "Tenants (ModelProfile, workers, ways) under given arrival rates: service time, capacity, p95.");
}

void bind_tables(py::module_& m) {
  py::class_<ModelTables>(m, "ModelTables", "QPS and DRAM bandwidth for every (workers, LLC ways), model alone.")
      .def_readonly("name", &ModelTables::name)
      .def_readonly("cores", &ModelTables::cores)
      .def_readonly("ways", &ModelTables::ways)
      .def_readonly("max_workers", &ModelTables::max_workers)
      .def_property_readonly("qps", [](const ModelTables& t) { return grid(t.qps, t.cores + 1, t.ways + 1); })
      .def_property_readonly("bandwidth",
                             [](const ModelTables& t) { return grid(t.bandwidth, t.cores + 1, t.ways + 1); })
      .def_property_readonly("isolated_qps", &ModelTables::isolated_qps)
      .def_property_readonly("half_workers", &ModelTables::half_workers);
  m.def(
      "profile_model",
      [](const NodeSpec& node, const ModelProfile& model) {
        return run_long([&] { return profile_model(node, model); });
      },
      py::arg("node"), py::arg("model"));
  m.def(
      "classify", [](const ModelTables& t, double threshold) { return scalability_dict(classify(t, threshold)); },
      py::arg("tables"), py::arg("threshold") = 0.5);
  m.def(
      "find_number_of_workers",
      [](const ModelTables& t, const IntArg& ways, double traffic_qps, const IntArg& limit) {
        return find_number_of_workers(t, to_int<int>(ways, "ways", 1, t.ways), traffic_qps,
                                      to_int<int>(limit, "limit", 0, 1 << 20));
      },
      py::arg("tables"), py::arg("ways"), py::arg("traffic_qps"), py::arg("limit"));
}

void bind_affinity(py::module_& m) {
  m.def(
      "co_location_affinity",
      [](const ModelTables& a, const ModelTables& b, double system_bandwidth_gbs) {
        const auto x = co_location_affinity(affinity_input(a), affinity_input(b), system_bandwidth_gbs);
        py::dict d;
        d["llc"] = x.llc;
        d["dram"] = x.dram;
        d["system"] = x.system;
        d["ways_a"] = x.ways_a;
        return d;
      },
      py::arg("a"), py::arg("b"), py::arg("system_bandwidth_gbs"));
  m.def(
      "affinity_matrix",
      [](const DoubleArray& qps_by_ways, const DoubleArray& bandwidth_gbs, double system_bandwidth_gbs) {
        if (qps_by_ways.ndim() != 2)
          throw ValueError(str("qps_by_ways must be 2-D [model, ways + 1], got shape ", shape_of(qps_by_ways)));
        const auto bw = as_span(bandwidth_gbs, "bandwidth_gbs");
        const auto n = static_cast<std::size_t>(qps_by_ways.shape(0));
        const auto cols = static_cast<std::size_t>(qps_by_ways.shape(1));
        if (bw.size() != n)
          throw ValueError(str("bandwidth_gbs has ", bw.size(), " entries, qps_by_ways has ", n, " models"));
        std::vector<AffinityInput> in(n);
        for (std::size_t i = 0; i < n; ++i) {
          in[i].qps_by_ways.assign(qps_by_ways.data() + i * cols, qps_by_ways.data() + (i + 1) * cols);
          in[i].bandwidth_gbs = bw[i];
        }
        auto out = run_long([&] { return affinity_matrix(in, system_bandwidth_gbs); });
        return to_numpy(std::move(out), {static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(n)});
      },
      py::arg("qps_by_ways"), py::arg("bandwidth_gbs"), py::arg("system_bandwidth_gbs"),
      "Algorithm 1 for every pair: qps_by_ways[i][k] is model i's QPS with half the cores and k ways "
      "(column 0 unused), bandwidth_gbs[i] its DRAM bandwidth with half the cores and every way.");
}

void bind_cluster(py::module_& m) {
  m.def(
      "schedule_cluster",
      [](const DoubleArray& isolated_qps, const std::vector<bool>& high, const DoubleArray& affinity,
         const DoubleArray& pair_qps, const DoubleArray& target_qps, const std::string& selection,
         const py::object& seed, const IntArg& max_servers) {
        ClusterTables t;
        t.isolated_qps = vector_of(isolated_qps, "isolated_qps");
        t.n = static_cast<int>(t.isolated_qps.size());
        t.high.assign(high.begin(), high.end());
        t.affinity = matrix_of(affinity, "affinity", t.isolated_qps.size());
        t.pair_qps = matrix_of(pair_qps, "pair_qps", t.isolated_qps.size());
        const auto target = vector_of(target_qps, "target_qps");
        const auto sel = parse_selection(selection);
        const auto s = to_seed(seed);
        const auto limit = to_int<std::int64_t>(max_servers, "max_servers", 0, std::int64_t{1} << 40);
        auto plan = run_long([&] { return schedule_cluster(t, target, sel, s, limit); });
        return plan_dict(std::move(plan));
      },
      py::arg("isolated_qps"), py::arg("high"), py::arg("affinity"), py::arg("pair_qps"), py::arg("target_qps"),
      py::arg("selection") = "hera", py::arg("seed") = 0, py::arg("max_servers") = 100000);
}

void bind_offline(py::module_& m) {
  py::class_<Offline>(m, "Offline", "Every model profiled, classified, paired; the affinity table.")
      .def_readonly("node", &Offline::node)
      .def_readonly("models", &Offline::models)
      .def_readonly("tables", &Offline::tables)
      .def_property_readonly("scalability",
                             [](const Offline& o) {
                               py::list out;
                               for (const auto& s : o.scalability) out.append(scalability_dict(s));
                               return out;
                             })
      .def_property_readonly("affinity",
                             [](const Offline& o) {
                               const int n = static_cast<int>(o.models.size());
                               return grid(o.affinity, n, n);
                             })
      .def_property_readonly(
          "affinity_llc_split",
          [](const Offline& o) {
            // The LLC term's best split per pair (Algorithm 1, ways of the row model).
            const std::size_t n = o.models.size();
            std::vector<std::int32_t> out(n * n);
            for (std::size_t i = 0; i < n; ++i)
              for (std::size_t j = 0; j < n; ++j)
                out[i * n + j] =
                    co_location_affinity(o.affinity_inputs[i], o.affinity_inputs[j], o.node.mem_bandwidth_gbs).ways_a;
            return to_numpy(std::move(out), {static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(n)});
          })
      .def(
          "pair",
          [](const Offline& o, const IntArg& i, const IntArg& j) {
            const int n = static_cast<int>(o.models.size());
            const int a = to_int<int>(i, "i", 0, n - 1), b = to_int<int>(j, "j", 0, n - 1);
            return colocation_dict(o.pairs[static_cast<std::size_t>(a) * n + b]);
          },
          py::arg("i"), py::arg("j"), "Models i and j on one server as Hera starts it (i == j: alone).")
      .def("cluster_tables", [](const Offline& o) {
        const auto t = o.cluster();
        py::dict d;
        d["isolated_qps"] = to_numpy(std::vector<double>(t.isolated_qps));
        py::list high;
        for (auto h : t.high) high.append(h != 0);
        d["high"] = high;
        d["affinity"] = grid(t.affinity, t.n, t.n);
        d["pair_qps"] = grid(t.pair_qps, t.n, t.n);
        return d;
      });
  m.def(
      "build_offline",
      [](const NodeSpec& node, const std::vector<ModelProfile>& models, double threshold) {
        return run_long([&] { return build_offline(node, models, threshold); });
      },
      py::arg("node"), py::arg("models"), py::arg("threshold") = 0.5);
}

py::dict run_dict(NodeRun&& run) {
  py::dict d;
  d["time_s"] = to_numpy(std::move(run.time_s));
  for (int m = 0; m < 2; ++m) {
    const char* side = m == 0 ? "_a" : "_b";
    d[py::str(std::string("tail_over_sla") + side)] = to_numpy(std::move(run.tail_over_sla[m]));
    d[py::str(std::string("workers") + side)] =
        to_numpy(std::vector<std::int32_t>(run.workers[m].begin(), run.workers[m].end()));
    d[py::str(std::string("ways") + side)] =
        to_numpy(std::vector<std::int32_t>(run.ways[m].begin(), run.ways[m].end()));
    d[py::str(std::string("arrival_qps") + side)] = to_numpy(std::move(run.arrival_qps[m]));
    d[py::str(std::string("served_qps") + side)] = to_numpy(std::move(run.served_qps[m]));
    d[py::str(std::string("violations") + side)] = run.violations[m];
  }
  return d;
}

void bind_rmu(py::module_& m) {
  m.def(
      "simulate_node",
      [](const NodeSpec& node, const ModelProfile& a, const ModelTables& ta, const ModelProfile& b,
         const ModelTables& tb, const std::string& controller, const DoubleArray& loads, double window_s,
         const std::vector<py::object>& workers, const std::vector<py::object>& ways, double lower_slack,
         double upper_slack) {
        if (loads.ndim() != 2 || loads.shape(1) != 2)
          throw ValueError(str("loads must have shape (windows, 2), got ", shape_of(loads)));
        if (workers.size() != 2 || ways.size() != 2) throw ValueError("workers and ways must each have 2 entries");
        Allocation start;
        for (int i = 0; i < 2; ++i) {
          start.workers[i] = to_int<int>(workers[i], "workers", 1, node.cores);
          start.ways[i] = to_int<int>(ways[i], "ways", 1, node.llc_ways);
        }
        const std::span<const double> values(loads.data(), static_cast<std::size_t>(loads.size()));
        auto run = run_long([&] {
          auto ctl = make_controller(controller, node, ta, a.sla_ms, tb, b.sla_ms, {upper_slack, lower_slack});
          return simulate_node(node, a, b, *ctl, values, window_s, start);
        });
        return run_dict(std::move(run));
      },
      py::arg("node"), py::arg("a"), py::arg("tables_a"), py::arg("b"), py::arg("tables_b"),
      py::arg("controller") = "hera", py::arg("loads"), py::arg("window_s") = 1.0, py::arg("workers"), py::arg("ways"),
      py::arg("lower_slack") = 0.8, py::arg("upper_slack") = 1.0,
      "Two models on one node under a resource manager ('hera' = Algorithm 3, 'parties'), window by "
      "window; loads[k] are the two arrival rates (queries/s) of window k.");
  m.def(
      "max_partner_load",
      [](const NodeSpec& node, const ModelProfile& a, const ModelTables& ta, const ModelProfile& b,
         const ModelTables& tb, const std::string& controller, double load_a, const IntArg& windows,
         const IntArg& settle, double tolerance) {
        const int w = to_int<int>(windows, "windows", 1, 1 << 20);
        const int s = to_int<int>(settle, "settle", 1, 1 << 20);
        return run_long([&] { return max_partner_load(node, a, ta, b, tb, controller, load_a, w, s, tolerance); });
      },
      py::arg("node"), py::arg("a"), py::arg("tables_a"), py::arg("b"), py::arg("tables_b"),
      py::arg("controller") = "hera", py::arg("load_a") = 0.5, py::arg("windows") = 60, py::arg("settle") = 20,
      py::arg("tolerance") = 0.5,
      "Fig. 12: the largest fraction of B's max load the manager sustains with A at load_a of its own.");
}

}  // namespace

void init_hera(py::module_& m) {
  bind_node_and_models(m);
  bind_contention(m);
  bind_evaluate_at(m);
  bind_tables(m);
  bind_affinity(m);
  bind_cluster(m);
  bind_offline(m);
  bind_rmu(m);
}

}  // namespace servelab::bindings
