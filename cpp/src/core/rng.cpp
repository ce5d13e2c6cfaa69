#include "servelab/core/rng.hpp"

#include <algorithm>

#include "servelab/core/seed_sequence.hpp"

namespace servelab {
namespace {

// FNV-1a: a fixed, platform-independent hash of the stream name.
std::uint64_t hash_name(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The 8 words seed_seq is given for a stream: its identity mixed into 4 words.
detail::SeedWords seed_words(std::uint64_t identity) {
  const std::uint64_t a = mix64(identity), b = mix64(a), c = mix64(b), d = mix64(c);
  return {static_cast<std::uint32_t>(a),       static_cast<std::uint32_t>(a >> 32), static_cast<std::uint32_t>(b),
          static_cast<std::uint32_t>(b >> 32), static_cast<std::uint32_t>(c),       static_cast<std::uint32_t>(c >> 32),
          static_cast<std::uint32_t>(d),       static_cast<std::uint32_t>(d >> 32)};
}

// The engine whose 312 words of state are the generated words (as seeding it with the seed_seq
// would make it).
Rng::Engine engine_from(const detail::StateWords& words) {
  auto first = words.begin();
  return Rng::Engine(first, words.end());
}

Rng::Engine seeded_engine(std::uint64_t identity) {
  const detail::SeedWords seed = seed_words(identity);
  detail::StateWords state;
  detail::generate_states({&seed, 1}, {&state, 1});
  return engine_from(state);
}

std::uint64_t child_identity(std::uint64_t parent, std::string_view name) {
  return mix64(parent ^ mix64(hash_name(name)));
}

}  // namespace

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Rng::Rng(std::uint64_t identity) : identity_(identity), engine_(seeded_engine(identity)) {}

Rng::Rng(std::uint64_t seed, std::string_view name) : Rng(mix64(seed) ^ hash_name(name)) {}

Rng Rng::derive(std::string_view name) const { return Rng(child_identity(identity_, name)); }

std::vector<Rng> Rng::derive_all(std::span<const std::string> names) const {
  constexpr std::size_t kChunk = 64;  // states made at once (2.5 KB each)
  std::vector<Rng> out;
  out.reserve(names.size());
  std::vector<std::uint64_t> ids;
  std::vector<detail::SeedWords> seeds;
  std::vector<detail::StateWords> states(std::min(kChunk, names.size()));
  for (std::size_t at = 0; at < names.size(); at += kChunk) {
    const std::size_t n = std::min(kChunk, names.size() - at);
    ids.clear();
    seeds.clear();
    for (std::size_t i = 0; i < n; ++i)
      seeds.push_back(seed_words(ids.emplace_back(child_identity(identity_, names[at + i]))));
    detail::generate_states(seeds, std::span(states).first(n));
    for (std::size_t i = 0; i < n; ++i) out.push_back(Rng(ids[i], engine_from(states[i])));
  }
  return out;
}

}  // namespace servelab
