// The type each matrix of a model is converted to when it is loaded: one type for every matrix
// (`--weights q4_0`), or a llama.cpp recipe's type tensor by tensor (`--weights q4_k_m`: q4_k for
// most matrices, q6_k for some attn_v and ffn_down, row-size fallbacks already applied), which
// the caller works out (the planner's tensor plan) and hands over by GGUF tensor name.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "types/tensor_type.hpp"

namespace trilemma::engine {

struct WeightChoice {
  std::optional<TensorType> all;                             // nullopt: as stored
  std::map<std::string, TensorType, std::less<>> by_tensor;  // GGUF name -> type; wins over `all`

  WeightChoice() = default;
  WeightChoice(std::nullopt_t) {}
  WeightChoice(std::optional<TensorType> type) : all(type) {}
  WeightChoice(TensorType type) : all(type) {}
  WeightChoice(std::optional<TensorType> type, std::map<std::string, TensorType, std::less<>> per_tensor)
      : all(type), by_tensor(std::move(per_tensor)) {}

  // The type `tensor` is converted to; nullopt keeps it as stored.
  std::optional<TensorType> of(std::string_view tensor) const {
    if (const auto it = by_tensor.find(tensor); it != by_tensor.end()) return it->second;
    return all;
  }
  bool converts() const { return all.has_value() || !by_tensor.empty(); }
};

}  // namespace trilemma::engine
