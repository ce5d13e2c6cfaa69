// servelab._core.recsys: recommendation models (descriptions, weights, inputs, the reference
// backend and the backend table the _onednn and _cuda modules join). The Pythonic surface is
// python/servelab/recsys.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_matrix.hpp"
#include "recsys_plugin.hpp"
#include "servelab/exec/recsys/backends.hpp"
#include "servelab/exec/recsys/inputs.hpp"
#include "servelab/exec/recsys/machine_peaks.hpp"
#include "servelab/exec/recsys/model.hpp"
#include "servelab/exec/recsys/spec.hpp"
#include "servelab/exec/recsys/weights.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

using namespace exec::recsys;
using IndexArray = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

Batch batch_view(const Spec& spec, const FloatArray& dense, const IndexArray& sparse) {
  if (dense.ndim() != 2) {
    throw ValueError(
        str("recsys model ", spec.name, ": dense must be 2-D [batch, ", spec.dense, "], got shape ", shape_of(dense)));
  }
  if (sparse.ndim() != 2) {
    throw ValueError(str("recsys model ", spec.name, ": sparse must be 2-D [batch, ", spec.lookups_per_sample(),
                         "], got shape ", shape_of(sparse)));
  }
  return {{dense.data(), dense.shape(0), dense.shape(1)}, sparse.data(), sparse.shape(0), sparse.shape(1)};
}

py::tuple inputs_to_python(Inputs&& in) {
  const std::int64_t rows = in.dense.rows, cols = in.sparse_cols;
  return py::make_tuple(to_numpy(std::move(in.dense)), to_numpy(std::move(in.sparse), {rows, cols}));
}

py::dict export_weights(const RecsysModel& model) {
  py::dict out;
  for (const auto& t : const_cast<Weights&>(model.weights()).named()) {
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    py::array_t<float> array(shape);
    std::copy_n(t.data, t.size, array.mutable_data());
    out[py::str(t.name)] = std::move(array);
  }
  return out;
}

Weights import_weights(const Spec& spec, const py::dict& arrays) {
  Weights w = Weights::zeros(spec);
  auto named = w.named();
  for (const auto& t : named) {
    if (!arrays.contains(t.name)) {
      throw KeyError(str("recsys model ", spec.name, ": weights has no '", t.name, "'"));
    }
    const auto array = py::cast<FloatArray>(arrays[py::str(t.name)]);
    std::vector<std::int64_t> shape(array.shape(), array.shape() + array.ndim());
    if (shape != t.shape) {
      std::string want;
      for (auto d : t.shape) want += str(want.empty() ? "" : ", ", d);
      throw ValueError(str("recsys model ", spec.name, ": weights['", t.name, "'] has shape ", shape_of(array),
                           ", expected (", want, t.shape.size() == 1 ? ",)" : ")"));
    }
    std::copy_n(array.data(), t.size, t.data);
  }
  for (const auto& [key, value] : arrays) {
    const auto name = py::cast<std::string>(key);
    if (std::none_of(named.begin(), named.end(), [&](const auto& t) { return t.name == name; })) {
      throw ValueError(str("recsys model ", spec.name, ": weights['", name, "'] is not a weight of this model"));
    }
  }
  return w;
}

std::vector<IndexDistribution> distributions(const py::object& value) {
  std::vector<IndexDistribution> out;
  if (py::isinstance<py::str>(value)) {
    out.push_back(parse_distribution(py::cast<std::string>(value), "distribution"));
    return out;
  }
  std::size_t i = 0;
  for (const auto& item : value) {
    out.push_back(parse_distribution(py::cast<std::string>(item), str("distribution[", i++, "]")));
  }
  return out;
}

py::list features_to_python(const Spec& s) {
  py::list out;
  for (const auto& f : s.features) {
    py::dict d;
    d["name"] = f.name;
    d["table"] = f.table;
    d["lookups"] = f.lookups;
    d["sequence"] = f.sequence;
    out.append(d);
  }
  return out;
}

py::list tables_to_python(const Spec& s) {
  py::list out;
  for (const auto& t : s.tables) out.append(py::make_tuple(t.name, t.rows));
  return out;
}

// Backend modules join _core's own table through this record, so every backend lands in one place.
const RecsysPluginRecord backend_plugin_table{
    .abi_version = kRecsysBackendAbiVersion,
    .join = [](const std::string& name, ModelMaker maker, const std::string& module) {
      add_backend(name, maker, module);
    }};

}  // namespace

