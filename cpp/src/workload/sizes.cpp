#include "servelab/workload/sizes.hpp"
