// Backends: where a plan's forward passes run. One row per backend carries what every layer
// needs: its kind, the compute paths each class of weights takes (in order of preference: the
// first one the device has is used), how many prompt tokens one prefill pass processes, which
// weight and KV formats it runs and its context limit. Efficiencies live in data
// (devices/derating.yaml); emitters say how a runtime spells a backend.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "types/compute_path.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

namespace trilemma {

// Append at the end: names are persisted in plan documents and device files.
enum class Backend : std::uint8_t { cpu, metal, cuda, vulkan, opencl, qnn, coreml, nnapi, rknpu, neuron, hexagon, count };
inline constexpr std::size_t k_backend_count = static_cast<std::size_t>(Backend::count);

enum class BackendKind : std::uint8_t { cpu, gpu, npu };

// The arithmetic a weight format's matrix products need.
enum class WeightClass : std::uint8_t { fp32, half, integer };
WeightClass weight_class(WeightFormat format);

struct BackendInfo {
  Backend backend;
  std::string_view name;      // "cpu", "qnn": device files, flags, plan documents
  BackendKind kind;
  std::string_view runtime;   // the runtime whose figures the efficiencies describe
  std::string_view engine;    // that runtime as data/measurements names it ("llama.cpp", "qnn-genie")
  std::span<const ComputePath> fp32_paths, half_paths, integer_paths;  // preference order
  std::span<const ComputePath> attention_paths;  // QK^T and AV over the KV cache
  std::uint32_t prefill_chunk;  // prompt tokens per prefill pass (each pass streams the weights)
  std::span<const WeightFormat> weights;  // formats it runs; empty = every llama.cpp format
  std::span<const TensorType> kv;         // KV formats it stores; empty = every KV format
  std::optional<std::uint32_t> max_context;  // graphs compiled for at most this context
  // Graphs compiled ahead of time (NPUs): one contiguous KV cache of the compiled context, no
  // speculative decoding. Runtimes that build their graph per step (llama.cpp) have neither limit.
  bool fixed_graph = false;
  std::string_view source;    // where the limits above are stated
  // Integer formats the runtime has a matrix-unit kernel for (llama.cpp's SMMLA/AMX paths);
  // the others take `integer_vector_paths`. Empty: every integer format has one.
  std::span<const WeightFormat> integer_matrix_formats{};
  std::span<const ComputePath> integer_vector_paths{};
};

const BackendInfo& info(Backend backend);
std::optional<Backend> backend_from_name(std::string_view name);
const std::array<BackendInfo, static_cast<std::size_t>(Backend::count)>& backends();
// "cpu, metal, cuda, ...": for help texts and error messages.
std::string backend_names();

// The paths `backend` may run `format`'s matrix products on, in preference order.
std::span<const ComputePath> paths_for(const BackendInfo& backend, WeightFormat format);
// Whether `backend` runs `format` at all (its weight list, and a path for its class).
bool runs(const BackendInfo& backend, WeightFormat format);

}  // namespace trilemma
