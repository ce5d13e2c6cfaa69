// servelab._core bindings of the workload area: arrival processes, trace readers, queries,
// applications and workloads (arrival process x application mix). Size distributions are in
// bind_sizes.cpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "converters.hpp"
#include "limits.hpp"
#include "long_call.hpp"
#include "numpy_args.hpp"
#include "numpy_owner.hpp"
#include "registry_binding.hpp"
#include "seed.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/workload/arrival_registry.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/query.hpp"
#include "servelab/workload/trace_readers.hpp"
#include "servelab/workload/workload.hpp"
#include "workload_args.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::workload;

std::string py_repr(const py::handle& value) { return py::repr(value).cast<std::string>(); }

// Raises FileNotFoundError (with the path) rather than a generic error for a missing file.
void require_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    PyErr_SetObject(PyExc_FileNotFoundError, py::make_tuple(ENOENT, "No such file or directory", path.string()).ptr());
    throw py::error_already_set();
  }
}

const char* const kGenerateArgs =
    "seed: run seed (arrivals come from its stream \"arrivals\"); count: stop after this many arrivals;\n"
    "horizon_s: stop at the first arrival at or after this time (not included). Either may be None\n"
    "(no limit) but not both; a finite trace may also end first. Releases the GIL; Ctrl-C stops it.";

// An application from Python: slo_s in seconds (errors name the application and show the value as
// Python writes it), sizes a SizeDistribution, a spec or None; arrivals its own arrival process, a
// spec or None. A share next to its own arrivals is refused: its rate is then its process's.
Application make_application(const std::string& name, double slo_s, const std::optional<double>& share_arg,
                             const py::object& sizes, double accuracy_floor, const py::object& arrivals) {
  if (!(slo_s > 0) || !std::isfinite(slo_s)) {
    throw ValueError(
        str("application '", name, "': slo_s=", py_repr(py::float_(slo_s)), " must be positive and finite"));
  }
  Nanos slo = 0;
  try {
    slo = seconds_to_nanos(slo_s, "slo_s");
  } catch (const ValueError& e) {  // beyond int64 nanoseconds
    throw ValueError(str("application '", name, "': ", e.what()));
  }
  std::shared_ptr<const ArrivalProcess> process;
  if (!arrivals.is_none()) {
    try {
      process = to_arrivals(arrivals);
    } catch (const ValueError& e) {
      throw ValueError(str("application '", name, "': ", e.what()));
    }
  }
  if (process && share_arg) {
    throw ValueError(str("application '", name, "': share=", py_repr(py::float_(*share_arg)),
                         " given with arrivals=", process->describe(),
                         ": an application with its own arrival process has that process's "
                         "rate; drop share"));
  }
  const double share = share_arg.value_or(1.0);
  Application app{name, share, slo, to_sizes(sizes, "sizes", NoneSizes::SizeOne), accuracy_floor, process};
  if (app.slo <= 0) throw ValueError(str("application '", name, "': slo_s=", slo_s, " is below one nanosecond"));
  validate_application(app);
  return app;
}

std::string describe_application(const Application& a) {
  return str("Application(name=", py_repr(py::str(a.name)), ", slo_s=", py_repr(py::float_(nanos_to_seconds(a.slo))),
             ", share=", py_repr(py::float_(a.share)),
             ", sizes=", a.sizes ? py_repr(py::str(a.sizes->describe())) : "None",
             ", accuracy_floor=", py_repr(py::float_(a.accuracy_floor)),
             a.arrivals ? str(", arrivals=", py_repr(py::str(a.arrivals->describe()))) : "", ")");
}

std::shared_ptr<Workload> make_workload(const py::object& arrivals, const std::vector<Application>& apps,
                                        const std::optional<IntArg>& count, std::optional<double> horizon_s) {
  const auto limits = to_limits(count, horizon_s);
  return std::make_shared<Workload>(arrivals.is_none() ? nullptr : to_arrivals(arrivals), apps, limits.count,
                                    limits.horizon);
}

py::dict columns_to_dict(QueryColumns&& c) {
  py::dict d;
  d["id"] = to_numpy(std::move(c.id));
  d["app"] = to_numpy(std::move(c.app));
  d["size"] = to_numpy(std::move(c.size));
  d["arrival_s"] = to_numpy(std::move(c.arrival_s));
  d["deadline_s"] = to_numpy(std::move(c.deadline_s));
  d["accuracy_floor"] = to_numpy(std::move(c.accuracy_floor));
  return d;
}

