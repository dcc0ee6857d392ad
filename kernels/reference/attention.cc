#include "kernels/reference/attention.h"

#include <cmath>
#include <limits>

#include "kernels/reference/require_size.h"

namespace trainsim::kernels::reference {

namespace {

// Index arithmetic and scores of one block; every tensor is dense row-major.
template <typename T>
class Block {
 public:
  Block(const AttentionShape& shape, const AttentionOptions& options, std::span<const T> q,
        std::span<const T> k, std::span<const T> v)
      : shape_(shape),
        causal_(options.causal),
        scale_(options.scale_for(shape.head_dim)),
        q_(q),
        k_(k),
        v_(v) {
    validate(shape);
    require_size(q, shape.q_elements(), "attention", "q");
    require_size(k, shape.kv_elements(), "attention", "k");
    require_size(v, shape.kv_elements(), "attention", "v");
  }

  const AttentionShape& shape() const { return shape_; }
  double scale() const { return scale_; }
  int64_t kv_head(int64_t head) const { return head / shape_.group_size(); }
  bool visible(int64_t i, int64_t j) const { return key_visible(causal_, i, j, shape_.q_len, shape_.kv_len); }

  int64_t q_offset(int64_t b, int64_t i, int64_t h) const {
    return ((b * shape_.q_len + i) * shape_.heads + h) * shape_.head_dim;
  }
  int64_t kv_offset(int64_t b, int64_t j, int64_t hk) const {
    return ((b * shape_.kv_len + j) * shape_.kv_heads + hk) * shape_.head_dim;
  }
  int64_t lse_offset(int64_t b, int64_t h, int64_t i) const {
    return (b * shape_.heads + h) * shape_.q_len + i;
  }

  // scale · q[b, i, h, :] · k[b, j, kv_head(h), :]
  double score(int64_t b, int64_t h, int64_t i, int64_t j) const {
    const T* q = q_.data() + q_offset(b, i, h);
    const T* k = k_.data() + kv_offset(b, j, kv_head(h));
    double dot = 0.0;
    for (int64_t d = 0; d < shape_.head_dim; ++d) {
      dot += static_cast<double>(q[d]) * static_cast<double>(k[d]);
    }
    return scale_ * dot;
  }

  const T* q_row(int64_t b, int64_t i, int64_t h) const { return q_.data() + q_offset(b, i, h); }
  const T* k_row(int64_t b, int64_t j, int64_t hk) const { return k_.data() + kv_offset(b, j, hk); }
  const T* v_row(int64_t b, int64_t j, int64_t hk) const { return v_.data() + kv_offset(b, j, hk); }

