// Strategy "offload": pages as in "paged", but at most `resident_bytes / page_bytes` of them
// stay in memory; the rest live in a slower tier, an unlinked temp file (in spill_dir or the
// system temp directory) read back with pread. Policy: when a new page is needed and the budget
// is full, the oldest resident page (first allocated) is written out and freed, so the most
// recent positions stay in memory. A store to a spilled page writes its two rows to the file.
// prepare_attend(layer) reads the layer's spilled pages that the calls will see into a staging
// buffer (one layer's worth at most, reported as staging bytes), so each page crosses the tier
// boundary once per layer per forward call, not once per head.
// File page f = layer * pages_per_layer + logical page sits at byte f * page_bytes (sparse).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <string>

#include "engine/kv/kv_pages.hpp"

namespace trilemma::engine {
namespace {

class OffloadKv final : public PagedKvBase {
 public:
  OffloadKv(const KvConfig& c, int fd, std::string path)
      : PagedKvBase(c, c.options.page_positions),
        m_fd(fd),
        m_path(std::move(path)),
        m_pages_per_layer((m_capacity + m_page - 1) / m_page),
        m_budget_pages(std::int64_t(c.options.offload.resident_bytes / m_page_bytes)),
        m_table(std::size_t(m_layers) * std::size_t(m_pages_per_layer)) {}
  ~OffloadKv() override { ::close(m_fd); }

  void store(int layer, int pos, const float* k, const float* v) override {
    Entry& e = entry(layer, pos / m_page);
    const int slot = pos % m_page;
    if (e.page == nullptr && !e.spilled) {
      if (std::int64_t(m_resident.size()) >= m_budget_pages && !m_resident.empty()) evict_oldest();
      if (std::int64_t(m_resident.size()) < m_budget_pages) {
        e.page = new_page();
        m_resident.push_back(index(layer, pos / m_page));
      } else {
        e.spilled = true;  // no budget at all: the page is born in the slower tier
        ++m_spilled_pages;
      }
    }
    note_stored(pos);
    if (e.page != nullptr) return write_row(e.page, slot, k, v);
    m_row.resize(m_row_bytes);
    const std::uint64_t at = file_offset(layer, pos / m_page);
    m_format.store_row(k, m_row.data(), m_kv_dim);
    write_file(m_row.data(), m_row_bytes, at + std::uint64_t(slot) * m_row_bytes);
    m_format.store_row(v, m_row.data(), m_kv_dim);
    write_file(m_row.data(), m_row_bytes, at + (std::uint64_t(m_page) + std::uint64_t(slot)) * m_row_bytes);
  }

  void prepare_attend(int layer, int n_pos) override {
    const int pages = (n_pos + m_page - 1) / m_page;
    m_staged.assign(std::size_t(pages), nullptr);
    std::size_t needed = 0;
    for (int p = 0; p < pages; ++p) needed += entry(layer, p).spilled ? m_page_bytes : 0;
    if (m_staging.size() < needed) m_staging.resize(needed);
    std::size_t used = 0;
    for (int p = 0; p < pages; ++p) {
      if (!entry(layer, p).spilled) continue;
      std::byte* dst = m_staging.data() + used;
      read_file(dst, m_page_bytes, file_offset(layer, p));
      m_staged[std::size_t(p)] = dst;
      used += m_page_bytes;
    }
  }

  void reset() override {
    for (Entry& e : m_table) {
      if (e.page != nullptr) free_page(e.page);
      e = Entry{};
    }
    m_resident.clear();
    m_spilled_pages = 0;
    m_filled = 0;
    if (::ftruncate(m_fd, 0) != 0) fail("truncate");
  }

  KvStats stats() const override {
    KvStats s = usage(std::uint64_t(m_filled));
    s.spilled_bytes = m_spilled_pages * m_page_bytes;
    s.slow_read_bytes = m_read;
    s.slow_write_bytes = m_written;
    s.staging_bytes = m_staging.capacity();
    return s;
  }

  Status status() const override {
    if (m_error.empty()) return Ok{};
    return make_error(ErrorKind::io, m_path, "kv offload", m_error);
  }

 protected:
  void visible_runs(int layer, int n_pos, std::vector<Run>& out) const override {
    for (int begin = 0; begin < n_pos; begin += m_page) {
      const int p = begin / m_page;
      const Entry& e = m_table[std::size_t(index(layer, p))];
      std::byte* page = e.page != nullptr ? e.page : m_staged[std::size_t(p)];
      out.push_back({std::min(m_page, n_pos - begin), k_rows(page), v_rows(page)});
    }
  }

 private:
  struct Entry {
    std::byte* page = nullptr;  // resident copy
    bool spilled = false;       // lives in the file
  };
  std::int64_t index(int layer, int page) const { return std::int64_t(layer) * m_pages_per_layer + page; }
  Entry& entry(int layer, int page) { return m_table[std::size_t(index(layer, page))]; }
  std::uint64_t file_offset(int layer, int page) const { return std::uint64_t(index(layer, page)) * m_page_bytes; }

  void evict_oldest() {
    const std::int64_t i = m_resident.front();
    m_resident.pop_front();
    Entry& e = m_table[std::size_t(i)];
    write_file(e.page, m_page_bytes, std::uint64_t(i) * m_page_bytes);
    free_page(e.page);
    e.page = nullptr;
    e.spilled = true;
    ++m_spilled_pages;
  }
  void write_file(const std::byte* p, std::size_t n, std::uint64_t at) {
    if (::pwrite(m_fd, p, n, off_t(at)) != ssize_t(n)) fail("write");
    m_written += n;
  }
  void read_file(std::byte* p, std::size_t n, std::uint64_t at) {
    // A page born in the file may end before its last slot: past the end reads as zeros.
    const ssize_t got = ::pread(m_fd, p, n, off_t(at));
    if (got < 0) return fail("read");
    std::memset(p + got, 0, n - std::size_t(got));
    m_read += n;
  }
  void fail(const char* what) {
    if (m_error.empty()) m_error = std::string(what) + " failed: " + std::strerror(errno);
  }

  int m_fd;
  std::string m_path;
  int m_pages_per_layer;
  std::int64_t m_budget_pages;
  std::vector<Entry> m_table;      // [layer][logical page]
  std::deque<std::int64_t> m_resident;  // table indexes of resident pages, oldest first
  std::uint64_t m_spilled_pages = 0, m_read = 0, m_written = 0;
  std::vector<std::byte> m_staging, m_row;
  std::vector<std::byte*> m_staged;  // [logical page] -> staged copy of a spilled page
  std::string m_error;
};

}  // namespace

Result<std::unique_ptr<KvCache>> make_offload_kv(const KvConfig& c) {
  std::error_code ec;
  const std::filesystem::path dir = c.options.offload.spill_dir.empty() ? std::filesystem::temp_directory_path(ec) : c.options.offload.spill_dir;
  std::string path = (dir / "trilemma-kv-XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return make_error(ErrorKind::io, path, "kv offload", std::string("cannot create the spill file: ") + std::strerror(errno));
  ::unlink(path.c_str());  // anonymous: gone when closed, even after a crash
  return std::unique_ptr<KvCache>(std::make_unique<OffloadKv>(c, fd, path));
}

}  // namespace trilemma::engine
