#include "servelab/workload/workload.hpp"
