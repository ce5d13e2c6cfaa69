// The size distributions by name: make("lognormal(mu=5.1, sigma=0.2)"), or list them with their
// parameters. Composites take their parts as spec strings: mixture(components='uniform(low=1,
// high=99); constant(value=150)', weights=[1, 3]).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "servelab/core/registry.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::workload {

// Filled with the built-in distributions and the presets (kairos_mix, ribbon_mix) on first use.
const Registry<SizeDistribution>& size_registry();

// Splits "a(x=1); b(y='p;q')" at the semicolons outside brackets and quotes, trimming spaces;
// throws ValueError naming `field` for an empty part.
std::vector<std::string> split_specs(std::string_view specs, const char* field);

}  // namespace servelab::workload
