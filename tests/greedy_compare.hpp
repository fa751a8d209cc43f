// Greedy decoding of a model against another engine's greedy ids (llama.cpp's), teacher-forced:
// after a divergence the other engine's id is fed back, so later positions are still compared
// on the same context. Where the argmax first differs, the logit margin there says whether it
// is a near-tie (another summation or activation rounding) or a real disagreement.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "engine/kv/kv_pages.hpp"
#include "engine/model/transformer.hpp"
#include "engine/sampling/sampler.hpp"

namespace trilemma::testing {

struct Divergence {
  int at = -1;        // first index into the compared ids where the argmaxes differ, -1 if none
  float margin = 0;   // the largest logit(ours) - logit(theirs) over every differing id
  int agreeing = 0;   // ids where both argmaxes agree
};

inline Divergence compare_greedy(const engine::Model& m, engine::Isa isa, engine::ThreadPool& pool,
                                 const std::vector<int>& prompt, const std::vector<int>& theirs) {
  const auto& s = m.shape;
  engine::Transformer tf(m, pool, isa,
                         engine::make_contiguous_f32(int(s.layers), int(prompt.size() + theirs.size()) + 1, int(s.heads),
                                                     int(s.kv_heads), int(s.head_dim)));
  auto logits = tf.forward(prompt, 0);
  REQUIRE(logits.ok());
  Divergence d;
  int pos = int(prompt.size());
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    const int ours = engine::argmax(*logits);
    if (ours == theirs[i]) ++d.agreeing;
    else {
      if (d.at < 0) d.at = int(i);
      d.margin = std::max(d.margin, (*logits)[std::size_t(ours)] - (*logits)[std::size_t(theirs[i])]);
    }
    logits = tf.forward({&theirs[i], 1}, pos++);
    REQUIRE(logits.ok());
  }
  return d;
}

}  // namespace trilemma::testing
