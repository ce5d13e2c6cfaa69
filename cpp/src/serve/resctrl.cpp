#include "servelab/serve/resctrl.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "servelab/core/errors.hpp"

namespace servelab::serve {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// The whole file, or "" with `error` set to the system's reason.
std::string read_text(const fs::path& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = str(path.string(), ": ", std::strerror(errno));
    return {};
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ResctrlSupport unsupported(ResctrlSupport s, std::string reason) {
  s.supported = false;
  s.reason = std::move(reason);
  return s;
}

// An optional small integer file under info/L3; `fallback` when absent or unreadable.
int read_int(const fs::path& path, int fallback) {
  std::string error;
  const auto text = trim(read_text(path, error));
  if (!error.empty() || text.empty()) return fallback;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return fallback;
  }
}

// Writes `text` to an existing resctrl file (or a new plain file in a stand-in tree).
void write_file(const fs::path& path, const std::string& text, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  if (fd < 0) throw RuntimeError(str("resctrl: open ", path.string(), ": ", std::strerror(errno)));
  const auto written = ::write(fd, text.data(), text.size());
  const int write_errno = errno;
  ::close(fd);
  // The kernel checks a schemata or tasks write when it is made: the reason arrives here.
  if (written != static_cast<ssize_t>(text.size()))
    throw RuntimeError(str("resctrl: write '", trim(text), "' to ", path.string(), ": ",
                           written < 0 ? std::strerror(write_errno) : "short write"));
}

}  // namespace

ResctrlSupport probe_resctrl(const fs::path& root) {
  ResctrlSupport s;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return unsupported(s, str(root.string(), " does not exist (no resctrl: kernel or CPU without CAT)"));
  if (!fs::exists(root / "schemata", ec))
    return unsupported(s, str(root.string(), " is not mounted (mount -t resctrl resctrl ", root.string(), ")"));
  const auto info = root / "info" / "L3";
  if (!fs::is_directory(info, ec))
    return unsupported(s,
                       str(info.string(), " is absent: no L3 cache allocation (or CDP's L3CODE/L3DATA, not handled)"));
  std::string error;
  s.cbm_mask = trim(read_text(info / "cbm_mask", error));
  if (!error.empty()) return unsupported(s, error);
  try {
    std::size_t used = 0;
    s.full_mask = std::stoull(s.cbm_mask, &used, 16);
    if (used != s.cbm_mask.size()) s.full_mask = 0;
  } catch (const std::exception&) {
    s.full_mask = 0;
  }
  s.first_way = s.full_mask ? std::countr_zero(s.full_mask) : 0;
  s.ways = std::popcount(s.full_mask);
  // Contiguous: shifted down to bit 0, the mask is 2^ways - 1.
  if (s.full_mask == 0 || std::countr_one(s.full_mask >> s.first_way) != s.ways)
    return unsupported(s, str((info / "cbm_mask").string(), ": '", s.cbm_mask, "' is not a contiguous hex bit mask"));
  s.min_ways = std::max(1, read_int(info / "min_cbm_bits", 1));
  s.num_closids = read_int(info / "num_closids", 0);
  const auto schemata = read_text(root / "schemata", error);
  if (!error.empty()) return unsupported(s, error);
  std::istringstream lines(schemata);
  for (std::string line; std::getline(lines, line);) {
    line = trim(line);
    if (line.rfind("L3:", 0) != 0) continue;
    std::istringstream items(line.substr(3));
    for (std::string item; std::getline(items, item, ';');) {
      const auto eq = item.find('=');
      if (eq != std::string::npos && !trim(item.substr(0, eq)).empty()) s.domains.push_back(trim(item.substr(0, eq)));
    }
    break;
  }
  if (s.domains.empty()) return unsupported(s, str((root / "schemata").string(), " has no L3 line with cache domains"));
  if (::access(root.c_str(), W_OK) != 0)
    return unsupported(s, str(root.string(), " is not writable by this user (uid ", ::getuid(), "): groups need root"));
  s.supported = true;
  return s;
}

std::string cat_mask(const ResctrlSupport& support, std::int64_t ways, bool low) {
  if (ways < support.min_ways || ways > support.ways)
    throw ValueError(str("llc_ways=", ways, " does not fit this L3: it takes ", support.min_ways, "..", support.ways,
                         " ways (cbm_mask ", support.cbm_mask, ")"));
  const auto n = static_cast<int>(ways);
  const std::uint64_t run = n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  const int shift = low ? support.first_way : support.first_way + support.ways - n;
  std::ostringstream hex;
  hex << std::hex << (run << shift);
  return hex.str();
}

std::string cat_mask_at(const ResctrlSupport& support, std::int64_t first, std::int64_t ways) {
  if (ways < support.min_ways || ways > support.ways)
    throw ValueError(str("llc_ways=", ways, " does not fit this L3: it takes ", support.min_ways, "..", support.ways,
                         " ways (cbm_mask ", support.cbm_mask, ")"));
  if (first < 0 || first + ways > support.ways)
    throw ValueError(str("llc_ways=", ways, " from way ", first, " does not fit this L3's ", support.ways,
                         " ways (cbm_mask ", support.cbm_mask, "): the machines' and instances' ways add up to more"));
  const auto n = static_cast<int>(ways);
  const std::uint64_t run = n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  std::ostringstream hex;
  hex << std::hex << (run << (support.first_way + static_cast<int>(first)));
  return hex.str();
}

std::string schemata_line(const ResctrlSupport& support, const std::string& mask) {
  std::string out = "L3:";
  for (std::size_t i = 0; i < support.domains.size(); ++i) out += str(i ? ";" : "", support.domains[i], "=", mask);
  return out + "\n";
}

void create_group(const fs::path& dir, const std::string& schemata) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    // ENOSPC: every CLOSID (info/L3/num_closids) is taken by a group.
    throw RuntimeError(str("resctrl: mkdir ", dir.string(), ": ", std::strerror(errno)));
  }
  write_schemata(dir, schemata);
}

void write_schemata(const fs::path& dir, const std::string& schemata) {
  write_file(dir / "schemata", schemata, O_TRUNC);
}

void add_task(const fs::path& dir, std::int64_t tid) {
  // Appending keeps every member in a stand-in tree's plain file; the kernel just moves the task.
  write_file(dir / "tasks", str(tid, "\n"), O_APPEND);
}

void remove_group(const fs::path& dir) {
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
  if (errno == ENOTEMPTY || errno == EEXIST) {  // a plain directory standing in for resctrl
    for (const char* name : {"schemata", "tasks"}) {
      std::error_code ec;
      if (fs::is_regular_file(dir / name, ec)) fs::remove(dir / name, ec);
    }
    if (::rmdir(dir.c_str()) == 0) return;
  }
  throw RuntimeError(str("resctrl: rmdir ", dir.string(), ": ", std::strerror(errno)));
}

}  // namespace servelab::serve
