// devices/power.yaml as typed tables: per device class, the power a device draws under LLM load
// when its own file has no measurement (absolute watts, or a fraction of the file's TDP), and
// how much of its speed it holds under sustained load (throttling). Every figure is sourced in
// the file; read once and strictly, like devices/derating.yaml.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "types/backend.hpp"
#include "types/estimate.hpp"
#include "types/result.hpp"

namespace trilemma::power {

struct ClassPower {
  std::string device_class;
  // Watts while decoding (memory-bound) and prefilling (compute-bound), for devices without a
  // TDP in their file; and as fractions of the TDP, for devices with one.
  std::optional<Range> decode_w, prefill_w;
  std::optional<Range> decode_tdp_fraction, prefill_tdp_fraction;
  std::vector<Backend> backends;          // the backends the prior covers; empty = all
  std::vector<devices::SustainedPoint> sustained;  // by minutes, ascending
  // Each source's text (url (note), or basis) with the fields it covers, in file order.
  std::vector<std::pair<std::vector<std::string>, std::string>> sources;  // io::SourceTexts
  bool covers(Backend b) const;
  // The first source that lists `field` ("decode_w"), for a figure's basis.
  std::string source_of(const std::string& field) const;
};

struct PowerTables {
  std::vector<ClassPower> classes;
  const ClassPower* find(const std::string& device_class) const;
};

Result<PowerTables> parse_power_tables(const std::string& yaml_text, const std::string& file);
// The built-in devices/power.yaml, parsed once.
Result<const PowerTables*> power_tables();

}  // namespace trilemma::power