// ArrivalCursor and the ArrivalProcess base class.
void bind_arrival_process(py::module_& m) {
  py::class_<ArrivalCursor>(m, "ArrivalCursor",
                            "One run of an arrival process: iterate it for arrival times in seconds (floats), or "
                            "call next_ns() for int nanoseconds. Infinite unless the process is a finite trace.")
      .def(
          "__iter__", [](py::object self) { return self; }, "The cursor itself (an iterator).")
      .def(
          "__next__",
          [](ArrivalCursor& cursor) {
            const auto t = cursor.next();
            if (!t) throw py::stop_iteration();
            return nanos_to_seconds(*t);
          },
          "The next arrival time in seconds; StopIteration when a finite trace has ended.")
      .def(
          "next_ns", [](ArrivalCursor& cursor) { return cursor.next(); },
          "The next arrival time in int nanoseconds, or None when a finite trace has ended.");

  py::class_<ArrivalProcess, std::shared_ptr<ArrivalProcess>>(
      m, "ArrivalProcess",
      "An immutable arrival process. generate() draws arrival times in bulk, start() lazily.\n"
      "Times are from t=0, non-decreasing, kept in int64 nanoseconds inside.")
      .def(
          "generate",
          [](const ArrivalProcess& process, const py::object& seed, const std::optional<IntArg>& count,
             std::optional<double> horizon_s) {
            const auto s = to_seed(seed);
            const auto limits = to_limits(count, horizon_s);
            return to_numpy(
                run_long([&] { return generate_arrival_seconds(process, s, limits.count, limits.horizon); }));
          },
          py::kw_only(), py::arg("seed"), py::arg("count") = py::none(), py::arg("horizon_s") = py::none(),
          (std::string("Arrival times in seconds as a float64 numpy array.\n") + kGenerateArgs).c_str())
      .def(
          "generate_ns",
          [](const ArrivalProcess& process, const py::object& seed, const std::optional<IntArg>& count,
             std::optional<double> horizon_s) {
            const auto s = to_seed(seed);
            const auto limits = to_limits(count, horizon_s);
            return to_numpy(run_long([&] { return generate_arrivals(process, s, limits.count, limits.horizon); }));
          },
          py::kw_only(), py::arg("seed"), py::arg("count") = py::none(), py::arg("horizon_s") = py::none(),
          (std::string("Arrival times in int64 nanoseconds (exact, as the simulator uses them).\n") + kGenerateArgs)
              .c_str())
      .def(
          "start",
          [](const ArrivalProcess& process, const py::object& seed) {
            return process.start(Rng(to_seed(seed), kArrivalStream));
          },
          py::kw_only(), py::arg("seed"), "A lazy ArrivalCursor over the same times generate(seed=seed, ...) returns.")
      .def("describe", &ArrivalProcess::describe, "The process and its parameters, e.g. 'poisson(rate=100)'.")
      .def_property_readonly("mean_rate", &ArrivalProcess::mean_rate,
                             "Long-run mean rate in queries/s (the average over one pass of a finite trace); "
                             "NaN when unknown.")
      .def("__repr__", &ArrivalProcess::describe);
}

