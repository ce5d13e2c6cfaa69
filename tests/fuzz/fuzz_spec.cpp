// Registry spec strings ("poisson(rate=100)"): parse_spec, then the typed-parameter checks of
// every arrival process and size distribution the name may refer to, and building and sampling a
// size distribution (the arrival processes are only checked: some read files named in the spec).
#include <string>

#include "fuzz_target.hpp"
#include "servelab/core/registry.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/workload/arrival_registry.hpp"
#include "servelab/workload/size_registry.hpp"

using namespace servelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::refused_cleanly([&] {
    const auto [name, args] = parse_spec(text);
    // A parsed name is never empty, and described parameters parse back to the same arguments.
    if (name.empty()) fuzz::violated();
    fuzz::refused_cleanly([&, &name = name, &args = args] {
      const auto entry = workload::arrival_registry().find(name);
      const Params params(entry->name, entry->params, args);
      // What describe() writes (run metadata, scenario files) must parse back to the same entry.
      try {
        if (parse_spec(params.describe()).first != entry->name) fuzz::violated();
      } catch (const ValueError&) {
        fuzz::violated();
      }
    });
    fuzz::refused_cleanly([&, &name = name, &args = args] {
      const auto sizes = workload::size_registry().make(name, args);
      Rng rng(0, "fuzz");
      for (int i = 0; i < 16; ++i) {
        if (sizes->sample(rng) < 1) fuzz::violated();  // sizes are integers >= 1
      }
    });
  });
  return 0;
}
