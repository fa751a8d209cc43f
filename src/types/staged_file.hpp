// An output file written beside its target and put in place only when complete: the one
// implementation behind every file trilemma writes (io::write_file_atomically for reports,
// profiles and emitted configs; the engine's GGUF writer). In src/types because both the planner
// and the engine write files and depend on nothing else in common; std and POSIX only.
//
// What it guarantees (reliability D15-D17, D21):
//   - the temporary file is created exclusively (O_EXCL, O_NOFOLLOW) under an unpredictable name,
//     `<target>.tmp.<pid>.<random>`: a symlink planted at a guessed name is never followed;
//   - the data is synced before the rename, and the directory after it;
//   - an existing target keeps its mode; a read-only one is refused, not replaced;
//   - a symlink is followed to the file it names (a dangling one: to the file it would name), so
//     the link stays a link; a device or FIFO is written in place (replacing /dev/null would
//     make it a regular file); a file with other hard links is overwritten in place after the
//     whole content was written and synced beside it, so the links keep seeing it;
//   - a StagedFile destroyed before commit() removes its temporary file; and while one exists,
//     staged_temp_path() names it for a signal handler (cli/signal_cleanup.hpp).
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>

#include "types/result.hpp"

namespace trilemma {

class StagedFile {
 public:
  static Result<StagedFile> create(const std::filesystem::path& target);
  StagedFile(StagedFile&& other) noexcept;
  StagedFile& operator=(StagedFile&&) = delete;
  StagedFile(const StagedFile&) = delete;
  ~StagedFile();

  Status write(const void* data, std::size_t bytes);
  // Syncs and puts the content in place; the StagedFile is spent either way.
  Status commit();

  const std::string& target() const { return m_target; }  // the file it will replace (symlinks followed)

 private:
  StagedFile() = default;
  void abandon();
  std::string m_requested, m_target, m_temp;
  int m_fd = -1;
  bool m_in_place = false;     // a device or FIFO: m_fd is the target itself
  bool m_copy_in = false;      // a hard-linked target: the staged content is copied into it
  unsigned m_mode = 0;         // the target's permission bits, when it exists
  bool m_keep_mode = false;
  int m_slot = -1;             // in the signal handler's table, or -1
};

// The temporary files StagedFiles are writing now, for a signal handler to remove: slot `i` of
// k_max_staged is a path or "" (async-signal-safe: static buffers, nothing allocated).
inline constexpr int k_max_staged = 8;
const char* staged_temp_path(int slot);

}  // namespace trilemma
