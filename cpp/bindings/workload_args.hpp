// Workload parts from Python: a size distribution or an arrival process, each given as a bound
// object or as a registry spec string. (Run limits, count= and horizon_s=, are in limits.hpp.)
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string_view>

#include "registry_binding.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/workload/arrival_registry.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/size_registry.hpp"
#include "servelab/workload/sizes.hpp"

namespace servelab::bindings {

// The spec a size error suggests unless the caller names a better one (Kairos: 'kairos_mix').
inline constexpr std::string_view kSizesExample = "'uniform(low=1, high=10)'";

// What to_sizes makes of None.
enum class NoneSizes {
  Rejected,  // ValueError: "<field>=None: give a size distribution or a spec string"
  SizeOne,   // nullptr: no distribution, every query has size 1 (an Application's default)
};

// A SizeDistribution or a spec string such as `example`; errors name `field`.
inline workload::SizePtr to_sizes(pybind11::handle value, std::string_view field, NoneSizes none = NoneSizes::Rejected,
                                  std::string_view example = kSizesExample) {
  if (value.is_none()) {
    if (none == NoneSizes::SizeOne) return nullptr;
    throw ValueError(str(field, "=None: give a size distribution or a spec string"));
  }
  return product_or_spec(value, field, workload::size_registry(), "a SizeDistribution", example);
}

// An ArrivalProcess or a spec string such as 'poisson(rate=100)' (the `arrivals` argument).
inline std::shared_ptr<const workload::ArrivalProcess> to_arrivals(pybind11::handle value) {
  return product_or_spec(value, "arrivals", workload::arrival_registry(), "an ArrivalProcess", "'poisson(rate=100)'");
}

}  // namespace servelab::bindings
