#include "servelab/core/build_info.hpp"

#include "servelab/build_config.hpp"

namespace servelab::core {

BuildInfo build_info() {
  BuildInfo info;
  info.version = SERVELAB_VERSION;
  info.compiler = SERVELAB_COMPILER;
  info.build_type = SERVELAB_BUILD_TYPE;
  info.cxx_standard = __cplusplus;
  info.onednn = {SERVELAB_HAS_ONEDNN != 0, SERVELAB_ONEDNN_VERSION, SERVELAB_HAS_ONEDNN ? "" : SERVELAB_ONEDNN_WHY_OFF};
  info.torch = {SERVELAB_HAS_TORCH != 0, SERVELAB_TORCH_VERSION, SERVELAB_HAS_TORCH ? "" : SERVELAB_TORCH_WHY_OFF};
  info.cuda = {SERVELAB_HAS_CUDA != 0, SERVELAB_CUDA_VERSION, SERVELAB_HAS_CUDA ? "" : SERVELAB_CUDA_WHY_OFF};
  info.cuda_architectures = SERVELAB_CUDA_ARCHITECTURES;
  return info;
}

}  // namespace servelab::core
