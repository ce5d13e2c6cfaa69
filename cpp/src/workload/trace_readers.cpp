#include "servelab/workload/trace_readers.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <utility>

#include "format.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::workload {

using detail::num;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Reads a text file line by line, knowing the 1-based number of the current line.
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& path) : path_(path.string()), in_(path) {
    if (!in_) throw RuntimeError(str("cannot open '", path_, "': ", std::strerror(errno)));
  }

  // The next line (without its end-of-line characters); false at the end of the file.
  bool next(std::string_view& line) {
    if (!std::getline(in_, buffer_)) {
      if (in_.bad()) throw RuntimeError(str("reading '", path_, "' failed after line ", number_));
      return false;
    }
    ++number_;
    if ((number_ & 1023) == 0) core::check_interrupt();
    line = buffer_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }

  // The next line with its comment removed and trimmed, skipping blank and comment-only lines.
  bool next_content(std::string_view& line) {
    while (next(line)) {
      if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
      line = trim(line);
      if (!line.empty()) return true;
    }
    return false;
  }

  // ValueError "path:line: what".
  [[noreturn]] void fail(const std::string& what) const { throw ValueError(str(path_, ":", number_, ": ", what)); }

  const std::string& path() const { return path_; }
  std::int64_t line_number() const { return number_; }

 private:
  std::string path_;
  std::ifstream in_;
  std::string buffer_;
  std::int64_t number_ = 0;
};

// A whole token as a double (a leading '+' allowed); nullopt if it is not exactly a number.
std::optional<double> parse_double(std::string_view token) {
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error != std::errc() || end != token.data() + token.size() || token.empty()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_count(std::string_view token) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error != std::errc() || end != token.data() + token.size() || token.empty() || value < 0) return std::nullopt;
  return value;
}

// A header line starts with a letter or a quote (so "1.5x" is a malformed number, not a header),
// but its first field is not a number: "nan" and "inf" are numbers, rejected as non-finite with
// their line, never skipped as a header.
bool looks_like_header(std::string_view line) {
  const bool starts_like_text =
      std::isalpha(static_cast<unsigned char>(line.front())) || line.front() == '"' || line.front() == '\'';
  if (!starts_like_text) return false;
  const std::size_t end = line.find_first_of(", \t");
  return !parse_double(line.substr(0, end)).has_value();
}

// Fields separated by commas and/or whitespace ("0 1850", "0,1850", "0, 1850").
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ',' || std::isspace(static_cast<unsigned char>(line[i])))) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ',' && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

// Fields of a strict comma-separated line (empty fields kept).
void split_commas(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}

// One non-negative number per line (optional header), times `seconds_per`, for the two CSV readers.
template <typename Check>
std::vector<double> read_one_column(const std::filesystem::path& path, std::string_view unit, const char* what,
                                    Check check) {
  const double seconds_per = seconds_per_unit(unit);
  LineReader reader(path);
  std::vector<double> values;
  std::string_view line;
  bool first = true;
  while (reader.next_content(line)) {
    const auto fields = split_fields(line);
    if (first && looks_like_header(line)) {
      first = false;
      continue;
    }
    first = false;
    if (fields.size() != 1) reader.fail(str("expected one ", what, " per line, got ", fields.size(), " fields"));
    const auto value = parse_double(fields[0]);
    if (!value) reader.fail(str(what, " '", fields[0], "' is not a number"));
    if (!detail::non_negative_finite(*value))
      reader.fail(str(what, " ", num(*value), " must be non-negative and finite"));
    check(reader, values, *value * seconds_per);
    values.push_back(*value * seconds_per);
  }
  if (values.empty()) throw ValueError(str("'", reader.path(), "' holds no ", what, "s"));
  return values;
}

}  // namespace

double seconds_per_unit(std::string_view unit) {
  if (unit == "s") return 1.0;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  if (unit == "ns") return 1e-9;
  throw ValueError(str("unit='", unit, "' is not one of 's', 'ms', 'us', 'ns'"));
}

std::vector<double> read_timestamps_csv(const std::filesystem::path& path, std::string_view unit) {
  const double seconds_per = seconds_per_unit(unit);
  return read_one_column(path, unit, "timestamp",
                         [&](const LineReader& reader, const std::vector<double>& done, double t) {
                           if (!done.empty() && t < done.back()) {
                             reader.fail(str("timestamp ", num(t / seconds_per), " is before the previous one, ",
                                             num(done.back() / seconds_per), ": timestamps must be non-decreasing"));
                           }
                         });
}