 private:
  AttentionShape shape_;
  bool causal_;
  double scale_;
  std::span<const T> q_;
  std::span<const T> k_;
  std::span<const T> v_;
};

template <typename T>
Block<T> backward_block(const AttentionShape& shape, const AttentionOptions& options,
                        const BackwardInputs<T>& in) {
  Block<T> block(shape, options, in.q, in.k, in.v);
  require_size(in.out, shape.q_elements(), "attention", "out");
  require_size(in.lse, shape.lse_elements(), "attention", "lse");
  require_size(in.dout, shape.q_elements(), "attention", "dout");
  return block;
}

template <typename T>
double dot(const T* a, const T* b, int64_t n) {
  double sum = 0.0;
  for (int64_t d = 0; d < n; ++d) {
    sum += static_cast<double>(a[d]) * static_cast<double>(b[d]);
  }
  return sum;
}

// D = rowsum(dout ∘ out) for row (b, h, i).
template <typename T>
double delta(const Block<T>& block, const BackwardInputs<T>& in, int64_t b, int64_t h, int64_t i) {
  const int64_t offset = block.q_offset(b, i, h);
  return dot(in.dout.data() + offset, in.out.data() + offset, block.shape().head_dim);
}

// P = exp(score - lse); a row with lse = -inf saw no key and has P = 0.
double probability(double score, double lse) {
  return lse == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(score - lse);
}

template <typename T>
ForwardRow forward_row(const Block<T>& block, int64_t b, int64_t h, int64_t i) {
  const AttentionShape& shape = block.shape();
  std::vector<double> scores(static_cast<size_t>(shape.kv_len));
  double max_score = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < shape.kv_len; ++j) {
    if (block.visible(i, j)) {
      scores[j] = block.score(b, h, i, j);
      max_score = std::max(max_score, scores[j]);
    }
  }
  ForwardRow row{std::vector<double>(static_cast<size_t>(shape.head_dim), 0.0),
                 -std::numeric_limits<double>::infinity()};
  if (max_score == -std::numeric_limits<double>::infinity()) {
    return row;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < shape.kv_len; ++j) {
    if (block.visible(i, j)) {
      sum += std::exp(scores[j] - max_score);
    }
  }
  row.lse = max_score + std::log(sum);
  for (int64_t j = 0; j < shape.kv_len; ++j) {
    if (block.visible(i, j)) {
      const double p = std::exp(scores[j] - row.lse);
      const T* v = block.v_row(b, j, block.kv_head(h));
      for (int64_t d = 0; d < shape.head_dim; ++d) {
        row.out[d] += p * static_cast<double>(v[d]);
      }
    }
  }
  return row;
}

template <typename T>
std::vector<double> dq_row(const Block<T>& block, const BackwardInputs<T>& in, int64_t b, int64_t h,
                           int64_t i) {
  const AttentionShape& shape = block.shape();
  std::vector<double> dq(static_cast<size_t>(shape.head_dim), 0.0);
  const double lse = static_cast<double>(in.lse[block.lse_offset(b, h, i)]);
  const double d_i = delta(block, in, b, h, i);
  const T* dout = in.dout.data() + block.q_offset(b, i, h);
  const int64_t hk = block.kv_head(h);
  for (int64_t j = 0; j < shape.kv_len; ++j) {
    if (!block.visible(i, j)) {
      continue;
    }
    const double p = probability(block.score(b, h, i, j), lse);
    const double ds = p * (dot(dout, block.v_row(b, j, hk), shape.head_dim) - d_i);
    const T* k = block.k_row(b, j, hk);
    for (int64_t d = 0; d < shape.head_dim; ++d) {
      dq[d] += ds * static_cast<double>(k[d]);
    }
  }
  for (double& x : dq) {
    x *= block.scale();
  }
  return dq;
}

template <typename T>
KvRowGradients kv_row(const Block<T>& block, const BackwardInputs<T>& in, int64_t b, int64_t hk, int64_t j) {
  const AttentionShape& shape = block.shape();
  KvRowGradients grads{std::vector<double>(static_cast<size_t>(shape.head_dim), 0.0),
                       std::vector<double>(static_cast<size_t>(shape.head_dim), 0.0)};
  const T* v = block.v_row(b, j, hk);
  for (int64_t h = hk * shape.group_size(); h < (hk + 1) * shape.group_size(); ++h) {
    for (int64_t i = 0; i < shape.q_len; ++i) {
      if (!block.visible(i, j)) {
        continue;
      }
      const double p =
          probability(block.score(b, h, i, j), static_cast<double>(in.lse[block.lse_offset(b, h, i)]));
      const T* dout = in.dout.data() + block.q_offset(b, i, h);
      const double ds = p * (dot(dout, v, shape.head_dim) - delta(block, in, b, h, i));
      const T* q = block.q_row(b, i, h);
      for (int64_t d = 0; d < shape.head_dim; ++d) {
        grads.dv[d] += p * static_cast<double>(dout[d]);
        grads.dk[d] += ds * static_cast<double>(q[d]);
      }
    }
  }
  for (double& x : grads.dk) {
    x *= block.scale();
  }
  return grads;
}

}  // namespace