// Poisson, PoissonIntegerMs, Gamma, MMPP: stochastic processes with fixed parameters.
void bind_stochastic_arrivals(py::module_& m) {
  py::class_<Poisson, ArrivalProcess, std::shared_ptr<Poisson>>(m, "Poisson",
                                                                "Poisson arrivals: exponential gaps with mean 1/rate.")
      .def(py::init<double>(), py::arg("rate"), "rate: queries/s, positive and finite.")
      .def_property_readonly("rate", &Poisson::rate, "Queries/s.");

  py::class_<PoissonIntegerMs, ArrivalProcess, std::shared_ptr<PoissonIntegerMs>>(
      m, "PoissonIntegerMs",
      "Gaps are whole milliseconds drawn from a Poisson distribution with mean 1000/rate ms, as the Kairos and "
      "Ribbon artifacts generate them (numpy.random.poisson(mean_gap_ms)); 0 ms gaps (ties) occur.")
      .def(py::init<double>(), py::arg("rate"), "rate: queries/s (mean gap 1000/rate ms, at most 1e12 ms).")
      .def_property_readonly("rate", &PoissonIntegerMs::rate, "Queries/s.")
      .def_property_readonly("mean_gap_ms", &PoissonIntegerMs::mean_gap_ms, "1000/rate.");

  py::class_<Gamma, ArrivalProcess, std::shared_ptr<Gamma>>(
      m, "Gamma",
      "Renewal arrivals with gamma-distributed gaps: mean 1/rate and coefficient of variation cv "
      "(cv=1 is Poisson, below 1 smoother, above 1 burstier).")
      .def(py::init<double, double>(), py::arg("rate"), py::arg("cv"),
           "rate: queries/s; cv: standard deviation / mean of the gaps; both positive and finite.")
      .def_property_readonly("rate", &Gamma::rate, "Queries/s.")
      .def_property_readonly("cv", &Gamma::cv, "Coefficient of variation of the gaps.");

  py::class_<Mmpp, ArrivalProcess, std::shared_ptr<Mmpp>>(
      m, "MMPP",
      "Two-state Markov-modulated Poisson process (on/off): Poisson at rate_on while on and at rate_off (may be 0) "
      "while off; on and off periods are exponential with means mean_on_s and mean_off_s. Starts in the stationary "
      "state, so mean_rate = (rate_on*mean_on_s + rate_off*mean_off_s) / (mean_on_s + mean_off_s) from t=0.")
      .def(py::init<double, double, double, double>(), py::arg("rate_on"), py::arg("rate_off"), py::arg("mean_on_s"),
           py::arg("mean_off_s"), "Rates in queries/s, mean period lengths in seconds.")
      .def_property_readonly("rate_on", &Mmpp::rate_on, "Queries/s while on.")
      .def_property_readonly("rate_off", &Mmpp::rate_off, "Queries/s while off.")
      .def_property_readonly("mean_on_s", &Mmpp::mean_on_s, "Mean length of an on period, seconds.")
      .def_property_readonly("mean_off_s", &Mmpp::mean_off_s, "Mean length of an off period, seconds.");
}

void bind_piecewise_rate(py::module_& m) {
  py::class_<PiecewiseRate, ArrivalProcess, std::shared_ptr<PiecewiseRate>>(
      m, "PiecewiseRate",
      "Poisson arrivals at rates[i] queries/s during interval i (each interval_s * time_scale seconds long). "
      "time_scale stretches (> 1) or compresses (< 1) time keeping the rates, e.g. 300/270 plays a 270 s trace "
      "over 5 minutes. Ends after the last interval unless repeat. Exact (no thinning).")
      .def(py::init([](double interval_s, const DoubleArray& rates, double time_scale, bool repeat) {
             const auto span = as_span(rates, "rates");
             return std::make_shared<PiecewiseRate>(interval_s, std::vector<double>(span.begin(), span.end()),
                                                    time_scale, repeat);
           }),
           py::arg("interval_s"), py::arg("rates"), py::arg("time_scale") = 1.0, py::arg("repeat") = false,
           "interval_s: seconds per interval; rates: queries/s per interval (>= 0); time_scale: > 0.")
      .def_property_readonly("interval_s", &PiecewiseRate::interval_s, "Seconds per interval before time_scale.")
      .def_property_readonly(
          "rates", [](const PiecewiseRate& p) { return to_numpy_copy(p.rates()); },
          "A copy of the per-interval rates, queries/s.")
      .def_property_readonly("time_scale", &PiecewiseRate::time_scale, "Multiplies every interval's length.")
      .def_property_readonly("repeat", &PiecewiseRate::repeat, "Whether the trace starts over after its end.")
      .def_property_readonly(
          "duration_s", [](const PiecewiseRate& p) { return nanos_to_seconds(p.duration_ns()); },
          "Length of one pass over all intervals, seconds (after time_scale).");
}

