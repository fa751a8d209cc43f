#include "types/backend.hpp"
#include "types/table_order.hpp"

#include <algorithm>

namespace trilemma {
namespace {

using P = ComputePath;
using W = WeightFormat;

// Preference lists. CPU: llama.cpp repacks quantized weights for SMMLA/AMX where the core has
// them (ggml-cpu repack, amx), else quantizes activations to int8 blocks for SDOT/VPDPBUSD;
// F16 runs on FP16 vector FMA where the core has it. CUDA: MMQ on int8 tensor cores, cuBLAS
// on FP16 tensor cores. Metal and OpenCL dequantize to FP16 in their matmul kernels.
constexpr P k_cpu_fp32[] = {P::cpu_fp32};
constexpr P k_cpu_half[] = {P::cpu_fp16, P::cpu_fp32};
constexpr P k_cpu_int[] = {P::cpu_int8_matmul, P::cpu_int8_dot, P::cpu_int8_widen};
constexpr P k_cpu_int_vector[] = {P::cpu_int8_dot, P::cpu_int8_widen};
// ggml-cpu gives Q4_0, Q4_1 and Q8_0 a two-row SMMLA vec_dot (type traits nrows = 2 under
// __ARM_FEATURE_MATMUL_INT8, since 2024) and Q4_K one since its 2025 repack; K-quants below 4
// bits, Q5_K, Q6_K and the IQ types multiply on SDOT. The formats whose bulk type is one of those:
constexpr W k_cpu_matrix_formats[] = {W::q8_0, W::q4_0, W::q4_k_m};
constexpr P k_gpu_fp32[] = {P::gpu_fp32};
constexpr P k_gpu_half[] = {P::gpu_tensor_fp16, P::gpu_fp16, P::gpu_fp32};
constexpr P k_gpu_dequant[] = {P::gpu_fp16, P::gpu_fp32};
constexpr P k_cuda_int[] = {P::gpu_tensor_int8, P::gpu_tensor_fp16, P::gpu_fp16, P::gpu_fp32};
constexpr P k_npu_half[] = {P::npu_fp16};
constexpr P k_npu_int[] = {P::npu_int8};
// NPU attention runs at 16-bit; vendors that publish no FP16 figure are bounded by the int8 one.
constexpr P k_npu_attention[] = {P::npu_fp16, P::npu_int8};
constexpr P k_ane_int[] = {P::npu_fp16, P::npu_int8};  // the ANE computes in FP16; int8 weights are decompressed
constexpr std::span<const P> k_none{};

constexpr W k_qnn_weights[] = {W::w4a16, W::w8a16};
constexpr W k_coreml_weights[] = {W::f16, W::w4a16, W::w8a16};
constexpr W k_rknpu_weights[] = {W::w8a8, W::w4a16};
constexpr W k_neuron_weights[] = {W::w4a16, W::w8a16};
constexpr W k_hexagon_weights[] = {W::q4_0, W::q8_0};  // ggml-hexagon's HTP kernels; other types fall back to the CPU
constexpr TensorType k_npu_kv[] = {TensorType::f16};
constexpr std::span<const W> k_llama_cpp_weights{};
constexpr std::span<const TensorType> k_any_kv{};

constexpr std::string_view k_llama_cpp = "llama.cpp (ggml backends, n_ubatch 512)";

constexpr std::array<BackendInfo, static_cast<std::size_t>(Backend::count)> k_backends = {{
    {Backend::cpu, "cpu", BackendKind::cpu, "llama.cpp CPU", "llama.cpp", k_cpu_fp32, k_cpu_half, k_cpu_int, k_cpu_fp32, 512,
     k_llama_cpp_weights, k_any_kv, std::nullopt, false, k_llama_cpp, k_cpu_matrix_formats, k_cpu_int_vector},
    {Backend::metal, "metal", BackendKind::gpu, "llama.cpp Metal", "llama.cpp", k_gpu_fp32, k_gpu_dequant, k_gpu_dequant, k_gpu_dequant, 512,
     k_llama_cpp_weights, k_any_kv, std::nullopt, false, k_llama_cpp},
    {Backend::cuda, "cuda", BackendKind::gpu, "llama.cpp CUDA", "llama.cpp", k_gpu_fp32, k_gpu_half, k_cuda_int, k_gpu_half, 512,
     k_llama_cpp_weights, k_any_kv, std::nullopt, false, k_llama_cpp},
    {Backend::vulkan, "vulkan", BackendKind::gpu, "llama.cpp Vulkan", "llama.cpp", k_gpu_fp32, k_gpu_half, k_gpu_half, k_gpu_half, 512,
     k_llama_cpp_weights, k_any_kv, std::nullopt, false, k_llama_cpp},
    {Backend::opencl, "opencl", BackendKind::gpu, "llama.cpp OpenCL (Adreno)", "llama.cpp", k_gpu_fp32, k_gpu_dequant,
     k_gpu_dequant, k_gpu_dequant, 512, k_llama_cpp_weights, k_any_kv, std::nullopt, false, k_llama_cpp},
    // NPUs run graphs compiled ahead of time for a fixed prompt chunk and context; the limits
    // and their sources are in docs/npu.md.
    {Backend::qnn, "qnn", BackendKind::npu, "Qualcomm Genie / QNN HTP", "qnn-genie", k_none, k_npu_half, k_npu_int, k_npu_attention, 128,
     k_qnn_weights, k_npu_kv, 4096, true, "docs/npu.md#qualcomm-hexagon"},
    {Backend::coreml, "coreml", BackendKind::npu, "Core ML (Apple Neural Engine)", "coreml", k_none, k_npu_half, k_ane_int, k_npu_attention, 64,
     k_coreml_weights, k_npu_kv, 4096, true, "docs/npu.md#apple-neural-engine"},
    // Android NNAPI is deprecated (Android 15) and no LLM runtime publishes figures through it:
    // listed so device files stay valid, refused by the planner.
    {Backend::nnapi, "nnapi", BackendKind::npu, "Android NNAPI (deprecated)", "nnapi", k_none, k_none, k_none, k_none, 0,
     k_llama_cpp_weights, k_npu_kv, std::nullopt, true, "docs/npu.md#android-nnapi"},
    {Backend::rknpu, "rknpu", BackendKind::npu, "Rockchip RKLLM", "rkllm", k_none, k_npu_half, k_npu_int, k_npu_attention, 128,
     k_rknpu_weights, k_npu_kv, 4096, true, "docs/npu.md#rockchip-rknpu"},
    {Backend::neuron, "neuron", BackendKind::npu, "MediaTek NeuroPilot", "neuropilot", k_none, k_npu_half, k_npu_int, k_npu_attention, 128,
     k_neuron_weights, k_npu_kv, 4096, true, "docs/npu.md#mediatek-apu"},
    // llama.cpp's own Hexagon backend: llama.cpp graphs (any KV strategy), Q4_0/Q8_0 matmuls on the HTP.
    {Backend::hexagon, "hexagon", BackendKind::npu, "llama.cpp Hexagon (ggml-hexagon)", "llama.cpp", k_none, k_npu_half, k_npu_int,
     k_npu_attention, 512, k_hexagon_weights, k_any_kv, std::nullopt, false, "docs/npu.md#qualcomm-hexagon"},
}};

static_assert(rows_in_enum_order(k_backends, &BackendInfo::backend), "backend table must list backends in enum order");

}  // namespace

WeightClass weight_class(WeightFormat f) {
  const TensorType t = info(f).bulk;
  if (t == TensorType::f32) return WeightClass::fp32;
  if (t == TensorType::f16 || t == TensorType::bf16) return WeightClass::half;
  return WeightClass::integer;
}

const BackendInfo& info(Backend b) { return k_backends[static_cast<std::size_t>(b)]; }

std::optional<Backend> backend_from_name(std::string_view name) {
  for (const auto& row : k_backends)
    if (row.name == name) return row.backend;
  return std::nullopt;
}

const std::array<BackendInfo, static_cast<std::size_t>(Backend::count)>& backends() { return k_backends; }

std::string backend_names() {
  std::string out;
  for (const auto& row : k_backends) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

std::span<const ComputePath> paths_for(const BackendInfo& b, WeightFormat f) {
  switch (weight_class(f)) {
    case WeightClass::fp32: return b.fp32_paths;
    case WeightClass::half: return b.half_paths;
    case WeightClass::integer:
      if (!b.integer_matrix_formats.empty() &&
          std::find(b.integer_matrix_formats.begin(), b.integer_matrix_formats.end(), f) == b.integer_matrix_formats.end())
        return b.integer_vector_paths;
      return b.integer_paths;
  }
  return {};
}

bool runs(const BackendInfo& b, WeightFormat f) {
  if (paths_for(b, f).empty()) return false;
  // llama.cpp backends run every llama.cpp format; trilemma's engine formats run on its CPU.
  if (b.weights.empty()) return !info(f).llama_cpp.empty() || (b.kind == BackendKind::cpu && info(f).engine_type);
  for (auto w : b.weights)
    if (w == f) return true;
  return false;
}

}  // namespace trilemma
