#include "servelab/sched/scheduler.hpp"

namespace servelab::sched {

std::string_view worker_status_name(WorkerStatus status) {
  switch (status) {
    case WorkerStatus::Starting:
      return "starting";
    case WorkerStatus::Idle:
      return "idle";
    case WorkerStatus::Busy:
      return "busy";
    case WorkerStatus::Loading:
      return "loading";
    case WorkerStatus::Stopped:
      return "stopped";
  }
  return "unknown";
}

}  // namespace servelab::sched
