#include "engine/model/matmul.hpp"

#include <algorithm>
#include <array>

namespace trilemma::engine {

void Matmul::run(const float* x, int n, std::int64_t cols, std::span<const MatmulJob> jobs) {
  // Which activation formats are needed, each quantized once.
  std::array<TensorType, 2> act_types{};
  int act_count = 0;
  struct Prepared {
    const Matrix* w;
    float* y;
    DotFn dot;
    Dot4Fn dot4;  // nullptr when the format has no 4-token tile for this ISA
    int act;
    std::int64_t row_begin;
  };
  std::vector<Prepared> prepared;
  std::int64_t total_rows = 0;
  for (const MatmulJob& job : jobs) {
    const FormatKernels& k = *find_kernels(job.w->type);
    int slot = 0;
    while (slot < act_count && act_types[std::size_t(slot)] != k.activation) ++slot;
    if (slot == act_count) act_types[std::size_t(act_count++)] = k.activation;
    prepared.push_back({job.w, job.y, select_dot(k, m_isa), select_dot4(k, m_isa), slot, total_rows});
    total_rows += job.w->rows;
  }
  std::array<std::size_t, 2> act_row_bytes{};
  for (int s = 0; s < act_count; ++s) {
    const FormatKernels& ak = *find_kernels(act_types[std::size_t(s)]);
    act_row_bytes[std::size_t(s)] = tensor_bytes(ak.weight, std::uint64_t(cols));
    auto& buf = m_act[s];
    buf.resize(act_row_bytes[std::size_t(s)] * std::size_t(n));
    for (int t = 0; t < n; ++t) ak.quantize(x + std::size_t(t) * std::size_t(cols), buf.data() + std::size_t(t) * act_row_bytes[std::size_t(s)], cols);
  }
  // Enough tasks to balance threads, few enough that scheduling stays cheap.
  const std::int64_t grain = std::max<std::int64_t>(1, std::min<std::int64_t>(64, total_rows / (8 * m_pool.size())));
  m_pool.parallel_for(total_rows, grain, [&](std::int64_t begin, std::int64_t end) {
    std::size_t j = 0;
    for (std::int64_t g = begin; g < end; ++g) {
      while (g >= prepared[j].row_begin + prepared[j].w->rows) ++j;
      const Prepared& p = prepared[j];
      const std::int64_t r = g - p.row_begin;
      const std::byte* w_row = p.w->row(r);
      const std::byte* act = m_act[p.act].data();
      const std::size_t stride = act_row_bytes[std::size_t(p.act)];
      const auto out = [&](int t) -> float& { return p.y[std::size_t(t) * std::size_t(p.w->rows) + std::size_t(r)]; };
      int t = 0;
      if (p.dot4 != nullptr) {
        float four[4];
        for (; t + 4 <= n; t += 4) {
          p.dot4(w_row, act + std::size_t(t) * stride, stride, cols, four);
          for (int j = 0; j < 4; ++j) out(t + j) = four[j];
        }
      }
      for (; t < n; ++t) out(t) = p.dot(w_row, act + std::size_t(t) * stride, cols);
    }
  });
}

}  // namespace trilemma::engine
