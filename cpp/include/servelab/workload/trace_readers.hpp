// Readers for arrival traces. Each validates the whole file and throws ValueError naming the path
// and the 1-based line number of the first malformed entry ("trace.csv:7: ..."); a file that cannot
// be opened or read is a RuntimeError. Blank lines and lines starting with '#' are skipped
// everywhere; a '#' after the values starts a comment too.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "servelab/workload/arrivals.hpp"

namespace servelab::workload {

// Seconds per unit for "s", "ms", "us" and "ns"; ValueError naming `unit` otherwise.
double seconds_per_unit(std::string_view unit);

// One timestamp per line (an optional non-numeric header line first), in `unit` ("s", "ms", "us",
// "ns"). Returned in seconds; each must be finite, non-negative and no earlier than the one before.
std::vector<double> read_timestamps_csv(const std::filesystem::path& path, std::string_view unit = "s");

// One inter-arrival gap per line, same layout as read_timestamps_csv. Returned in seconds; each
// must be finite and non-negative. The RRL trace (interarrival_time_generated.txt) is in seconds.
std::vector<double> read_gaps_csv(const std::filesystem::path& path, std::string_view unit = "s");

// A rate trace of "t rate" lines (whitespace or comma separated, optional header), t in seconds and
// rate in queries/s, like RAMSIS's Twitter trace. t must start at 0 (or anything, taken as the
// origin) and be equally spaced (at least two lines); rate i holds from t_i for one spacing.
PiecewiseRate read_rate_trace(const std::filesystem::path& path, double time_scale = 1.0, bool repeat = false);

// Azure Functions 2019 per-minute invocation counts (invocations_per_function_md.anon.d*.csv):
// header HashOwner,HashApp,HashFunction,Trigger,1,...,1440, then one row per function. Sums all
// rows, or only those whose HashFunction equals `function` (KeyError when none does), into a
// per-minute rate trace: rate = count / 60 queries/s, interval 60 s.
PiecewiseRate read_azure_functions_counts(const std::filesystem::path& path,
                                          const std::optional<std::string>& function = std::nullopt,
                                          double time_scale = 1.0, bool repeat = false);

}  // namespace servelab::workload
