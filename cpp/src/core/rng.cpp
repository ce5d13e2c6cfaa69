#include "servelab/core/rng.hpp"

#include <random>

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

Rng::Engine seeded_engine(std::uint64_t identity) {
  // Seed all 312 words of state through seed_seq (specified by the standard) from 4 mixed words.
  const std::uint64_t a = mix64(identity), b = mix64(a), c = mix64(b), d = mix64(c);
  std::seed_seq seq{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
                    static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32),
                    static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32),
                    static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(d >> 32)};
  return Rng::Engine(seq);
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

Rng Rng::derive(std::string_view name) const { return Rng(mix64(identity_ ^ mix64(hash_name(name)))); }

}  // namespace servelab
