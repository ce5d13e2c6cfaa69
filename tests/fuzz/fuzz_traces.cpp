// Arrival trace files: timestamps, gaps, "t rate" traces and Azure Functions counts. The readers
// take a path, so each input is written to one scratch file of this process first.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_target.hpp"
#include "servelab/workload/trace_readers.hpp"

using namespace servelab;

namespace {

const std::filesystem::path& scratch() {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("servelab-fuzz-trace-" + std::to_string(::getpid()) + ".txt");
  return path;
}

// Every value a reader returns was validated: finite and non-negative.
void check_values(const std::vector<double>& values) {
  for (const double v : values) {
    if (!std::isfinite(v) || v < 0) fuzz::violated();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(scratch(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  fuzz::refused_cleanly([] {
    const auto t = workload::read_timestamps_csv(scratch(), "ms");
    check_values(t);
    for (std::size_t i = 1; i < t.size(); ++i) {
      if (t[i] < t[i - 1]) fuzz::violated();  // promised non-decreasing
    }
  });
  fuzz::refused_cleanly([] { check_values(workload::read_gaps_csv(scratch(), "us")); });
  fuzz::refused_cleanly([] { workload::read_rate_trace(scratch(), 0.5, true); });
  fuzz::refused_cleanly([] { workload::read_azure_functions_counts(scratch()); });
  return 0;
}
