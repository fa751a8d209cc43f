// Removes an output's temporary file (`<target>.tmp.<pid>`, the name io::write_file_atomically
// and the GGUF writer use) when SIGINT, SIGTERM or SIGHUP ends the process while it is written:
// an interrupted `export` used to leave a 1.2 GB temporary file behind (issue 14).
#pragma once
#include <string>

namespace trilemma::cli {

class RemoveTempOnSignal {
 public:
  explicit RemoveTempOnSignal(const std::string& target);  // installs the handlers
  ~RemoveTempOnSignal();                                    // restores them
  RemoveTempOnSignal(const RemoveTempOnSignal&) = delete;
  RemoveTempOnSignal& operator=(const RemoveTempOnSignal&) = delete;
};

}  // namespace trilemma::cli
