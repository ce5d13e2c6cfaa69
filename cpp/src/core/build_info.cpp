#include "servelab/core/build_info.hpp"

#include "servelab/build_config.hpp"

namespace servelab::core {

BuildInfo build_info() {
  BuildInfo info;
  info.version = SERVELAB_VERSION;
  info.compiler = SERVELAB_COMPILER;
  info.build_type = SERVELAB_BUILD_TYPE;
  info.cxx_standard = __cplusplus;
  info.onednn = {SERVELAB_HAS_ONEDNN != 0, SERVELAB_ONEDNN_VERSION};
  info.torch = {SERVELAB_HAS_TORCH != 0, SERVELAB_TORCH_VERSION};
  info.cuda = {SERVELAB_HAS_CUDA != 0, SERVELAB_CUDA_VERSION};
  info.cuda_architectures = SERVELAB_CUDA_ARCHITECTURES;
  return info;
}

}  // namespace servelab::core
