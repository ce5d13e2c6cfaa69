// The systems' schedulers (Kairos, RAMSIS, their baselines) live in their own areas, which depend
// on sched, so sched's registry cannot list them itself. install_system_schedulers() adds them
// once (idempotent, thread-safe); the Python module and the systems' tests call it.
#pragma once

namespace servelab::systems {
void install_system_schedulers();
}  // namespace servelab::systems
