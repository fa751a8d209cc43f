// Published or measured benchmark rows (measurements::SpeedRow) as observations of the
// planner's configurations: the device, model, weight format, backend, threads, KV format,
// prompt and context pinned to what ran, and one observation per figure (decode, prefill,
// memory), because a benchmark's decode and prefill tests run at different contexts. Rows the
// planner cannot pin are kept aside with the reason.
#pragma once
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "devices/device.hpp"
#include "measurements/speed_rows.hpp"
#include "models/model.hpp"
#include "solver/prepared.hpp"

namespace trilemma::calibration {

enum class Figure { decode, prefill, memory, count };

// A published weight format name (`mlx-4bit`, `q4f16_1`, `8da4w`, `w4`) as the trilemma format
// whose bytes and arithmetic it has, with why; nullopt when none does.
struct FormatAlias {
  WeightFormat format;
  std::string note;
};
std::optional<FormatAlias> weight_format_alias(const std::string& published);

struct RowObservation {
  Observation observation;
  Figure figure = Figure::decode;
  std::size_t row = 0;  // index into the rows given
  std::string device;   // device id
  std::string source;   // the page it was published on (the row's source_url)
  std::string runtime;  // the engine that ran it, as the dataset names it ("llama.cpp", "mlx")
};

class ObservationSet {
 public:
  // `devices` and `models` are looked up by id; both must outlive the set.
  ObservationSet(const std::vector<measurements::SpeedRow>& rows, const std::vector<devices::Device>& devices,
                 const std::vector<models::Model>& models);

  const std::vector<RowObservation>& observations() const { return m_observations; }
  const devices::Device& device(const std::string& id) const { return *m_devices.at(id); }
  std::vector<std::string> device_ids() const;  // with at least one observation, sorted
  // Rows (or figures of rows) left out, with the reason: "file:line: unknown device 'x'".
  const std::vector<std::string>& skipped() const { return m_skipped; }
  std::map<std::string, int> skipped_by_reason() const;

 private:
  std::map<std::string, const devices::Device*> m_devices;
  std::map<std::string, const models::Model*> m_models;
  std::deque<solver::PreparedModel> m_prepared;  // stable addresses
  std::map<std::string, const solver::PreparedModel*> m_prepared_by_id;
  std::vector<RowObservation> m_observations;
  std::vector<std::string> m_skipped;
  std::vector<std::string> m_reasons;
};

}  // namespace trilemma::calibration
