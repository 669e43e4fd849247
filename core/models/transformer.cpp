// Transformer encoders: BERT (post-LN, from token ids) and ViT-B/16 (pre-LN), their attention one fused
// node each.
// Parameters carry the names of the frameworks' state dicts (Hugging Face's BertModel without its
// "bert." prefix, torchvision's vit_b_16 with in_proj split into .q/.k/.v), so that a reference can
// load the very same weights.
#include <cmath>
#include <string>
#include <vector>

#include "core/models/layers.hpp"
#include "porta/error.hpp"
#include "porta/models.hpp"

namespace porta::models {
namespace {

using detail::Layers;

struct EncoderShape {
  std::int64_t batch, seq, hidden, heads;
};

// x [batch * seq, hidden] -> [batch, heads, seq, head_dim], as attention reads it.
Tensor split_heads(Graph& g, Tensor x, const EncoderShape& e, const std::string& name) {
  return g.transpose(g.reshape(x, {e.batch, e.seq, e.heads, e.hidden / e.heads}, name + "/split"), {0, 2, 1, 3},
                     name + "/heads");
}

// Multi-head self-attention over x [batch * seq, hidden]: the q, k and v projections (named by
// `projection`), one attention node (with an additive `mask` if given), the heads merged back to
// [batch * seq, hidden].
template <class Projection>
Tensor self_attention(Layers& l, Tensor x, const EncoderShape& e, Projection projection, const std::string& name,
                      Tensor mask = {}) {
  const Tensor q = split_heads(l.g, projection(x, "q"), e, name + ".q");
  const Tensor k = split_heads(l.g, projection(x, "k"), e, name + ".k");
  const Tensor v = split_heads(l.g, projection(x, "v"), e, name + ".v");
  const Tensor y = l.g.attention(q, k, v, {}, mask, name + "/attention");
  return l.g.reshape(l.g.transpose(y, {0, 2, 1, 3}, name + "/merge"), {e.batch * e.seq, e.hidden}, name + "/merged");
}

Tensor feed_forward(Layers& l, Tensor x, std::int64_t hidden, const std::string& up, const std::string& down) {
  return l.linear(l.g.gelu(l.linear(x, 4 * hidden, up), {}, up + "/gelu"), hidden, down);
}

// One BERT layer: attention, add, LayerNorm; feed-forward, add, LayerNorm (epsilon 1e-12).
Tensor bert_layer(Layers& l, Tensor x, Tensor mask, const EncoderShape& e, const std::string& name) {
  const auto projection = [&](Tensor in, const std::string& which) {
    const std::string layer = which == "q" ? "query" : which == "k" ? "key" : "value";
    return l.linear(in, e.hidden, name + ".attention.self." + layer);
  };
  const Tensor attended = self_attention(l, x, e, projection, name + ".attention.self", mask);
  const Tensor projected = l.linear(attended, e.hidden, name + ".attention.output.dense");
  x = l.layer_norm(l.g.add(projected, x, name + ".attention.output/residual"), 1e-12f,
                   name + ".attention.output.LayerNorm");
  const Tensor ffn = feed_forward(l, x, e.hidden, name + ".intermediate.dense", name + ".output.dense");
  return l.layer_norm(l.g.add(ffn, x, name + ".output/residual"), 1e-12f, name + ".output.LayerNorm");
}

// One ViT layer: x + attention(LN(x)), then x + MLP(LN(x)) (epsilon 1e-6).
Tensor vit_layer(Layers& l, Tensor x, const EncoderShape& e, const std::string& name) {
  const std::string attention = name + ".self_attention";
  const auto projection = [&](Tensor in, const std::string& which) {
    return l.linear(in, e.hidden, attention + ".in_proj_weight." + which, attention + ".in_proj_bias." + which,
                    attention + ".in_proj." + which);
  };
  const Tensor attended = self_attention(l, l.layer_norm(x, 1e-6f, name + ".ln_1"), e, projection, attention);
  x = l.g.add(x, l.linear(attended, e.hidden, attention + ".out_proj"), name + "/residual_1");
  const Tensor normed = l.layer_norm(x, 1e-6f, name + ".ln_2");
  const Tensor mlp = feed_forward(l, normed, e.hidden, name + ".mlp.0", name + ".mlp.3");
  return l.g.add(x, mlp, name + "/residual_2");
}

// BERT's vocabulary (WordPiece), segments and positions, as the paper's released models have them.
constexpr std::int64_t bert_vocabulary = 30522, bert_segments = 2, bert_positions = 512;

// The embeddings as Hugging Face's BertEmbeddings sums them: the rows of the token ids ("input_ids")
// and the segment ids ("token_type_ids"), both i64 [batch, seq], and of the positions 0 .. seq-1,
// whose lookup is the table's first seq rows; then LayerNorm. Returns [batch * seq, hidden].
Tensor bert_embeddings(Layers& l, const EncoderShape& e) {
  Graph& g = l.g;
  const auto table = [&](const std::string& what, std::int64_t rows) {
    return l.random("embeddings." + what + "_embeddings.weight", {rows, e.hidden}, -0.1f, 0.1f);
  };
  const Tensor ids = g.input("input_ids", {e.batch, e.seq}, DType::i64);
  const Tensor segments = g.input("token_type_ids", {e.batch, e.seq}, DType::i64);
  const Tensor words = g.gather(table("word", bert_vocabulary), ids, 0, "embeddings/words");
  const Tensor typed = g.add(words, g.gather(table("token_type", bert_segments), segments, 0, "embeddings/segments"),
                             "embeddings/typed");
  const Tensor positions = g.slice(table("position", bert_positions),
                                   {.starts = {0}, .ends = {e.seq}, .axes = {0}, .steps = {1}}, "embeddings/positions");
  const Tensor sum = g.add(typed, positions, "embeddings/sum");
  return l.layer_norm(g.reshape(sum, {e.batch * e.seq, e.hidden}, "embeddings/rows"), 1e-12f, "embeddings.LayerNorm");
}

// "attention_mask" [batch, seq] (1 keeps a token, 0 hides it: padding) as the BERT code adds it to
// every score: (mask - 1) * 10000, as [batch, 1, 1, seq] for every head and query.
Tensor bert_mask(Graph& g, DType dtype, const EncoderShape& e) {
  const Tensor mask = g.input("attention_mask", {e.batch, e.seq}, dtype);
  const Tensor one = g.constant("attention_mask/one", {1}, std::vector<float>{1.0f}, dtype);
  const Tensor scale = g.constant("attention_mask/scale", {1}, std::vector<float>{10000.0f}, dtype);
  const Tensor additive = g.mul(g.sub(mask, one, "attention_mask/hidden"), scale, "attention_mask/additive");
  return g.reshape(additive, {e.batch, 1, 1, e.seq}, "attention_mask/heads");
}

// options.layers, or the model's own depth where it is 0.
std::int64_t encoder_layers(const ModelOptions& options, std::int64_t own, const std::string& model) {
  if (options.layers < 0)
    throw Error(ErrorCode::InvalidArgument, model + ": layers " + std::to_string(options.layers) +
                                                " must be at least 1 (0: the model's own " + std::to_string(own) + ")");
  return options.layers == 0 ? own : options.layers;
}

}  // namespace

Graph bert(bool large, const ModelOptions& options) {
  const std::int64_t seq = options.seq == 0 ? 128 : options.seq;
  if (options.batch < 1 || seq < 1 || seq > bert_positions)
    throw Error(ErrorCode::InvalidArgument, "bert: batch " + std::to_string(options.batch) + " must be at least 1 " +
                                                "and sequence " + std::to_string(seq) + " from 1 to " +
                                                std::to_string(bert_positions) + " (its position embeddings)");
  const EncoderShape e{options.batch, seq, large ? 1024 : 768, large ? 16 : 12};
  Graph g;
  Layers l(g, options.dtype, options.seed);
  Tensor x = bert_embeddings(l, e);
  const Tensor mask = bert_mask(g, options.dtype, e);
  for (std::int64_t i = 0; i < encoder_layers(options, large ? 24 : 12, "bert"); ++i)
    x = bert_layer(l, x, mask, e, "encoder.layer." + std::to_string(i));
  const Tensor hidden = g.reshape(x, {e.batch, e.seq, e.hidden}, "encoder/output");
  g.output("hidden", hidden);
  // The pooler: dense and tanh on each sequence's first token.
  const Tensor first = g.slice(hidden, {.starts = {0}, .ends = {1}, .axes = {1}, .steps = {1}}, "pooler/first");
  const Tensor pooled = l.linear(g.reshape(first, {e.batch, e.hidden}, "pooler/rows"), e.hidden, "pooler.dense");
  g.output("pooled", g.tanh(pooled, "pooler/tanh"));
  return g;
}

Graph vit_b16(const ModelOptions& options) {
  const std::int64_t resolution = options.resolution == 0 ? 224 : options.resolution;
  constexpr std::int64_t patch = 16, hidden = 768;
  if (options.batch < 1 || resolution < patch || resolution % patch != 0)
    throw Error(ErrorCode::InvalidArgument, "vit-b16: resolution " + std::to_string(resolution) +
                                                " must be a positive multiple of the 16-pixel patch");
  const std::int64_t patches = (resolution / patch) * (resolution / patch);
  const EncoderShape e{options.batch, patches + 1, hidden, 12};
  Graph g;
  Layers l(g, options.dtype, options.seed);
  const Tensor input = g.input("input", {e.batch, 3, resolution, resolution}, options.dtype);
  const float bound = 1.0f / std::sqrt(3.0f * patch * patch);
  const Tensor w = l.random("conv_proj.weight", {hidden, 3, patch, patch}, -bound, bound);
  Tensor x = g.conv2d(input, w, {.stride = {patch, patch}}, l.random("conv_proj.bias", {hidden}, -bound, bound),
                      "conv_proj");
  x = g.transpose(g.reshape(x, {e.batch, hidden, patches}, "patches"), {0, 2, 1}, "tokens");
  const Tensor token = g.expand(l.random("class_token", {1, 1, hidden}, -0.1f, 0.1f), {e.batch, 1, hidden},
                                "class_tokens");
  const Tensor tokens[] = {token, x};
  x = g.add(g.concat(tokens, 1, "sequence"), l.random("encoder.pos_embedding", {1, e.seq, hidden}, -0.1f, 0.1f),
            "positioned");
  x = g.reshape(x, {e.batch * e.seq, hidden}, "rows");
  for (std::int64_t i = 0; i < encoder_layers(options, 12, "vit-b16"); ++i)
    x = vit_layer(l, x, e, "encoder.layers.encoder_layer_" + std::to_string(i));
  x = g.reshape(x, {e.batch, e.seq, hidden}, "encoder/sequence");
  x = g.reshape(g.slice(x, {.starts = {0}, .ends = {1}, .axes = {1}, .steps = {1}}, "class_output"), {e.batch, hidden}, "features");
  g.output("logits", l.linear(l.layer_norm(x, 1e-6f, "encoder.ln"), options.classes, "heads.head"));
  return g;
}

}  // namespace porta::models
