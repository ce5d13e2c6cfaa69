#include "servelab/exec/recsys/executor.hpp"

#include <chrono>
#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/exec/recsys/backends.hpp"

namespace servelab::exec::recsys {

RecsysExecutor::RecsysExecutor(std::shared_ptr<const RecsysModel> model, InputGenerator inputs, int threads,
                               std::string spec)
    : model_(std::move(model)), inputs_(std::move(inputs)), threads_(threads), spec_(std::move(spec)) {
  if (!model_) throw ValueError("recsys executor: model is null");
  if (threads < 0) throw ValueError(str("recsys executor: threads=", threads, " must be >= 0"));
}

std::vector<std::string> RecsysExecutor::knobs() const {
  if (model_->supports_threads()) return {"intra_op_threads", "inter_op_threads"};
  return {};
}

double RecsysExecutor::bytes_per_item() const {
  const Spec& s = model_->spec();
  return 4.0 * static_cast<double>(s.dense) + 8.0 * static_cast<double>(s.lookups_per_sample());
}

void RecsysExecutor::run(const serve::ExecRequest& request) {
  if (request.stop.stop_requested()) return;
  int threads = threads_;
  if (const auto it = request.config.find("intra_op_threads"); it != request.config.end()) {
    // 0 keeps the default; a negative count is a mistake, and checking before the int cast
    // keeps a huge one from wrapping round into a plausible count.
    if (it->second < 0 || it->second > RecsysModel::kMaxThreads) {
      throw ValueError(str(spec_, ": intra_op_threads=", it->second, " must be in [0, ", RecsysModel::kMaxThreads,
                           "] (0: the executor's default)"));
    }
    if (it->second > 0) threads = static_cast<int>(it->second);
  }
  const Inputs in = inputs_.batch(request.queries, request.sizes);
  InterOpPool* inter_op = nullptr;
  if (const auto it = request.config.find("inter_op_threads"); it != request.config.end() && it->second > 1) {
    if (it->second > InterOpPool::kMaxThreads) {
      throw ValueError(str(spec_, ": inter_op_threads=", it->second, " must be in 1..", InterOpPool::kMaxThreads));
    }
    if (!inter_op_ || inter_op_->threads() != it->second) {
      inter_op_.reset();  // its threads end before the new team starts
      inter_op_ = std::make_unique<InterOpPool>(static_cast<int>(it->second));
    }
    inter_op = inter_op_.get();
  } else if (it != request.config.end() && it->second < 0) {
    throw ValueError(str(spec_, ": inter_op_threads=", it->second, " must be in 1..", InterOpPool::kMaxThreads));
  }
  const auto start = std::chrono::steady_clock::now();
  last_ = model_->run(in.view(), threads, inter_op);
  if (request.report != nullptr) {
    request.report->compute =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  }
}

namespace {

class RecsysBuilder final : public serve::ExecutorBuilder {
 public:
  explicit RecsysBuilder(const Params& p) : spec_text_(p.describe()) {
    Spec spec = scaled(builtin(p.get_string("model")), p.get_float("scale"));
    if (const auto& interaction = p.get_string("interaction"); !interaction.empty()) {
      spec = with_interaction(std::move(spec), parse_interaction(interaction));
    }
    const auto seed = static_cast<std::uint64_t>(p.get_int("seed"));
    Weights weights = Weights::random(spec, seed);
    distribution_ = parse_distribution(p.get_string("distribution"), "recsys: distribution");
    threads_ = static_cast<int>(p.get_int("intra_op_threads"));
    model_ = make_model(p.get_string("backend"), std::move(spec), std::move(weights));
  }

  std::unique_ptr<serve::Executor> build(const serve::ExecutorContext& context) const override {
    return std::make_unique<RecsysExecutor>(model_, InputGenerator(model_->spec(), context.seed, {distribution_}),
                                            threads_, spec_text_);
  }
  std::string describe() const override { return spec_text_; }

 private:
  std::string spec_text_;
  IndexDistribution distribution_;
  int threads_ = 0;
  std::shared_ptr<const RecsysModel> model_;  // shared by every worker: run() is thread-safe
};

std::vector<std::string> with_empty(std::vector<std::string> names) {
  names.insert(names.begin(), "");
  return names;
}

ParamSpec param(std::string name, ParamType type, ParamValue default_value, std::string doc) {
  ParamSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.default_value = std::move(default_value);
  spec.doc = std::move(doc);
  return spec;
}

}  // namespace

void register_recsys_executors(serve::ExecutorRegistry& registry) {
  ParamSpec model = param("model", ParamType::String, std::string(), "the built-in recommendation model");
  model.default_value.reset();  // required
  model.choices = model_names();
  ParamSpec backend = param("backend", ParamType::String, std::string("reference"),
                            "reference (plain C++), onednn (CPU) or cuda (GPU)");
  backend.choices = backend_names();
  ParamSpec scale = param("scale", ParamType::Float, 0.01, "embedding table rows as a fraction of the full model's");
  scale.min = 0.0;
  scale.min_exclusive = true;
  scale.max = 1.0;
  ParamSpec seed = param("seed", ParamType::Int, std::int64_t{0}, "seed of the weights");
  seed.min = 0;
  ParamSpec interaction = param("interaction", ParamType::String, std::string(""),
                                "'' (the model's own), 'cat' or 'dot' (DLRM's pairwise dot products)");
  interaction.choices = with_empty({"cat", "dot"});
  ParamSpec distribution = param("distribution", ParamType::String, std::string("uniform"),
                                 "sparse index distribution of every table: uniform, zipf or zipf:<exponent>");
  ParamSpec threads = param("intra_op_threads", ParamType::Int, std::int64_t{0},
                            "threads per batch where the backend parallelises (0: its default); the worker knob "
                            "intra_op_threads overrides it");
  threads.min = 0;
  threads.max = RecsysModel::kMaxThreads;
  registry.add({"recsys",
                "Scores each batch with a built-in recommendation model (DLRM RM1-3, Wide&Deep, MT-WnD, NCF, DIN, "
                "DIEN) on real inputs made from the batch's query ids.",
                {model, backend, scale, seed, interaction, distribution, threads},
                [](const Params& p) { return std::make_shared<RecsysBuilder>(p); }});
}

}  // namespace servelab::exec::recsys
