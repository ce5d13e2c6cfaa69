// Linux resctrl (Intel CAT) as the serving loop uses it: whether L3 cache allocation can be used
// under a resctrl root, the contiguous capacity bit masks (CBMs) it accepts, and the group files.
//
// Nothing here is simulated: every call reads or writes the files under the root. A plain
// directory laid out like resctrl (info/L3/cbm_mask, schemata, tasks) stands in for it in tests;
// mkdir and the writes then create ordinary files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace servelab::serve {

inline constexpr const char* kResctrlRoot = "/sys/fs/resctrl";

// What the root offers, read once at a run's start.
struct ResctrlSupport {
  bool supported = false;
  std::string reason;                // why not (supported: "")
  std::string cbm_mask;              // info/L3/cbm_mask as written there, e.g. "7ff"
  std::uint64_t full_mask = 0;       // the same, parsed: every way of the L3
  int ways = 0;                      // its set bits
  int first_way = 0;                 // its lowest set bit
  int min_ways = 1;                  // info/L3/min_cbm_bits (1 when the file is absent)
  int num_closids = 0;               // info/L3/num_closids (0 when absent): how many groups fit
  std::vector<std::string> domains;  // the L3 cache ids of the root's schemata line, e.g. {"0", "1"}
};

// Checks, in order: the root is a folder, it is mounted (has a schemata file), info/L3 exists
// (without it the CPU has no L3 CAT, or CDP splits it into L3CODE/L3DATA, not handled here),
// cbm_mask is a contiguous non-empty hex mask, the root's schemata has an L3 line, and the root
// is writable by this process. The first check that fails gives `reason`.
ResctrlSupport probe_resctrl(const std::filesystem::path& root);

// The CBM of `ways` contiguous ways at the low end of the cache (low = true) or at its high end,
// as lowercase hex. ValueError naming llc_ways when it is below min_ways or above the cache's ways.
std::string cat_mask(const ResctrlSupport& support, std::int64_t ways, bool low);
// The CBM of `ways` contiguous ways from way `first` (0: the cache's lowest way). ValueError
// naming llc_ways and the first way when they do not fit the cache.
std::string cat_mask_at(const ResctrlSupport& support, std::int64_t first, std::int64_t ways);

// The schemata line giving every L3 domain `mask`: "L3:0=ff;1=ff\n".
std::string schemata_line(const ResctrlSupport& support, const std::string& mask);

// Creates group `dir` (existing is fine), writes its schemata and moves task `tid` (a thread id)
// into it. RuntimeError naming the file and the system's reason when the kernel refuses.
void create_group(const std::filesystem::path& dir, const std::string& schemata);
void write_schemata(const std::filesystem::path& dir, const std::string& schemata);
void add_task(const std::filesystem::path& dir, std::int64_t tid);

// Removes group `dir` (its tasks go back to the root group). A plain directory standing in for
// resctrl holds schemata and tasks as ordinary files, which are removed first. RuntimeError with
// the reason when it cannot.
void remove_group(const std::filesystem::path& dir);

}  // namespace servelab::serve
