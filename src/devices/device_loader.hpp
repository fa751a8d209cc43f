// Reads one device YAML document (schema: devices/README.md) into a Device. Every problem is an
// Error naming file, line:column and field.
#pragma once
#include <string>

#include "devices/device.hpp"
#include "io/yaml_fields.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

// `file` is the name used in messages; `expected_id` (file stem) is checked when not empty.
Result<Device> parse_device(const std::string& yaml_text, const std::string& file,
                            const std::string& expected_id);

// A `calibration` mapping (a device file's, or one of devices/fitted.yaml's `devices`).
Calibration read_calibration(io::FieldReader mapping);

// `row.sustained`, when present: throttling points [{minutes, fraction}], fractions at most 1,
// minutes ascending (a device file's power block, and each class of devices/power.yaml).
std::vector<SustainedPoint> read_sustained_points(io::FieldReader& row);

// A calibration as the mapping read_calibration reads.
void emit_calibration(YAML::Emitter& out, const Calibration& calibration);

// The YAML text of a device, in the same schema (for `devices probe --out`).
std::string device_to_yaml(const Device& device);

}  // namespace trilemma::devices
