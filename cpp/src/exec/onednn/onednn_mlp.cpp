#include "servelab/exec/onednn_mlp.hpp"

#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <utility>
#include <vector>

#include "servelab/core/errors.hpp"

namespace servelab::exec {
namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

// One layer compiled for one batch size, weights already reordered to the primitive's layout.
struct CompiledLayer {
  dnnl::inner_product_forward primitive;
  memory weights;
  memory bias;
  memory::desc dst_desc;
  memory::desc scratchpad_desc;  // each call brings its own, so concurrent calls never share one
};

dnnl::inner_product_forward::primitive_desc make_layer_desc(const dnnl::engine& engine, memory::dim batch,
                                                            const LinearLayer& layer, bool relu) {
  const memory::dim out = layer.weight.rows, in = layer.weight.cols;
  const memory::desc src_md({batch, in}, dt::f32, tag::nc);
  const memory::desc weights_md({out, in}, dt::f32, tag::any);  // let oneDNN pick the fast layout
  const memory::desc bias_md({out}, dt::f32, tag::a);
  const memory::desc dst_md({batch, out}, dt::f32, tag::nc);
  dnnl::post_ops ops;
  dnnl::primitive_attr attr;
  // The default library-owned scratchpad is shared between threads unless oneDNN was built with
  // DNNL_ENABLE_CONCURRENT_EXEC (Debian's is not): concurrent run() calls then corrupt each other.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
#if DNNL_VERSION_MAJOR >= 3
  if (relu) ops.append_eltwise(dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(ops);
  return {engine, dnnl::prop_kind::forward_inference, src_md, weights_md, bias_md, dst_md, attr};
#else
  if (relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(ops);
  const dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, src_md, weights_md, bias_md, dst_md);
  return {desc, attr, engine};
#endif
}

}  // namespace

struct OneDnnMlp::Impl {
  MlpWeights weights;
  bool relu_after_last = false;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;
  std::map<memory::dim, std::shared_ptr<const std::vector<CompiledLayer>>> plans;  // by batch size

  std::shared_ptr<const std::vector<CompiledLayer>> plan_for(memory::dim batch) {
    std::lock_guard lock(mutex);
    auto& plan = plans[batch];
    if (!plan) plan = compile(batch);
    return plan;
  }

  std::shared_ptr<const std::vector<CompiledLayer>> compile(memory::dim batch) {
    auto layers = std::make_shared<std::vector<CompiledLayer>>();
    dnnl::stream stream(engine);
    for (std::size_t l = 0; l < weights.layers.size(); ++l) {
      auto& layer = weights.layers[l];
      const auto pd = make_layer_desc(engine, batch, layer, l + 1 < weights.layers.size() || relu_after_last);
      memory plain({{layer.weight.rows, layer.weight.cols}, dt::f32, tag::oi}, engine, layer.weight.data.data());
      memory packed(pd.weights_desc(), engine);
      dnnl::reorder(plain, packed).execute(stream, plain, packed);
      memory bias({{layer.weight.rows}, dt::f32, tag::a}, engine, layer.bias.data());
      layers->push_back({dnnl::inner_product_forward(pd), packed, bias, pd.dst_desc(), pd.scratchpad_desc()});
    }
    stream.wait();
    return layers;
  }
};

OneDnnMlp::OneDnnMlp(MlpWeights weights, bool relu_after_last) : impl_(std::make_unique<Impl>()) {
  weights.validate();
  impl_->weights = std::move(weights);
  impl_->relu_after_last = relu_after_last;
}

OneDnnMlp::~OneDnnMlp() = default;

std::int64_t OneDnnMlp::in_features() const { return impl_->weights.in_features(); }

Matrix OneDnnMlp::run(const MatrixView& input) const {
  impl_->weights.check_input(input);
  try {
    const auto plan = impl_->plan_for(input.rows);
    dnnl::stream stream(impl_->engine);
    // oneDNN takes non-const handles; the source is only read.
    memory src({{input.rows, input.cols}, dt::f32, tag::nc}, impl_->engine, const_cast<float*>(input.data));
    Matrix out;
    for (const auto& layer : *plan) {
      Matrix dst(input.rows, layer.dst_desc.dims()[1]);
      memory dst_mem(layer.dst_desc, impl_->engine, dst.data.data());
      memory scratchpad(layer.scratchpad_desc, impl_->engine);
      layer.primitive.execute(stream, {{DNNL_ARG_SRC, src},
                                       {DNNL_ARG_WEIGHTS, layer.weights},
                                       {DNNL_ARG_BIAS, layer.bias},
                                       {DNNL_ARG_DST, dst_mem},
                                       {DNNL_ARG_SCRATCHPAD, scratchpad}});
      stream.wait();
      out = std::move(dst);
      src = memory(layer.dst_desc, impl_->engine, out.data.data());
    }
    return out;
  } catch (const dnnl::error& e) {
    throw RuntimeError(str("oneDNN failed (status ", static_cast<int>(e.status), "): ", e.what()));
  }
}

std::string onednn_runtime_version() {
  const dnnl_version_t* v = dnnl_version();
  return str(v->major, ".", v->minor, ".", v->patch);
}

}  // namespace servelab::exec
