#pragma once
// Whole networks built with porta's graph builder, the way torchvision defines them (inference:
// conv, batchnorm, activation; the compiler folds and fuses). Weights are seeded random values of
// a sensible scale, the same for the same seed on every machine: these graphs measure speed and
// memory, they do not classify anything.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "porta/graph.hpp"

namespace porta::models {

struct ModelOptions {
  std::int64_t batch = 1;
  std::int64_t resolution = 0;  // input height and width; 0 = the model's native resolution
  std::int64_t classes = 1000;
  DType dtype = DType::f32;
  std::uint64_t seed = 1;
  std::int64_t seq = 0;     // BERT's sequence length; 0 = 128
  std::int64_t layers = 0;  // the transformers' encoder layers; 0 = the model's own (12, or 24 for bert-large)
  // The regularisation torchvision trains the model with, as Graph::dropout nodes whose step is a
  // run counter (autodiff::step_counter, "dropout.step"): EfficientNet's stochastic depth on each
  // residual branch (0 rising to 0.2 over the blocks) and dropout before the classifier (0.2 for B0
  // to 0.5 for B7), MobileNet-V2's dropout 0.2 before the classifier. Other models are unchanged.
  bool training = false;
};

// Input "input" [batch, 3, resolution, resolution]; output "logits" [batch, classes].
Graph resnet50(const ModelOptions& options = {});
// variant 0..7: B0 at 224 px through B7 at 600 px, with compound width and depth scaling.
Graph efficientnet(int variant, const ModelOptions& options = {});
// MobileNet-V2 (width 1.0) at 224 px.
Graph mobilenet_v2(const ModelOptions& options = {});
// BERT as Devlin et al. (2019) define it, from token ids: the embeddings (word, position and segment
// tables, 30522, 512 and 2 rows, summed and normalised), post-LN layers with GELU (erf) and a
// feed-forward of 4x hidden, and the pooler; base: 12 layers, hidden 768, 12 heads; large: 24, 1024,
// 16. Inputs "input_ids" and "token_type_ids" (i64 [batch, seq], seq at most 512) and
// "attention_mask" ([batch, seq] in the model's dtype: 1 for a token, 0 for padding, which no token
// attends to); outputs "hidden" [batch, seq, hidden] and "pooled" [batch, hidden] (tanh of a dense
// layer on the first token).
Graph bert(bool large, const ModelOptions& options = {});
// ViT-B/16 as torchvision's vit_b_16: 16x16 patches of 224 px, class token, position embedding,
// 12 pre-LN layers of hidden 768 and 12 heads, the head on the class token.
Graph vit_b16(const ModelOptions& options = {});

struct ModelInfo {
  std::string name;             // "resnet50", "efficientnet-b0" ... "efficientnet-b7", "mobilenet-v2", "bert-base",
                                // "bert-large", "vit-b16"
  std::int64_t resolution = 0;  // native input size; 0 for BERT, whose input is a sequence
  bool transformer = false;
};

std::vector<ModelInfo> available();  // every model `build` knows
// A model by name; throws NotFound listing the known names.
Graph build(std::string_view name, const ModelOptions& options = {});

}  // namespace porta::models
