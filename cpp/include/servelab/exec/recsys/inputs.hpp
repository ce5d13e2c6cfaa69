// Per-query inputs of a recommendation model: dense features uniform in [0, 1) and sparse indices
// drawn per table (uniform, or Zipf with the popular rows scattered over the table), determined by
// (seed, query id, item) alone, so a query served twice, or in another batch, carries the same tensors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "servelab/exec/recsys/batch.hpp"
#include "servelab/exec/recsys/spec.hpp"
#include "servelab/exec/recsys/zipf.hpp"

namespace servelab::exec::recsys {

struct IndexDistribution {
  enum class Kind { Uniform, Zipf } kind = Kind::Uniform;
  double exponent = 1.05;  // Zipf only
};

// "uniform", "zipf" (exponent 1.05) or "zipf:<exponent>"; ValueError naming `field` otherwise.
IndexDistribution parse_distribution(const std::string& text, const std::string& field);

class InputGenerator {
 public:
  // `per_table`: empty (all uniform), one entry (for every table) or one per table.
  InputGenerator(Spec spec, std::uint64_t seed, std::vector<IndexDistribution> per_table = {});

  // One row per query, in the order given.
  Inputs queries(std::span<const std::int64_t> query_ids) const;
  // One row for each of the queries 0 .. count-1. MemoryError when they would not fit in memory.
  Inputs first(std::int64_t count) const;
  // The rows of a served batch: sizes[i] rows for query i (one each when `sizes` is empty), row j
  // of query q drawn from (seed, q, j). MemoryError when the batch would not fit in memory.
  Inputs batch(std::span<const std::int64_t> query_ids, std::span<const std::int32_t> sizes) const;

  const Spec& spec() const { return spec_; }
  std::uint64_t seed() const { return seed_; }

 private:
  void fill_row(std::int64_t query, std::int64_t item, float* dense, std::int64_t* sparse) const;
  Inputs allocate(std::int64_t rows) const;

  Spec spec_;
  std::uint64_t seed_;
  std::vector<IndexDistribution> per_table_;
  std::vector<ZipfSampler> zipf_;       // per table (unused for uniform tables)
  std::vector<std::uint64_t> scatter_;  // per table: multiplier coprime to rows
};

}  // namespace servelab::exec::recsys
