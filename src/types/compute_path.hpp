// Compute paths: the arithmetic units a forward pass's matrix products run on, each with its
// own peak (devices/README.md: CPU per-core rates per microarchitecture in devices/cores.yaml,
// GPU and NPU figures in each device file). Which path a weight format takes on a backend is
// the backend table's business (types/backend.hpp); efficiency per path is devices/derating.yaml's.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trilemma {

// Append at the end: names are persisted in device calibrations and plan documents.
enum class ComputePath : std::uint8_t {
  cpu_fp32,         // FMA on FP32 vectors
  cpu_fp16,         // FP16 vector FMA (Arm FEAT_FP16)
  cpu_int8_dot,     // int8 dot products into int32: Arm SDOT/UDOT, x86 VPDPBUSD (AVX-VNNI, AVX512-VNNI)
  cpu_int8_matmul,  // int8 matrix instructions: Arm SMMLA (i8mm), SME, x86 AMX
  gpu_fp32,         // GPU shader FP32
  gpu_fp16,         // GPU shader FP16 (vector, non-tensor)
  gpu_tensor_fp16,  // tensor / matrix cores, FP16 inputs (dense, FP32 accumulate)
  gpu_tensor_int8,  // tensor / matrix cores, int8 inputs (dense)
  npu_fp16,         // NPU FP16
  npu_int8,         // NPU int8 (the vendors' headline TOPS)
  npu_int4,         // NPU int4
  // int8 products widened to 16 bits and summed pairwise (Arm SMULL/SADALP, x86 VPMADDUBSW):
  // how int8 weights are multiplied on a core without an int8 dot product. Its peak is taken as
  // the core's FP32 FMA rate (the same vector pipes); its efficiency is its own.
  cpu_int8_widen,
  count
};

struct ComputePathInfo {
  ComputePath path;
  std::string_view name;      // "cpu_int8_dot": YAML keys, plan basis, reports
  std::string_view unit;      // "CPU", "GPU", "NPU"
  // Matrix units need several activation rows to fill (SMMLA multiplies 2x8 by 8x2, tensor
  // cores 16x16 tiles): a decode step's matrix-vector products run on the next path instead.
  bool batched_only;
  std::string_view summary;
};

const ComputePathInfo& info(ComputePath path);
std::optional<ComputePath> compute_path_from_name(std::string_view name);
// Every path, in enum order.
const std::array<ComputePathInfo, static_cast<std::size_t>(ComputePath::count)>& compute_paths();

}  // namespace trilemma
