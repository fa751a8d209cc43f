#include "types/staged_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace trilemma {
namespace {

// Paths a signal handler may unlink; a slot is claimed by a StagedFile and cleared when it ends.
char g_staged[k_max_staged][4096];

int claim_slot(const std::string& path) {
  if (path.size() >= sizeof g_staged[0]) return -1;
  for (int i = 0; i < k_max_staged; ++i)
    if (g_staged[i][0] == '\0') {
      std::memcpy(g_staged[i], path.c_str(), path.size() + 1);
      return i;
    }
  return -1;
}

void release_slot(int slot) {
  if (slot >= 0) g_staged[slot][0] = '\0';
}

Error io_error(const std::string& file, const std::string& what) {
  return make_error(ErrorKind::io, file, "", what + ": " + std::strerror(errno));
}

// The file a path names once symlinks are followed, even when the last one dangles.
std::filesystem::path follow(const std::filesystem::path& requested) {
  std::filesystem::path p = requested;
  std::error_code ec;
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(p, ec); ++hops) {
    const auto next = std::filesystem::read_symlink(p, ec);
    if (ec) break;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return p;
}

bool write_all(int fd, const std::byte* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= std::size_t(w);
  }
  return true;
}

void sync_directory_of(const std::string& file) {
  const auto dir = std::filesystem::path(file).parent_path();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) ::fsync(fd), ::close(fd);
}

}  // namespace

const char* staged_temp_path(int slot) { return slot >= 0 && slot < k_max_staged ? g_staged[slot] : ""; }

Result<StagedFile> StagedFile::create(const std::filesystem::path& requested) {
  StagedFile f;
  f.m_requested = requested.string();
  f.m_target = follow(requested).string();
  struct stat st {};
  const bool exists = ::stat(f.m_target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return make_error(ErrorKind::io, f.m_requested, "", "is a directory: give a file name");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or socket: written in place (O_NONBLOCK: a FIFO without a reader fails
    // instead of waiting for one).
    f.m_fd = ::open(f.m_target.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (f.m_fd < 0) return io_error(f.m_requested, "cannot write");
    f.m_in_place = true;
    return f;
  }
  if (exists && (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0)
    return make_error(ErrorKind::io, f.m_requested, "", "is read-only: not replaced (make it writable, or write elsewhere)");
  if (exists) f.m_mode = st.st_mode & 07777, f.m_keep_mode = true;
  f.m_copy_in = exists && st.st_nlink > 1;
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "%08x%08x", rd(), rd());
    f.m_temp = f.m_target + ".tmp." + std::to_string(::getpid()) + "." + suffix;
    f.m_fd = ::open(f.m_temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (f.m_fd >= 0 || errno != EEXIST) break;
  }
  if (f.m_fd < 0) return io_error(f.m_requested, "cannot create a temporary file beside it");
  f.m_slot = claim_slot(f.m_temp);
  return f;
}

StagedFile::StagedFile(StagedFile&& o) noexcept
    : m_requested(std::move(o.m_requested)), m_target(std::move(o.m_target)), m_temp(std::move(o.m_temp)), m_fd(o.m_fd),
      m_in_place(o.m_in_place), m_copy_in(o.m_copy_in), m_mode(o.m_mode), m_keep_mode(o.m_keep_mode), m_slot(o.m_slot) {
  o.m_fd = -1, o.m_slot = -1, o.m_temp.clear();
}

StagedFile::~StagedFile() { abandon(); }

void StagedFile::abandon() {
  if (m_fd >= 0) ::close(m_fd), m_fd = -1;
  if (!m_in_place && !m_temp.empty()) ::unlink(m_temp.c_str());
  m_temp.clear();
  release_slot(m_slot);
  m_slot = -1;
}

Status StagedFile::write(const void* data, std::size_t bytes) {
  if (m_fd < 0) return make_error(ErrorKind::internal, m_requested, "", "written after commit");
  if (!write_all(m_fd, static_cast<const std::byte*>(data), bytes)) {
    const Error e = io_error(m_requested, "write failed");
    abandon();
    return e;
  }
  return Ok{};
}

Status StagedFile::commit() {
  if (m_fd < 0) return make_error(ErrorKind::internal, m_requested, "", "committed twice");
  if (m_in_place) {
    ::close(m_fd), m_fd = -1;
    return Ok{};
  }
  if (::fsync(m_fd) != 0) {
    const Error e = io_error(m_requested, "cannot sync");
    abandon();
    return e;
  }
  if (m_keep_mode && ::fchmod(m_fd, m_mode) != 0) {
    const Error e = io_error(m_requested, "cannot keep the file's mode");
    abandon();
    return e;
  }
  if (m_copy_in) {
    // Other hard links name the target: its content is replaced, the inode kept. The whole
    // content is already on disk beside it, so a full disk failed above, not halfway here.
    const int in = ::open(m_temp.c_str(), O_RDONLY | O_CLOEXEC), out = ::open(m_target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    bool ok = in >= 0 && out >= 0;
    std::vector<std::byte> buf(1 << 20);
    for (ssize_t n; ok && (n = ::read(in, buf.data(), buf.size())) != 0;) ok = n > 0 && write_all(out, buf.data(), std::size_t(n));
    ok = ok && ::fsync(out) == 0;
    const Error e = io_error(m_requested, "cannot write in place");
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    abandon();
    if (!ok) return e;
    return Ok{};
  }
  ::close(m_fd), m_fd = -1;
  if (::rename(m_temp.c_str(), m_target.c_str()) != 0) {
    const Error e = io_error(m_requested, "cannot rename into place");
    abandon();
    return e;
  }
  m_temp.clear();
  release_slot(m_slot), m_slot = -1;
  sync_directory_of(m_target);
  return Ok{};
}

}  // namespace trilemma
