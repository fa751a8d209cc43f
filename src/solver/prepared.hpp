// What the estimate functions need of a model and of a device, computed once per plan (the
// tensor walk and the derating lookups are the expensive parts; a plan evaluates thousands of
// configurations against them). Both are read-only once prepared.
#pragma once
#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <vector>

#include "accuracy/loss_fit.hpp"
#include "devices/device.hpp"
#include "memory/tensor_layout.hpp"
#include "models/model.hpp"
#include "power/power_draw.hpp"
#include "roofline/efficiency.hpp"
#include "types/backend.hpp"
#include "types/deployment.hpp"
#include "types/result.hpp"

namespace trilemma::solver {

inline constexpr std::size_t k_weight_formats = static_cast<std::size_t>(WeightFormat::count);
inline constexpr std::size_t k_backends = static_cast<std::size_t>(Backend::count);
inline constexpr std::size_t k_attention_phases = static_cast<std::size_t>(roofline::AttentionPhase::count);

struct PreparedModel {
  const models::Model* model = nullptr;
  std::array<memory::WeightBytes, k_weight_formats> weights{};  // indexed by WeightFormat
  std::optional<memory::WeightBytes> stored;                   // GGUF: the file's real bytes
  double active_params = 0;
  accuracy::LossTraits traits;  // the accuracy model's inputs; bits_delta per format below
  std::array<double, k_weight_formats> loss_bits{};  // memory::loss_weighted_block_bits per format
  std::string family;           // model family for the accuracy basis; empty when unknown
  static PreparedModel prepare(const models::Model& model);
  const memory::WeightBytes& bytes(WeightFormat format) const;
  // `traits` with the format's bits per weight on this model minus on Llama-3-8B (row-size
  // fallbacks raise it on narrow models: Qwen2.5-0.5B's "Q2_K" is mostly Q4/Q5).
  accuracy::LossTraits loss_traits(WeightFormat format) const;
};

struct PreparedDevice {
  const devices::Device* device = nullptr;
  const roofline::DeratingTables* tables = nullptr;
  double usable_bytes = 0;
  roofline::OffloadTier offload;
  // Fails when a built-in table (devices/derating.yaml, devices/classes.yaml) does not load.
  static Result<PreparedDevice> prepare(const devices::Device& device);
  // With other derating tables (a fit's trial values). `fitting` skips what only a plan
  // prints (the basis text, the power draws): a fit prepares devices thousands of times.
  enum class Purpose { plans, fitting };
  // What a fit predicts: only these backends x weight formats are prepared (the others answer
  // nullptr), so one trial of its search costs the rows its observations read, not the
  // device's whole table.
  struct Scope {
    std::bitset<k_backends> backends;
    std::bitset<k_weight_formats> formats;
  };
  static Result<PreparedDevice> prepare(const devices::Device& device, const roofline::DeratingTables& tables,
                                        Purpose purpose = Purpose::plans, const Scope* scope = nullptr);

  // nullptr when `backend` cannot run `weights` on this device (not listed, no compute path
  // with a peak, or a format the backend does not run).
  const roofline::Efficiency* efficiency(Backend backend, WeightFormat weights) const;
  Range attention_fraction(Backend backend, TensorType kv, roofline::AttentionPhase phase) const;
  // The device's power on `backend` (docs/power.md); nullptr when nothing covers it, and then
  // power_gap says why.
  const power::PowerDraw* power(Backend backend) const;
  const std::string& power_gap(Backend backend) const;

 private:
  std::array<std::optional<power::PowerDraw>, k_backends> m_power;
  std::array<std::string, k_backends> m_power_gap;
  // [backend][format] -> its row of m_efficiencies, or -1: only the rows the device runs (or a
  // fit's scope asks for) are built, moved and destroyed, not every backend x format (a fit
  // prepares a device per trial: the full table was half of its time).
  static constexpr auto k_no_efficiency = [] {
    std::array<std::array<std::int16_t, k_weight_formats>, k_backends> none{};
    for (auto& row : none) row.fill(-1);
    return none;
  }();
  std::array<std::array<std::int16_t, k_weight_formats>, k_backends> m_efficiency_at = k_no_efficiency;
  std::vector<roofline::Efficiency> m_efficiencies;
  // [backend][KV format in kv_formats() order][phase]
  std::array<std::array<std::array<Range, k_attention_phases>, k_kv_format_count>, k_backends> m_attention{};  // [backend][kv][phase]
};

}  // namespace trilemma::solver
