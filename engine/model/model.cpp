#include "engine/model/model.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

namespace trilemma::engine {

void WeightStorage::Free::operator()(std::byte* p) const {
  if (mapped_bytes > 0)
    (void)munmap(p, mapped_bytes);
  else
    std::free(p);
}

namespace {
// The kernel's PMD-sized huge page (2 MiB on x86-64 and 4 KiB-page arm64; 32 MiB / 512 MiB with
// 16 / 64 KiB base pages), read once; 2 MiB where the kernel does not say.
std::size_t huge_page_bytes() {
  static const std::size_t bytes = [] {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    std::size_t v = 0;
    return in >> v && v > 0 ? v : std::size_t(2) << 20;
  }();
  return bytes;
}

// An anonymous mapping of `bytes` (a multiple of the page size) starting on a 2 MiB boundary,
// its whole 2 MiB units advised MADV_HUGEPAGE; the tail stays on small pages, so nothing beyond
// `bytes` is ever resident. nullptr when the kernel refuses the mapping.
std::byte* map_on_huge_pages(std::size_t bytes) {
  const std::size_t huge = huge_page_bytes();
  void* m = mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(m);
  const auto start = (base + huge - 1) / huge * huge;
  if (start > base) (void)munmap(m, start - base);
  const std::size_t tail = base + bytes + huge - (start + bytes);
  if (tail > 0) (void)munmap(reinterpret_cast<void*>(start + bytes), tail);
  // Advisory: where THP is off or refused, the range simply stays on small pages.
  (void)madvise(reinterpret_cast<void*>(start), bytes / huge * huge, MADV_HUGEPAGE);
  return reinterpret_cast<std::byte*>(start);
}
}  // namespace

std::byte* WeightStorage::allocate(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (bytes >= huge_page_bytes()) {
    const std::size_t rounded = (bytes + page - 1) / page * page;
    if (std::byte* p = map_on_huge_pages(rounded)) {  // zeroed by the kernel
      m_buffers.emplace_back(p, Free{rounded});
      m_sizes.push_back(rounded);
      return p;
    }
  }
  const std::size_t rounded = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, rounded));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  m_buffers.emplace_back(p, Free{});
  m_sizes.push_back(rounded);
  return p;
}

std::uint64_t WeightStorage::allocated_bytes() const {
  std::uint64_t total = 0;
  for (std::size_t b : m_sizes) total += b;
  return total;
}

bool WeightStorage::owns(const std::byte* p, std::size_t bytes) const {
  for (std::size_t i = 0; i < m_buffers.size(); ++i) {
    const std::byte* b = m_buffers[i].get();
    if (p >= b && p + bytes <= b + m_sizes[i]) return true;
  }
  return false;
}

void WeightStorage::keep_file_mapping(std::shared_ptr<const void> owner, std::span<const std::byte> bytes) {
  m_owners.push_back(std::move(owner));
  m_file_mappings.push_back(bytes);
}

bool WeightStorage::file_backed(const std::byte* p, std::size_t bytes) const {
  for (const auto& m : m_file_mappings)
    if (p >= m.data() && p + bytes <= m.data() + m.size()) return true;
  return false;
}

void WeightStorage::advise_mapped(const std::byte* p, std::size_t bytes, std::initializer_list<int> advice) const {
  if (p == nullptr || bytes == 0 || !file_backed(p, bytes)) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  // Advisory: on failure the pages simply stay resident (or mapped coarser).
  if (end > begin)
    for (const int a : advice) (void)madvise(reinterpret_cast<void*>(begin), end - begin, a);
}

void WeightStorage::release_mapped(const std::byte* p, std::size_t bytes) const { advise_mapped(p, bytes, {MADV_DONTNEED}); }

// Adjacent retired ranges merge back into one VMA.
void WeightStorage::retire_mapped(const std::byte* p, std::size_t bytes) const {
  advise_mapped(p, bytes, {MADV_DONTNEED, MADV_NOHUGEPAGE});
}

