// The device database: the built-in devices/*.yaml (embedded at build time), a YAML file given
// by path, or `host` (this machine, probed once and cached).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

// Every built-in device, sorted by id. The first invalid file is an error.
Result<std::vector<Device>> builtin_devices();

// Loads a device from an id ("raspberry-pi-5"), a path to a YAML file, or "host".
// Unknown ids get an error that suggests the closest ids.
Result<Device> resolve_device(const std::string& id_or_path);

// Share of RAM an app may use on a class of device (1 - OS reserve), with its source.
struct ClassDefaults {
  double os_reserve_fraction = 0.25;
  std::string source;
};
ClassDefaults class_defaults(const std::string& device_class);

// RAM one process can use on `device`, GiB.
double usable_memory_gib(const Device& device);

// Where `host` is cached; TRILEMMA_HOST_PROFILE overrides.
std::string host_profile_path();

// Installed by cli: produces the host profile when no cache exists (the probe lives above
// this module because it uses the engine's kernels).
using HostProber = std::function<Result<Device>()>;
void set_host_prober(HostProber prober);

}  // namespace trilemma::devices
