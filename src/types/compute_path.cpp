#include "types/compute_path.hpp"
#include "types/table_order.hpp"

namespace trilemma {
namespace {

using P = ComputePath;
constexpr std::array<ComputePathInfo, static_cast<std::size_t>(P::count)> k_paths = {{
    {P::cpu_fp32, "cpu_fp32", "CPU", false, "FP32 vector FMA"},
    {P::cpu_fp16, "cpu_fp16", "CPU", false, "FP16 vector FMA"},
    {P::cpu_int8_dot, "cpu_int8_dot", "CPU", false, "int8 dot product (SDOT/UDOT, VPDPBUSD)"},
    {P::cpu_int8_matmul, "cpu_int8_matmul", "CPU", true, "int8 matrix multiply (SMMLA/i8mm, SME, AMX)"},
    {P::gpu_fp32, "gpu_fp32", "GPU", false, "FP32 shader arithmetic"},
    {P::gpu_fp16, "gpu_fp16", "GPU", false, "FP16 shader arithmetic"},
    {P::gpu_tensor_fp16, "gpu_tensor_fp16", "GPU", true, "FP16 tensor cores, dense"},
    {P::gpu_tensor_int8, "gpu_tensor_int8", "GPU", true, "int8 tensor cores, dense"},
    {P::npu_fp16, "npu_fp16", "NPU", false, "NPU FP16"},
    {P::npu_int8, "npu_int8", "NPU", false, "NPU int8"},
    {P::npu_int4, "npu_int4", "NPU", false, "NPU int4"},
    {P::cpu_int8_widen, "cpu_int8_widen", "CPU", false, "int8 multiply widened to 16 bits (SMULL/SADALP, VPMADDUBSW)"},
}};

static_assert(rows_in_enum_order(k_paths, &ComputePathInfo::path), "compute path table must list paths in enum order");

}  // namespace

const ComputePathInfo& info(ComputePath p) { return k_paths[static_cast<std::size_t>(p)]; }

std::optional<ComputePath> compute_path_from_name(std::string_view name) {
  for (const auto& row : k_paths)
    if (row.name == name) return row.path;
  return std::nullopt;
}

const std::array<ComputePathInfo, static_cast<std::size_t>(ComputePath::count)>& compute_paths() { return k_paths; }

}  // namespace trilemma