template <typename T>
void attention_forward(const AttentionShape& shape, const AttentionOptions& options,
                       const ForwardInputs<T>& in, std::span<T> out, std::span<T> lse) {
  const Block<T> block(shape, options, in.q, in.k, in.v);
  require_size(out, shape.q_elements(), "attention", "out");
  require_size(lse, shape.lse_elements(), "attention", "lse");
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      for (int64_t i = 0; i < shape.q_len; ++i) {
        const ForwardRow row = forward_row(block, b, h, i);
        T* dst = out.data() + block.q_offset(b, i, h);
        for (int64_t d = 0; d < shape.head_dim; ++d) {
          dst[d] = static_cast<T>(row.out[d]);
        }
        lse[block.lse_offset(b, h, i)] = static_cast<T>(row.lse);
      }
    }
  }
}

template <typename T>
void attention_backward(const AttentionShape& shape, const AttentionOptions& options,
                        const BackwardInputs<T>& in, std::span<T> dq, std::span<T> dk, std::span<T> dv) {
  const Block<T> block = backward_block(shape, options, in);
  require_size(dq, shape.q_elements(), "attention", "dq");
  require_size(dk, shape.kv_elements(), "attention", "dk");
  require_size(dv, shape.kv_elements(), "attention", "dv");
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.heads; ++h) {
      for (int64_t i = 0; i < shape.q_len; ++i) {
        const std::vector<double> row = dq_row(block, in, b, h, i);
        T* dst = dq.data() + block.q_offset(b, i, h);
        for (int64_t d = 0; d < shape.head_dim; ++d) {
          dst[d] = static_cast<T>(row[d]);
        }
      }
    }
    for (int64_t hk = 0; hk < shape.kv_heads; ++hk) {
      for (int64_t j = 0; j < shape.kv_len; ++j) {
        const KvRowGradients grads = kv_row(block, in, b, hk, j);
        const int64_t offset = block.kv_offset(b, j, hk);
        for (int64_t d = 0; d < shape.head_dim; ++d) {
          dk[offset + d] = static_cast<T>(grads.dk[d]);
          dv[offset + d] = static_cast<T>(grads.dv[d]);
        }
      }
    }
  }
}

template <typename T>
ForwardRow attention_forward_row(const AttentionShape& shape, const AttentionOptions& options,
                                 const ForwardInputs<T>& in, int64_t batch, int64_t head, int64_t row) {
  return forward_row(Block<T>(shape, options, in.q, in.k, in.v), batch, head, row);
}

template <typename T>
std::vector<double> attention_backward_dq_row(const AttentionShape& shape, const AttentionOptions& options,
                                              const BackwardInputs<T>& in, int64_t batch, int64_t head,
                                              int64_t row) {
  return dq_row(backward_block(shape, options, in), in, batch, head, row);
}

template <typename T>
KvRowGradients attention_backward_kv_row(const AttentionShape& shape, const AttentionOptions& options,
                                         const BackwardInputs<T>& in, int64_t batch, int64_t kv_head,
                                         int64_t row) {
  return kv_row(backward_block(shape, options, in), in, batch, kv_head, row);
}

#define TRAINSIM_INSTANTIATE_ATTENTION_REFERENCE(T)                                                         \
  template void attention_forward<T>(const AttentionShape&, const AttentionOptions&,                        \
                                     const ForwardInputs<T>&, std::span<T>, std::span<T>);                  \
  template void attention_backward<T>(const AttentionShape&, const AttentionOptions&,                       \
                                      const BackwardInputs<T>&, std::span<T>, std::span<T>, std::span<T>);  \
  template ForwardRow attention_forward_row<T>(const AttentionShape&, const AttentionOptions&,              \
                                               const ForwardInputs<T>&, int64_t, int64_t, int64_t);         \
  template std::vector<double> attention_backward_dq_row<T>(                                                \
      const AttentionShape&, const AttentionOptions&, const BackwardInputs<T>&, int64_t, int64_t, int64_t); \
  template KvRowGradients attention_backward_kv_row<T>(const AttentionShape&, const AttentionOptions&,      \
                                                       const BackwardInputs<T>&, int64_t, int64_t, int64_t);

TRAINSIM_INSTANTIATE_ATTENTION_REFERENCE(float)
TRAINSIM_INSTANTIATE_ATTENTION_REFERENCE(double)

}  // namespace trainsim::kernels::reference
