// What memory the machine has left, for checks that refuse a run up front instead of letting it
// fail (or the system swap) after allocating most of what a too-large input asks for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace servelab::core {

// Bytes the system can still give this process without swapping: MemAvailable from /proc/meminfo
// (Linux), else the free physical pages; nullopt when neither is known.
std::optional<std::uint64_t> available_memory_bytes();

// "1.5 GB", "740 MB", "12 kB": three significant digits at most, decimal units.
std::string format_bytes(double bytes);

}  // namespace servelab::core
