// PyTorch's training step beside porta-bench train's cpu rows (bench/scripts/torch_train.py).
#include <fmt/core.h>

#include "models.hpp"
#include "train.hpp"

namespace porta::bench {

Row torch_training(const Problem& problem, int threads, const TrainSettings& train) {
  Row row{.op = problem.op, .workload = problem.workload, .params = problem.params,
          .device = torch_device_spec(threads), .backend = "pytorch", .impl = "eager", .dtype = "f32"};
  const Graph& g = problem.graph;
  const std::string arguments = fmt::format(
      "--model {} --batch {} --resolution {} --classes {} --images {} --epochs {} --lr {} --momentum {} "
      "--weight-decay {} --seed {}{}",
      problem.params["model"].get<std::string>(), problem.params["batch"].get<std::int64_t>(),
      problem.params["resolution"].get<std::int64_t>(), g.shape(g.outputs().at(0).second).back(), train.images,
      train.epochs, problem.params["learning_rate"].get<double>(), problem.params["momentum"].get<double>(),
      problem.params["weight_decay"].get<double>(), problem.params["seed"].get<std::uint64_t>(),
      problem.params.value("dropout", true) ? "" : " --no-dropout");
  const std::string out = run_script("torch_train", arguments, threads, {});
  const std::size_t brace = out.rfind("\n{");
  const Json result = Json::parse(brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  if (result.is_discarded() || !result.is_object() || result.contains("error")) {
    row.status = "unsupported";
    row.reason = result.is_object() && result.contains("error")
                     ? result["error"].get<std::string>()
                     : "python3 with PyTorch could not run: " + single_line(out.substr(0, 300));
    return row;
  }
  const std::int64_t steps = result["steps_per_epoch"].get<std::int64_t>();
  const double last = result["epoch_s"].back().get<double>();
  for (const char* key : {"epoch_s", "loss_first", "loss_last"}) row.params[key] = result[key];
  row.params["reference"] = result["version"];
  row.params["images"] = steps * problem.params["batch"].get<std::int64_t>();
  row.params["epochs"] = train.epochs;
  row.params["steps_per_epoch"] = steps;
  row.params["images_per_s"] = row.params["images"].get<double>() / last;
  row.timer = "host";
  row.samples = 1;
  row.median_s = row.min_s = row.host_median_s = row.host_min_s = last;
  row.reason = "not verified: torchvision's own initial weights, so the losses are comparable in size only";
  return row;
}

std::vector<Row> train_with_references(const Problem& problem, const Target& target, const RunSettings& settings,
                               const TrainSettings& train) {
  std::vector<Row> rows{run_training(problem, target, settings, train)};
  if (train.torch && target.device && target.backend == "cpu")
    rows.push_back(torch_training(problem, target.device->info().threads, train));
  return rows;
}

}  // namespace porta::bench
