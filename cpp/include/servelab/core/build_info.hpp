// What this build of servelab was compiled with. Whether a backend is usable now (a GPU present,
// the torch it was built against still installed) is decided at run time by the Python layer.
#pragma once

#include <string>

namespace servelab::core {

struct BackendBuild {
  bool compiled = false;
  std::string version;  // library version the backend was compiled against; empty if not compiled
  std::string why_off;  // why configure left it out (empty when compiled)
};

struct BuildInfo {
  std::string version;
  std::string compiler;
  std::string build_type;
  long cxx_standard = 0;
  BackendBuild onednn;
  BackendBuild torch;
  BackendBuild cuda;
  std::string cuda_architectures;
};

BuildInfo build_info();

}  // namespace servelab::core
