// The serving loop's executor for recommendation models: each batch's inputs are made from the
// batch's query ids (InputGenerator, so a query carries the same tensors however it is batched)
// and scored by the model. Registered as "recsys(model=..., backend=..., scale=..., ...)".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "servelab/exec/recsys/inputs.hpp"
#include "servelab/exec/recsys/model.hpp"
#include "servelab/serve/executor.hpp"
#include "servelab/serve/executor_registry.hpp"

namespace servelab::exec::recsys {

class RecsysExecutor final : public serve::Executor {
 public:
  // `threads`: the default for the "intra_op_threads" knob (0: the backend's own default).
  RecsysExecutor(std::shared_ptr<const RecsysModel> model, InputGenerator inputs, int threads, std::string spec);
  void run(const serve::ExecRequest& request) override;
  // "intra_op_threads" and "inter_op_threads" where the backend parallelises (oneDNN); none
  // otherwise. inter_op_threads (default 1) runs the bottom MLP and groups of embedding bags side
  // by side on that many threads, each with its intra-op threads; the scores do not change.
  std::vector<std::string> knobs() const override;
  // The inputs of an item: its dense floats and sparse indices.
  double bytes_per_item() const override;
  std::string describe() const override { return spec_; }
  // The scores of the last batch (for tests and inspection).
  const Matrix& last_output() const { return last_; }

 private:
  std::shared_ptr<const RecsysModel> model_;
  InputGenerator inputs_;
  int threads_;
  std::string spec_;
  Matrix last_;
  std::unique_ptr<InterOpPool> inter_op_;  // made when inter_op_threads > 1 is first asked for
};

// Adds "recsys" to the executor registry (servelab._core: every backend, by name).
void register_recsys_executors(serve::ExecutorRegistry& registry);

}  // namespace servelab::exec::recsys