void init_recsys(py::module_& m) {
  m.def("list_models", &model_names, "The built-in recommendation models.");
  m.def("backend_names", &backend_names, "Every backend a recommendation model can run on.");
  m.def(
      "loaded_backends",
      [] {
        std::map<std::string, std::string> out;
        for (const auto& name : loaded_backends()) out[name] = backend_origin(name);
        return out;
      },
      "The backends loaded so far, by name, and the module each came from (the others load on first use).");

  py::class_<Spec>(m, "Spec", "The architecture of a recommendation model (see docs/recsys.md).")
      .def_readonly("name", &Spec::name)
      .def_readonly("doc", &Spec::doc)
      .def_readonly("dense", &Spec::dense)
      .def_readonly("bottom", &Spec::bottom)
      .def_readonly("dim", &Spec::dim)
      .def_property_readonly("tables", &tables_to_python, "(name, rows) per table")
      .def_property_readonly("features", &features_to_python, "the sparse features, in input column order")
      .def_property_readonly("interaction", [](const Spec& s) { return std::string(to_string(s.interaction)); })
      .def_property_readonly("sequence_op", [](const Spec& s) { return std::string(to_string(s.sequence_op)); })
      .def_readonly("query_feature", &Spec::query_feature)
      .def_readonly("top", &Spec::top)
      .def_readonly("tasks", &Spec::tasks)
      .def_readonly("gmf", &Spec::gmf, "NCF's GMF branch: the two pooled features multiplied element-wise (or [])")
      .def_readonly("predict", &Spec::predict, "the prediction layers over [GMF, top output] (NCF; or [])")
      .def_property_readonly("lookups_per_sample", &Spec::lookups_per_sample)
      .def_property_readonly("interaction_width", &Spec::interaction_width)
      .def_property_readonly("outputs", &Spec::outputs)
      .def_property_readonly("table_parameters", &Spec::table_parameters)
      .def_property_readonly("mlp_macs_per_sample", &Spec::mlp_macs_per_sample)
      .def("__repr__", [](const Spec& s) {
        return str("recsys.Spec('", s.name, "', tables=", s.tables.size(), ", table_parameters=", s.table_parameters(),
                   ")");
      });

  m.def(
      "spec",
      [](const std::string& name, double scale, const std::string& interaction) {
        Spec s = scaled(builtin(name), scale);
        if (!interaction.empty()) s = with_interaction(std::move(s), parse_interaction(interaction));
        return s;
      },
      py::arg("name"), py::arg("scale") = 1.0, py::arg("interaction") = "",
      "A built-in model's description, tables scaled to ceil(rows * scale) rows.");

  py::class_<RecsysModel, std::shared_ptr<RecsysModel>>(m, "Model", "A recommendation model on one backend.")
      .def(
          "run",
          [](const RecsysModel& model, const FloatArray& dense, const py::array& sparse_in, int threads) {
            const IndexArray sparse = integer_array<std::int64_t>(
                sparse_in, str("recsys model ", model.spec().name, ": sparse (embedding indices)"));
            const Batch batch = batch_view(model.spec(), dense, sparse);
            return to_numpy(run_long([&] { return model.run(batch, threads); }));
          },
          py::arg("dense"), py::arg("sparse"), py::arg("threads") = 0,
          "Scores a batch: dense [batch, spec.dense] float32, sparse [batch, spec.lookups_per_sample] int64.")
      .def(
          "run_timed",
          [](const RecsysModel& model, const FloatArray& dense, const py::array& sparse_in, int threads) {
            const IndexArray sparse = integer_array<std::int64_t>(
                sparse_in, str("recsys model ", model.spec().name, ": sparse (embedding indices)"));
            const Batch batch = batch_view(model.spec(), dense, sparse);
            StageTimes times;
            exec::Matrix out = run_long([&] { return model.run(batch, threads, times); });
            py::dict stages;
            stages["gather_s"] = times.gather_s;
            stages["mlp_s"] = times.mlp_s;
            stages["total_s"] = times.total_s;
            return py::make_tuple(to_numpy(std::move(out)), stages);
          },
          py::arg("dense"), py::arg("sparse"), py::arg("threads") = 0,
          "run() that also returns the seconds spent gathering, in the MLPs, and in all.")
      .def_property_readonly("spec", &RecsysModel::spec)
      .def_property_readonly("backend", &RecsysModel::backend)
      .def_property_readonly("supports_threads", &RecsysModel::supports_threads)
      .def("export_weights", &export_weights, "Copies of every weight as float32 numpy arrays, by name.");

  m.def(
      "build",
      [](const Spec& spec, const std::string& backend, std::uint64_t seed) {
        return run_long([&] { return make_model(backend, spec, Weights::random(spec, seed)); });
      },
      py::arg("spec"), py::arg("backend"), py::arg("seed"), "A model with weights drawn from `seed`.");
  m.def(
      "from_weights",
      [](const Spec& spec, const py::dict& weights, const std::string& backend) {
        Weights w = import_weights(spec, weights);
        return run_long([&] { return make_model(backend, spec, std::move(w)); });
      },
      py::arg("spec"), py::arg("weights"), py::arg("backend"),
      "A model with the given weights (export_weights' names).");

  py::class_<InputGenerator>(m, "InputGenerator", "Per-query inputs, a function of (seed, query id, item).")
      .def(py::init([](const Spec& spec, std::uint64_t seed, const py::object& distribution) {
             return InputGenerator(spec, seed, distributions(distribution));
           }),
           py::arg("spec"), py::arg("seed"), py::arg("distribution") = "uniform")
      .def(
          "queries",
          [](const InputGenerator& g, const py::array& ids_in) {
            const IndexArray ids = integer_array<std::int64_t>(ids_in, "query_ids");
            require_1d(ids, "query_ids");
            std::span<const std::int64_t> span(ids.data(), static_cast<std::size_t>(ids.size()));
            return inputs_to_python(run_long([&] { return g.queries(span); }));
          },
          py::arg("query_ids"), "(dense, sparse) with one row per query id.")
      .def(
          "first",
          [](const InputGenerator& g, std::int64_t count) {
            return inputs_to_python(run_long([&] { return g.first(count); }));
          },
          py::arg("count"), "(dense, sparse) for the queries 0 .. count-1.")
      .def(
          "batch",
          [](const InputGenerator& g, const py::array& ids_in, const py::array& sizes_in) {
            const IndexArray ids = integer_array<std::int64_t>(ids_in, "query_ids");
            const auto sizes = integer_array<std::int32_t>(sizes_in, "sizes");
            require_1d(ids, "query_ids");
            require_1d(sizes, "sizes");
            std::span<const std::int64_t> id_span(ids.data(), static_cast<std::size_t>(ids.size()));
            std::span<const std::int32_t> size_span(sizes.data(), static_cast<std::size_t>(sizes.size()));
            return inputs_to_python(run_long([&] { return g.batch(id_span, size_span); }));
          },
          py::arg("query_ids"), py::arg("sizes"), "(dense, sparse) with sizes[i] rows for query i, as a served batch.");

  m.def(
      "measure_peak_gflops", [](double seconds) { return run_long([&] { return measure_peak_gflops(seconds); }); },
      py::arg("seconds") = 0.2, "Peak float32 GFLOP/s of one thread (a register-blocked FMA loop, no BLAS).");
  m.def(
      "measure_triad_gbps",
      [](double megabytes, int threads, int repeats) {
        return run_long([&] { return measure_triad_gbps(megabytes, threads, repeats); });
      },
      py::arg("megabytes") = 256.0, py::arg("threads") = 1, py::arg("repeats") = 5,
      "Memory bandwidth in GB/s of a STREAM-like triad over three arrays of `megabytes` MB.");
  m.def(
      "measure_random_rows_gbps",
      [](double megabytes, int row_bytes, int threads, int repeats) {
        return run_long([&] { return measure_random_rows_gbps(megabytes, row_bytes, threads, repeats); });
      },
      py::arg("megabytes") = 256.0, py::arg("row_bytes") = 128, py::arg("threads") = 1, py::arg("repeats") = 3,
      "GB/s of `row_bytes` rows read at random positions of a `megabytes` MB buffer: a gather's ceiling.");

  publish_plugin_record(m, "_backends", backend_plugin_table, kRecsysBackendCapsule);
  // A model asked for on a backend whose module is not loaded yet loads it through
  // servelab.backends (which says why when it cannot).
  set_backend_loader([](const std::string& name) -> std::string {
    py::gil_scoped_acquire gil;
    try {
      py::module_::import("servelab.backends").attr("require")(name);
    } catch (py::error_already_set& e) {
      return e.what();
    }
    return {};
  });
}

}  // namespace servelab::bindings
