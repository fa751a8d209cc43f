// Reads one device YAML document (schema: devices/README.md) into a Device. Every problem is an
// Error naming file, line:column and field.
#pragma once
#include <string>

#include "devices/device.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

// `file` is the name used in messages; `expected_id` (file stem) is checked when not empty.
Result<Device> parse_device(const std::string& yaml_text, const std::string& file,
                            const std::string& expected_id);

// The YAML text of a device, in the same schema (for `devices probe --out`).
std::string device_to_yaml(const Device& device);

}  // namespace trilemma::devices
