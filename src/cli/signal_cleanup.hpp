// Removes the temporary files being written (types/staged_file.hpp, which io::write_file_atomically
// and the GGUF writer use) when SIGINT, SIGTERM or SIGHUP ends the process while it writes: an
// interrupted `export` used to leave a 1.2 GB temporary file behind (issue 14).
#pragma once

namespace trilemma::cli {

class RemoveTempOnSignal {
 public:
  RemoveTempOnSignal();   // installs the handlers
  ~RemoveTempOnSignal();                                    // restores them
  RemoveTempOnSignal(const RemoveTempOnSignal&) = delete;
  RemoveTempOnSignal& operator=(const RemoveTempOnSignal&) = delete;
};

}  // namespace trilemma::cli
