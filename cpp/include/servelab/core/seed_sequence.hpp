// std::seed_seq::generate for the state of an MT19937-64 engine (624 32-bit words from 8 seed
// words), for several seed lists at once. The standard fixes the algorithm ([rand.util.seedseq]);
// this is it operation for operation, without its modulo operations, and tests compare it with
// std::seed_seq. Why: each list's recurrence is one chain of dependent multiplies (about 5 us),
// so seeding 10,000 workers' streams took 64 ms one at a time; interleaved, the chains overlap
// (four lists in scalar registers, or eight to an AVX2 vector where the CPU has it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace servelab::detail {

using SeedWords = std::array<std::uint32_t, 8>;
using StateWords = std::array<std::uint32_t, 624>;

// out[i] = what std::seed_seq(seeds[i]).generate() writes into 624 words; equal sizes.
void generate_states(std::span<const SeedWords> seeds, std::span<StateWords> out);

}  // namespace servelab::detail