void bind_replay(py::module_& m) {
  py::class_<Replay, ArrivalProcess, std::shared_ptr<Replay>>(
      m, "Replay", "Replays explicit arrival times; with a period, the trace repeats (pass k adds k * period).")
      .def(py::init([](const DoubleArray& timestamps_s, std::optional<double> period_s) {
             return std::make_shared<Replay>(as_span(timestamps_s, "timestamps_s"), period_s);
           }),
           py::arg("timestamps_s"), py::arg("period_s") = py::none(),
           "timestamps_s: arrival times in seconds, non-negative and non-decreasing; period_s: repeat every "
           "period_s seconds (at least the last time), or None to end after the last time.")
      .def_static(
          "from_gaps",
          [](const DoubleArray& gaps_s, bool repeat) {
            return std::make_shared<Replay>(Replay::from_gaps(as_span(gaps_s, "gaps_s"), repeat));
          },
          py::arg("gaps_s"), py::arg("repeat") = false,
          "Arrivals at the cumulative sums of gaps_s (seconds, non-negative; the first arrival is at gaps_s[0]). "
          "With repeat, the gaps are replayed cyclically.")
      .def_property_readonly(
          "timestamps_s", [](const Replay& r) { return to_numpy_seconds(r.times()); },
          "The times of one pass, seconds (float64 copy).")
      .def_property_readonly(
          "timestamps_ns", [](const Replay& r) { return to_numpy_copy(r.times()); },
          "The times of one pass, int64 nanoseconds (copy).")
      .def_property_readonly(
          "period_s",
          [](const Replay& r) -> std::optional<double> {
            if (!r.period_ns()) return std::nullopt;
            return nanos_to_seconds(*r.period_ns());
          },
          "The repeat period in seconds, or None for a trace that ends.")
      .def(
          "__len__", [](const Replay& r) { return r.times().size(); }, "Arrivals in one pass.");
}

// The trace readers and the arrival registry (list_arrival_processes, make_arrival_process).
void bind_arrival_functions(py::module_& m) {
  m.def(
      "read_timestamps_csv",
      [](const std::filesystem::path& path, const std::string& unit) {
        require_file(path);
        return to_numpy(run_long([&] { return read_timestamps_csv(path, unit); }));
      },
      py::arg("path"), py::arg("unit") = "s",
      "Arrival timestamps, one per line (optional header line, '#' comments), in unit 's', 'ms', 'us' or 'ns'.\n"
      "Returns float64 seconds; they must be non-negative and non-decreasing. Errors name the file and line.");
  m.def(
      "read_gaps_csv",
      [](const std::filesystem::path& path, const std::string& unit) {
        require_file(path);
        return to_numpy(run_long([&] { return read_gaps_csv(path, unit); }));
      },
      py::arg("path"), py::arg("unit") = "s",
      "Inter-arrival gaps, one per line (optional header line, '#' comments), in unit 's', 'ms', 'us' or 'ns'.\n"
      "Returns float64 seconds (non-negative). Errors name the file and line. Replay.from_gaps() replays them.");
  m.def(
      "read_rate_trace",
      [](const std::filesystem::path& path, double time_scale, bool repeat) {
        require_file(path);
        LongCall call;
        return std::make_shared<PiecewiseRate>(read_rate_trace(path, time_scale, repeat));
      },
      py::arg("path"), py::arg("time_scale") = 1.0, py::arg("repeat") = false,
      "A PiecewiseRate from 't rate' lines (t seconds, equally spaced; rate queries/s), like RAMSIS's Twitter\n"
      "trace. Errors name the file and line.");
  m.def(
      "read_azure_functions_counts",
      [](const std::filesystem::path& path, std::optional<std::string> function, double time_scale, bool repeat) {
        require_file(path);
        LongCall call;
        return std::make_shared<PiecewiseRate>(read_azure_functions_counts(path, function, time_scale, repeat));
      },
      py::arg("path"), py::arg("function") = py::none(), py::arg("time_scale") = 1.0, py::arg("repeat") = false,
      "A per-minute PiecewiseRate (interval 60 s, rate = count/60) from an Azure Functions 2019\n"
      "invocations_per_function_md.anon.d*.csv file: the sum of all rows, or of the rows whose HashFunction is\n"
      "`function` (KeyError if none). Errors name the file and line.");
  bind_registry<ArrivalProcess>(m, "arrival_process", "arrival_processes", &arrival_registry);
}

