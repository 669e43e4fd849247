// Models by name, for porta-bench and porta-run.
#include <string>

#include "porta/error.hpp"
#include "porta/models.hpp"

namespace porta::models {

std::vector<ModelInfo> available() {
  std::vector<ModelInfo> list{{"resnet50", 224}};
  constexpr std::int64_t resolutions[] = {224, 240, 260, 300, 380, 456, 528, 600};
  for (int v = 0; v < 8; ++v) list.push_back({"efficientnet-b" + std::to_string(v), resolutions[v]});
  list.push_back({"mobilenet-v2", 224});
  list.push_back({"bert-base", 0, true});
  list.push_back({"bert-large", 0, true});
  list.push_back({"vit-b16", 224, true});
  return list;
}

Graph build(std::string_view name, const ModelOptions& options) {
  if (name == "resnet50") return resnet50(options);
  if (name == "mobilenet-v2") return mobilenet_v2(options);
  if (name == "bert-base" || name == "bert-large") return bert(name == "bert-large", options);
  if (name == "vit-b16") return vit_b16(options);
  constexpr std::string_view prefix = "efficientnet-b";
  if (name.size() == prefix.size() + 1 && name.starts_with(prefix) && name.back() >= '0' && name.back() <= '7')
    return efficientnet(name.back() - '0', options);
  std::string known;
  for (const ModelInfo& m : available()) known += (known.empty() ? "" : ", ") + m.name;
  throw Error(ErrorCode::NotFound, "unknown model '" + std::string(name) + "'; known models: " + known);
}

}  // namespace porta::models