namespace {
template <class Fn>
void for_each_layer_matrix(const Model& m, Fn fn) {
  for (const auto& l : m.layers)
    for (const Matrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) fn(*w);
}
}  // namespace

std::uint64_t Model::weight_bytes() const {
  std::uint64_t total = token_embedding.bytes();
  if (classifier.data != token_embedding.data) total += classifier.bytes();
  for_each_layer_matrix(*this, [&](const Matrix& w) { total += w.bytes(); });
  return total + (2 * std::uint64_t(layers.size()) + 1) * shape.hidden * 4;
}

namespace {
// The window the kernel maps around a faulting read (fault_around_bytes, 64 KiB by default); a
// PMD-mapped folio goes as a whole when any part of it is released.
constexpr std::uint64_t k_fault_window = 64 * 1024;
}  // namespace

void Model::release_embedding_row(std::int64_t token) const {
  if (classifier.data == token_embedding.data || !storage->file_backed(token_embedding.data, token_embedding.bytes())) return;
  const auto table = reinterpret_cast<std::uintptr_t>(token_embedding.data);
  const auto row = reinterpret_cast<std::uintptr_t>(token_embedding.row(token));
  const std::uintptr_t begin = std::max(table, row / k_fault_window * k_fault_window);
  const std::uintptr_t end = std::min(table + token_embedding.bytes(),
                                      (row + token_embedding.row_bytes() + k_fault_window - 1) / k_fault_window * k_fault_window);
  storage->release_mapped(token_embedding.data + (begin - table), end - begin);
}

std::uint64_t Model::resident_weight_bytes(bool looked_up) const {
  std::uint64_t total = storage->allocated_bytes();
  const auto mapped = [&](const void* p, std::uint64_t bytes) {
    return p != nullptr && !storage->owns(static_cast<const std::byte*>(p), bytes);
  };
  const auto add_if_mapped = [&](const void* p, std::uint64_t bytes) { total += mapped(p, bytes) ? bytes : 0; };
  for_each_layer_matrix(*this, [&](const Matrix& w) { add_if_mapped(w.data, w.bytes()); });
  const std::uint64_t norm_bytes = std::uint64_t(shape.hidden) * 4;
  for (const auto& l : layers) add_if_mapped(l.attn_norm, norm_bytes), add_if_mapped(l.ffn_norm, norm_bytes);
  add_if_mapped(final_norm, norm_bytes);
  add_if_mapped(classifier.data, classifier.bytes());  // a tied classifier streams the whole table
  // An untied embedding in owned buffers is counted above; in memory (not a file), in full.
  if (classifier.data != token_embedding.data && !storage->file_backed(token_embedding.data, token_embedding.bytes()))
    add_if_mapped(token_embedding.data, token_embedding.bytes());
  if (looked_up && classifier.data != token_embedding.data && storage->file_backed(token_embedding.data, token_embedding.bytes()))
    total += std::min(token_embedding.bytes(), std::max<std::uint64_t>(token_embedding.row_bytes(), k_fault_window));
  return total;
}

std::uint64_t Model::decode_bytes_per_token() const {
  std::uint64_t total = classifier.bytes() + token_embedding.row_bytes();
  for_each_layer_matrix(*this, [&](const Matrix& w) { total += w.bytes(); });
  return total + (2 * std::uint64_t(layers.size()) + 1) * shape.hidden * 4;
}

std::string Model::weights_name() const {
  std::map<TensorType, std::uint64_t> bytes;  // weights (elements) per format
  for_each_layer_matrix(*this, [&](const Matrix& w) { bytes[w.type] += std::uint64_t(w.rows * w.cols); });
  if (bytes.size() == 1) return std::string(info(bytes.begin()->first).name);
  TensorType most = TensorType::f32;
  std::uint64_t best = 0;
  for (auto [t, b] : bytes)
    if (b > best) best = b, most = t;
  return std::string(info(most).name) + "+mixed";
}

}  // namespace trilemma::engine
