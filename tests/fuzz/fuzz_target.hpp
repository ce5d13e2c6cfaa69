// What every fuzz target shares: the libFuzzer entry point, and the rule that a parser may refuse
// its input only with one of servelab's typed errors (they reach Python as ValueError, KeyError,
// RuntimeError, MemoryError). Anything else escaping (std::out_of_range from a container, a
// third-party parser's own exception) is a finding: it terminates the process, and libFuzzer (or
// the corpus replay test) reports it with the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "servelab/core/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace servelab::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `parse`, swallowing the typed errors a refused input is meant to raise.
template <typename Parse>
void refused_cleanly(Parse&& parse) {
  try {
    parse();
  } catch (const ValueError&) {
  } catch (const KeyError&) {
  } catch (const MemoryError&) {
  } catch (const RuntimeError&) {
  }
}

// A property of an accepted input that does not hold: abort, so the input is reported.
[[noreturn]] inline void violated() { __builtin_trap(); }

}  // namespace servelab::fuzz
