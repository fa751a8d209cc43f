// The device database: the built-in devices/*.yaml (embedded at build time), a YAML file given
// by path, or `host` (this machine, probed once and cached).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

// devices/ also holds the shared tables (classes, cores, derating, fitted, power), which are
// not devices: true for such a file's stem.
bool is_shared_table(const std::string& stem);

// Every built-in device, sorted by id. The first invalid file is an error.
Result<std::vector<Device>> builtin_devices();

// Loads a device from an id ("raspberry-pi-5"), a path to a YAML file, or "host".
// Unknown ids get an error that suggests the closest ids.
Result<Device> resolve_device(const std::string& id_or_path);

// devices/classes.yaml: share of RAM the OS keeps on each class of device, with its source.
// Read once and strictly; every class of devices/README.md must be present.
struct ClassDefaults {
  std::string device_class;
  double os_reserve_fraction = 0;
  std::string source;
};
Result<std::vector<ClassDefaults>> parse_class_table(const std::string& yaml_text, const std::string& file);
Result<const std::vector<ClassDefaults>*> class_table();

// devices/fitted.yaml's calibrations of built-in devices, fitted to their published
// measurements (`trilemma fidelity --write`), by device id; read once. A built-in device
// without a calibration block of its own gets its entry here.
Result<std::vector<std::pair<std::string, Calibration>>> parse_fitted_calibrations(const std::string& yaml_text,
                                                                                    const std::string& file);
const Calibration* fitted_calibration(const std::string& device_id);

// RAM one process can use on `device`, GiB (an unknown class keeps nothing back).
double usable_memory_gib(const Device& device);

// Where `host` is cached; TRILEMMA_HOST_PROFILE overrides.
std::string host_profile_path();

// Installed by cli: produces the host profile when no cache exists (the probe lives above
// this module because it uses the engine's kernels).
using HostProber = std::function<Result<Device>()>;
void set_host_prober(HostProber prober);

}  // namespace trilemma::devices
