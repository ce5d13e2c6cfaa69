#include "servelab/exec/recsys/inputs.hpp"

#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/memory.hpp"
#include "servelab/core/rng.hpp"

namespace servelab::exec::recsys {

IndexDistribution parse_distribution(const std::string& text, const std::string& field) {
  if (text == "uniform") return {};
  if (text == "zipf") return {IndexDistribution::Kind::Zipf, 1.05};
  if (text.starts_with("zipf:")) {
    const std::string number = text.substr(5);
    char* end = nullptr;
    const double exponent = std::strtod(number.c_str(), &end);
    if (!number.empty() && end == number.c_str() + number.size() && exponent > 0.0 && std::isfinite(exponent)) {
      return {IndexDistribution::Kind::Zipf, exponent};
    }
  }
  throw ValueError(
      str(field, "='", text, "' is not an index distribution: use 'uniform', 'zipf' or 'zipf:<exponent > 0>'"));
}

namespace {

// a * b mod m without overflow (a, b < m < 2^63).
std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  __extension__ using Wide = unsigned __int128;  // GCC and Clang on 64-bit targets
  return static_cast<std::uint64_t>(static_cast<Wide>(a) * b % m);
}

}  // namespace

InputGenerator::InputGenerator(Spec spec, std::uint64_t seed, std::vector<IndexDistribution> per_table)
    : spec_(std::move(spec)), seed_(seed) {
  spec_.validate();
  const std::size_t tables = spec_.tables.size();
  if (per_table.empty()) per_table.resize(1);
  if (per_table.size() == 1) per_table.resize(tables, per_table.front());
  if (per_table.size() != tables) {
    throw ValueError(str("recsys model ", spec_.name, ": ", per_table.size(), " index distributions for ", tables,
                         " tables (give one, or one per table)"));
  }
  per_table_ = std::move(per_table);
  for (std::size_t t = 0; t < tables; ++t) {
    const std::int64_t rows = spec_.tables[t].rows;
    zipf_.emplace_back(rows, per_table_[t].kind == IndexDistribution::Kind::Zipf ? per_table_[t].exponent : 1.0);
    // Popular ranks land on rows spread over the table (rank r -> r * a mod rows), not on its first
    // rows, so a skewed stream still touches the memory a real one would.
    std::uint64_t a = (0x9E3779B97F4A7C15ULL ^ t) % static_cast<std::uint64_t>(rows);
    while (rows > 1 && std::gcd(a, static_cast<std::uint64_t>(rows)) != 1)
      a = (a + 1) % static_cast<std::uint64_t>(rows);
    scatter_.push_back(rows > 1 ? a : 0);
  }
}

void InputGenerator::fill_row(std::int64_t query, std::int64_t item, float* dense, std::int64_t* sparse) const {
  Rng rng = Rng(seed_, "recsys/inputs").derive(str(query, "/", item));
  for (std::int64_t c = 0; c < spec_.dense; ++c) dense[c] = static_cast<float>(rng.uniform());
  for (const auto& f : spec_.features) {
    const auto rows = spec_.tables[f.table].rows;
    const auto& dist = per_table_[f.table];
    for (int l = 0; l < f.lookups; ++l) {
      std::int64_t index;
      if (dist.kind == IndexDistribution::Kind::Zipf) {
        const auto rank = static_cast<std::uint64_t>(zipf_[f.table](rng) - 1);
        index = static_cast<std::int64_t>(mul_mod(rank, scatter_[f.table], static_cast<std::uint64_t>(rows)));
      } else {
        index = boost::random::uniform_int_distribution<std::int64_t>(0, rows - 1)(rng.engine());
      }
      *sparse++ = index;
    }
  }
}

Inputs InputGenerator::allocate(std::int64_t rows) const {
  const double bytes_per_row =
      4.0 * static_cast<double>(spec_.dense) + 8.0 * static_cast<double>(spec_.lookups_per_sample());
  // Reading /proc/meminfo costs tens of microseconds, as much as making a small batch: only
  // batches that come near a real share of memory are checked.
  if (static_cast<double>(rows) * bytes_per_row > 64e6) {
    core::check_fits_memory(static_cast<double>(rows), bytes_per_row, str("batch=", rows), "batch",
                            str("the inputs of recsys model ", spec_.name));
  }
  Inputs in;
  in.dense = Matrix(rows, spec_.dense);
  in.sparse_cols = spec_.lookups_per_sample();
  in.sparse.resize(static_cast<std::size_t>(rows * in.sparse_cols));
  return in;
}

Inputs InputGenerator::queries(std::span<const std::int64_t> query_ids) const {
  Inputs in = allocate(static_cast<std::int64_t>(query_ids.size()));
  for (std::size_t r = 0; r < query_ids.size(); ++r) {
    if ((r & 1023) == 0) core::check_interrupt();
    fill_row(query_ids[r], 0, &in.dense.data[r * spec_.dense], &in.sparse[r * in.sparse_cols]);
  }
  return in;
}

Inputs InputGenerator::first(std::int64_t count) const {
  if (count < 1) throw ValueError(str("recsys model ", spec_.name, ": count=", count, " must be at least 1"));
  Inputs in = allocate(count);
  for (std::int64_t q = 0; q < count; ++q) {
    if ((q & 1023) == 0) core::check_interrupt();
    fill_row(q, 0, &in.dense.data[q * spec_.dense], &in.sparse[q * in.sparse_cols]);
  }
  return in;
}

Inputs InputGenerator::batch(std::span<const std::int64_t> query_ids, std::span<const std::int32_t> sizes) const {
  if (!sizes.empty() && sizes.size() != query_ids.size()) {
    throw ValueError(str("recsys model ", spec_.name, ": ", sizes.size(), " sizes for ", query_ids.size(), " queries"));
  }
  std::int64_t items = 0;
  for (std::size_t q = 0; q < query_ids.size(); ++q) {
    const std::int64_t n = sizes.empty() ? 1 : sizes[q];
    if (n < 1) throw ValueError(str("recsys model ", spec_.name, ": query ", query_ids[q], " has size ", n));
    items += n;
  }
  Inputs in = allocate(items);
  std::int64_t row = 0;
  for (std::size_t q = 0; q < query_ids.size(); ++q) {
    core::check_interrupt();
    const std::int64_t n = sizes.empty() ? 1 : sizes[q];
    for (std::int64_t j = 0; j < n; ++j, ++row) {
      fill_row(query_ids[q], j, &in.dense.data[row * spec_.dense], &in.sparse[row * in.sparse_cols]);
    }
  }
  return in;
}

}  // namespace servelab::exec::recsys
