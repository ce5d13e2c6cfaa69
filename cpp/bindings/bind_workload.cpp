// servelab._core bindings of the workload area: arrival processes and trace readers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "limits.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "registry_binding.hpp"
#include "seed.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/workload/arrival_registry.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/trace_readers.hpp"

namespace py = pybind11;

namespace servelab::bindings {

namespace {

using namespace servelab::workload;

// Any 1-D sequence of numbers as C-contiguous float64 (numpy converts other dtypes first).
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

std::span<const double> as_span(const DoubleArray& array, const char* name) {
  if (array.ndim() != 1) {
    std::string shape;
    for (py::ssize_t d = 0; d < array.ndim(); ++d) shape += str(d ? ", " : "", array.shape(d));
    throw ValueError(str(name, " must be 1-D, got shape (", shape, ")"));
  }
  return {array.data(), static_cast<std::size_t>(array.size())};
}

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

}  // namespace

void init_workload(py::module_& m) {
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
          "rates", [](const PiecewiseRate& p) { return to_numpy(std::vector<double>(p.rates())); },
          "A copy of the per-interval rates, queries/s.")
      .def_property_readonly("time_scale", &PiecewiseRate::time_scale, "Multiplies every interval's length.")
      .def_property_readonly("repeat", &PiecewiseRate::repeat, "Whether the trace starts over after its end.")
      .def_property_readonly(
          "duration_s", [](const PiecewiseRate& p) { return nanos_to_seconds(p.duration_ns()); },
          "Length of one pass over all intervals, seconds (after time_scale).");

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
          "timestamps_s",
          [](const Replay& r) {
            std::vector<double> out(r.times().size());
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = nanos_to_seconds(r.times()[i]);
            return to_numpy(std::move(out));
          },
          "The times of one pass, seconds (float64 copy).")
      .def_property_readonly(
          "timestamps_ns", [](const Replay& r) { return to_numpy(std::vector<Nanos>(r.times())); },
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

}  // namespace servelab::bindings