std::vector<double> read_gaps_csv(const std::filesystem::path& path, std::string_view unit) {
  return read_one_column(path, unit, "gap", [](const LineReader&, const std::vector<double>&, double) {});
}

PiecewiseRate read_rate_trace(const std::filesystem::path& path, double time_scale, bool repeat) {
  LineReader reader(path);
  std::vector<double> times, rates;
  std::string_view line;
  while (reader.next_content(line)) {
    if (times.empty() && rates.empty() && looks_like_header(line)) continue;
    const auto fields = split_fields(line);
    if (fields.size() != 2) reader.fail(str("expected 2 fields 't rate', got ", fields.size()));
    const auto t = parse_double(fields[0]);
    if (!t || !std::isfinite(*t)) reader.fail(str("t '", fields[0], "' is not a finite number"));
    const auto rate = parse_double(fields[1]);
    if (!rate) reader.fail(str("rate '", fields[1], "' is not a number"));
    if (!detail::non_negative_finite(*rate)) reader.fail(str("rate ", num(*rate), " must be non-negative and finite"));
    if (times.size() == 1 && !(*t > times[0])) {
      reader.fail(str("t=", num(*t), " must be after the first t=", num(times[0])));
    }
    if (times.size() >= 2) {
      const double spacing = times[1] - times[0];
      const double expected = times[0] + static_cast<double>(times.size()) * spacing;
      if (std::abs(*t - expected) > 1e-6 * spacing) {
        reader.fail(str("t=", num(*t), " breaks the equal spacing of ", num(spacing),
                        " s set by the first two lines (expected t=", num(expected), ")"));
      }
    }
    times.push_back(*t);
    rates.push_back(*rate);
  }
  if (times.size() < 2) {
    throw ValueError(str("'", reader.path(), "' holds ", times.size(),
                         " 't rate' lines; at least 2 are needed to infer the interval"));
  }
  return PiecewiseRate(times[1] - times[0], std::move(rates), time_scale, repeat);
}

PiecewiseRate read_azure_functions_counts(const std::filesystem::path& path, const std::optional<std::string>& function,
                                          double time_scale, bool repeat) {
  static constexpr const char* kKeys[] = {"HashOwner", "HashApp", "HashFunction", "Trigger"};
  constexpr std::size_t kMinuteColumn = 4;

  LineReader reader(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  if (!reader.next(line)) throw ValueError(str("'", reader.path(), "' is empty: expected the header line"));
  split_commas(line, fields);
  if (fields.size() <= kMinuteColumn) {
    reader.fail(
        str("header has ", fields.size(), " columns, expected HashOwner,HashApp,HashFunction,Trigger,1,...,1440"));
  }
  for (std::size_t c = 0; c < kMinuteColumn; ++c) {
    if (fields[c] != kKeys[c])
      reader.fail(str("header column ", c + 1, " is '", fields[c], "', expected '", kKeys[c], "'"));
  }
  const std::size_t minutes = fields.size() - kMinuteColumn;
  for (std::size_t m = 0; m < minutes; ++m) {
    if (fields[kMinuteColumn + m] != std::to_string(m + 1)) {
      reader.fail(str("header column ", kMinuteColumn + m + 1, " is '", fields[kMinuteColumn + m],
                      "', expected minute '", m + 1, "'"));
    }
  }

  std::vector<std::int64_t> counts(minutes, 0);
  std::int64_t rows = 0, matched = 0;
  while (reader.next(line)) {
    if (trim(line).empty()) continue;
    split_commas(line, fields);
    if (fields.size() != kMinuteColumn + minutes) {
      reader.fail(str("expected ", kMinuteColumn + minutes, " columns like the header, got ", fields.size()));
    }
    ++rows;
    if (function && fields[2] != *function) continue;
    ++matched;
    for (std::size_t m = 0; m < minutes; ++m) {
      const auto count = parse_count(fields[kMinuteColumn + m]);
      if (!count) {
        reader.fail(str("minute ", m + 1, ": count '", fields[kMinuteColumn + m], "' is not a non-negative integer"));
      }
      counts[m] += *count;
    }
  }
  if (rows == 0) throw ValueError(str("'", reader.path(), "' has a header but no function rows"));
  if (matched == 0) throw KeyError(str("function='", *function, "' is not in '", reader.path(), "' (", rows, " rows)"));

  std::vector<double> rates(minutes);
  for (std::size_t m = 0; m < minutes; ++m) rates[m] = static_cast<double>(counts[m]) / 60.0;
  return PiecewiseRate(60.0, std::move(rates), time_scale, repeat);
}

}  // namespace servelab::workload
