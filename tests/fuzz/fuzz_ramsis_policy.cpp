// RAMSIS policy documents (a worker policy or a policy set, JSON): any_policy_set_from_json must
// refuse bad documents with a ValueError; an accepted one must write back to the same JSON and
// answer decide() for any queue length, slack and load without reading out of bounds.
#include <string>

#include "fuzz_target.hpp"
#include "servelab/systems/ramsis/policy.hpp"

using namespace servelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::as_text(data, size));
  fuzz::refused_cleanly([&] {
    const ramsis::PolicySet set = ramsis::any_policy_set_from_json(text);
    const std::string written = ramsis::to_json(set);
    if (ramsis::to_json(ramsis::policy_set_from_json(written)) != written) fuzz::violated();
    for (const double load : {0.0, 1.0, 1e3, 1e9}) {
      const auto& policy = set.lookup(load);
      for (const std::int32_t queue : {0, 1, 2, policy.max_queue, policy.max_queue + 1, 1 << 30}) {
        for (const Nanos slack : {Nanos{-1}, Nanos{0}, set.slo / 2, set.slo, set.slo * 4}) {
          const auto action = set.decide(load, queue, slack);
          if (action.batch > queue || action.batch < 0) fuzz::violated();  // never more than queued
        }
      }
    }
  });
  return 0;
}