// Query (what a workload generates and a policy receives) and the lazy QueryStream of them.
void bind_query(py::module_& m) {
  py::class_<Query>(m, "Query", "One request: read-only fields; times in seconds (or _ns).")
      .def_readonly("id", &Query::id, "Dense id: the i-th query of the run has id i.")
      .def_readonly("app", &Query::app, "Index of its application.")
      .def_readonly("size", &Query::size, "Items in the request.")
      .def_readonly("arrival_ns", &Query::arrival)
      .def_readonly("deadline_ns", &Query::deadline)
      .def_property_readonly("arrival_s", [](const Query& q) { return nanos_to_seconds(q.arrival); })
      .def_property_readonly("deadline_s", [](const Query& q) { return nanos_to_seconds(q.deadline); })
      .def_readonly("accuracy_floor", &Query::accuracy_floor, "Lowest model accuracy its application accepts.")
      .def("__repr__", [](const Query& q) {
        return str("Query(id=", q.id, ", app=", q.app, ", size=", q.size, ", arrival_s=", nanos_to_seconds(q.arrival),
                   ", deadline_s=", nanos_to_seconds(q.deadline), ")");
      });

  py::class_<QueryStream>(m, "QueryStream", "The lazy queries of one run: iterate it for Query objects.")
      .def(
          "__iter__", [](py::object self) { return self; }, "The stream itself (an iterator).")
      .def(
          "__next__",
          [](QueryStream& s) {
            auto q = s.next();
            if (!q) throw py::stop_iteration();
            return *q;
          },
          "The next Query; StopIteration once the workload ends.");
}

// Application and zipf_shares (the popularity of a mix of applications).
void bind_application(py::module_& m) {
  py::class_<Application>(m, "Application",
                          "One application of a workload: its name, latency SLO, share of the queries, request "
                          "sizes and the lowest model accuracy it accepts. Immutable.")
      .def(py::init(&make_application), py::arg("name"), py::arg("slo_s"), py::arg("share") = py::none(),
           py::arg("sizes") = py::none(), py::arg("accuracy_floor") = 0.0, py::kw_only(),
           py::arg("arrivals") = py::none(),
           "name: unique within a workload; slo_s: deadline = arrival + slo_s (seconds, > 0); share: relative rate\n"
           "share (> 0, normalised over the applications; None: 1); sizes: a SizeDistribution, a spec string such\n"
           "as 'lognormal(mu=5.1, sigma=0.2)', or None (every query has size 1); accuracy_floor: in [0, 1];\n"
           "arrivals: the application's own ArrivalProcess or spec (then give one to every application, none to\n"
           "the Workload, and no share: the process sets the rate).")
      .def_property_readonly(
          "name", [](const Application& a) { return a.name; }, "The application's name.")
      .def_property_readonly(
          "slo_s", [](const Application& a) { return nanos_to_seconds(a.slo); }, "Latency SLO, seconds.")
      .def_property_readonly(
          "share", [](const Application& a) { return a.share; }, "Relative rate share (as given; 1 by default).")
      .def_property_readonly(
          "sizes",
          [](const Application& a) -> py::object {
            if (!a.sizes) return py::none();
            return py::cast(std::const_pointer_cast<SizeDistribution>(a.sizes));
          },
          "The size distribution, or None (size 1).")
      .def_property_readonly(
          "accuracy_floor", [](const Application& a) { return a.accuracy_floor; },
          "The lowest model accuracy the application accepts (0: any).")
      .def_property_readonly(
          "arrivals",
          [](const Application& a) -> py::object {
            if (!a.arrivals) return py::none();
            return py::cast(std::const_pointer_cast<ArrivalProcess>(a.arrivals));
          },
          "The application's own arrival process, or None (its share of the workload's).")
      .def("__repr__", &describe_application);

  m.def(
      "zipf_shares",
      [](const IntArg& n, double exponent) { return to_numpy(zipf_shares(to_int<std::int64_t>(n, "n"), exponent)); },
      py::arg("n"), py::arg("exponent") = 1.0,
      "Zipf popularity of n applications: share[i] proportional to 1 / (i + 1)**exponent, normalised to sum to 1\n"
      "(float64 array). exponent 0 gives equal shares.");
}

