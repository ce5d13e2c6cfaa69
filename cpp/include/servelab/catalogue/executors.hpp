// The executor registry of servelab._core: the serve area's entries and every other built-in one,
// built once on first use. Backend modules add theirs at import time through
// bindings::join_executor_registry (see servelab/serve/executor_registry.hpp).
#pragma once

#include "servelab/serve/executor_registry.hpp"

namespace servelab::catalogue {

const serve::ExecutorRegistry& executors();

}  // namespace servelab::catalogue