void bind_workload_class(py::module_& m) {
  py::class_<Workload, std::shared_ptr<Workload>>(
      m, "Workload",
      "Arrival process x application mix. Each query picks its application by share (stream \"apps\"), its size\n"
      "from that application's distribution (stream \"sizes/<index>\") and gets deadline = arrival + slo. A run\n"
      "stops after `count` queries, at the first arrival at or after `horizon_s` (not included), or when a\n"
      "finite arrival trace ends.\n\n"
      "Per-application arrivals: with arrivals=None and every Application given its own arrivals, application i\n"
      "arrives as its process does (stream \"arrivals/<i>\"); the applications' queries are merged by time (ties:\n"
      "lower index first) and numbered in that order. count and horizon_s limit the merged stream; a finite trace\n"
      "ends only its own application.")
      .def(py::init(&make_workload), py::arg("arrivals"), py::arg("apps"), py::arg("count") = py::none(),
           py::arg("horizon_s") = py::none(),
           "arrivals: an ArrivalProcess or a spec string such as 'poisson(rate=100)', or None when every\n"
           "application has its own; apps: a list of Application with unique names; count and horizon_s: limits,\n"
           "either may be None but not both.")
      .def(
          "generate",
          [](const Workload& w, const py::object& seed) {
            const auto s = to_seed(seed);
            return columns_to_dict(run_long([&] { return w.generate_columns(s); }));
          },
          py::kw_only(), py::arg("seed"),
          "Every query of the run as a dict of numpy columns (no copies): id (int64), app (int32 index into apps),\n"
          "size (int32), arrival_s and deadline_s (float64 seconds), accuracy_floor (float32). The same seed gives\n"
          "the same queries bit for bit. Releases the GIL; Ctrl-C stops it.")
      .def(
          "start", [](const Workload& w, const py::object& seed) { return w.start(to_seed(seed)); }, py::kw_only(),
          py::arg("seed"), "A lazy QueryStream over the same queries generate(seed=seed) returns.")
      .def("describe", &Workload::describe, "The arrival process, every application and the limits.")
      .def("__repr__", &Workload::describe)
      .def_property_readonly(
          "arrivals", [](const Workload& w) { return std::const_pointer_cast<ArrivalProcess>(w.arrivals_ptr()); },
          "The shared arrival process, or None when each application has its own.")
      .def_property_readonly("mean_rate", &Workload::mean_rate,
                             "Queries per second of all applications together, long-run mean (NaN: not known).")
      .def_property_readonly("expected_queries", &Workload::expected_queries,
                             "The expected number of queries of a run: count, or fewer when horizon_s or the end of a "
                             "finite trace comes first on average (inf: not known).")
      .def_property_readonly(
          "apps", [](const Workload& w) { return w.apps(); }, "The applications (copies), in index order.")
      .def_property_readonly(
          "app_names",
          [](const Workload& w) {
            std::vector<std::string> names;
            for (const auto& a : w.apps()) names.push_back(a.name);
            return names;
          },
          "The applications' names, in index order (the `app` column indexes this).")
      .def_property_readonly(
          "shares", [](const Workload& w) { return to_numpy_copy(w.shares()); },
          "Each application's share of the queries, normalised to sum to 1 (with per-application arrivals: by\n"
          "mean rate, NaN when one is not known).")
      .def_property_readonly(
          "count",
          [](const Workload& w) -> std::optional<std::int64_t> {
            if (w.max_count() == kUnlimitedCount) return std::nullopt;
            return w.max_count();
          },
          "The query limit, or None.")
      .def_property_readonly(
          "horizon_s",
          [](const Workload& w) -> std::optional<double> {
            if (w.horizon() == kUnlimitedHorizon) return std::nullopt;
            return nanos_to_seconds(w.horizon());
          },
          "The time limit in seconds, or None.");
}

}  // namespace

// Each type before the signatures that name it: ArrivalProcess before Workload.arrivals, Query
// before QueryStream, Application and QueryStream before Workload.
void init_workload(py::module_& m) {
  bind_arrival_process(m);
  bind_stochastic_arrivals(m);
  bind_piecewise_rate(m);
  bind_replay(m);
  bind_arrival_functions(m);
  bind_query(m);
  bind_application(m);
  bind_workload_class(m);
}

}  // namespace servelab::bindings
