// A llama-family model ready to run: shape, and views of every weight in its storage format.
// Weights live in mapped files or in owned, 64-byte aligned buffers that the Model keeps
// alive; the views never outlive them. Matrices are row-major [out][in] (GGUF ne[0] = in).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/quant/x16_layout.hpp"
#include "engine/quant/x4_layout.hpp"
#include "types/model_shape.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::engine {

// How a matrix's rows are stored: ggml's file layout, or one of the kernel-private layouts
// made at load time (quant/x4_layout.hpp: row by row for the x4 tiles; quant/x16_layout.hpp:
// strips of 16 rows for the x16 strips).
enum class WeightLayout { ggml, x4, x16 };

struct Matrix {
  TensorType type = TensorType::f32;
  std::int64_t rows = 0, cols = 0;  // out, in
  const std::byte* data = nullptr;
  WeightLayout layout = WeightLayout::ggml;

  bool repacked() const { return layout != WeightLayout::ggml; }

  std::size_t row_bytes() const { return tensor_bytes(type, std::uint64_t(cols)); }
  std::uint64_t bytes() const { return std::uint64_t(rows) * row_bytes(); }
  const std::byte* row(std::int64_t r) const { return data + std::size_t(r) * row_bytes(); }  // REQUIRES ggml layout
  // REQUIRES x4 (then the format has 32-weight blocks with one fp16 scale): row r's parts.
  const std::uint8_t* x4_codes(std::int64_t r) const {
    return reinterpret_cast<const std::uint8_t*>(data) + std::size_t(r) * x4_code_bytes(row_bytes(), cols / 32);
  }
  const std::uint16_t* x4_scales(std::int64_t r) const {
    const std::size_t codes = std::size_t(rows) * x4_code_bytes(row_bytes(), cols / 32);
    return reinterpret_cast<const std::uint16_t*>(data + codes) + std::size_t(r) * std::size_t(cols / 32);
  }
  // REQUIRES x16: strip s's (rows 16s .. 16s + 15) parts.
  const std::uint8_t* x16_codes(std::int64_t s) const {
    return reinterpret_cast<const std::uint8_t*>(data) + std::size_t(s) * x16_strip_code_bytes(row_bytes(), cols / 32);
  }
  const std::uint16_t* x16_scales(std::int64_t s) const {
    const std::size_t codes = std::size_t(rows / k_x16_rows) * x16_strip_code_bytes(row_bytes(), cols / 32);
    return reinterpret_cast<const std::uint16_t*>(data + codes) + std::size_t(s) * k_x16_rows * std::size_t(cols / 32);
  }
};

struct LayerWeights {
  const float* attn_norm = nullptr;  // [hidden]
  Matrix wq, wk, wv, wo;             // [q_dim][hidden], [kv_dim][hidden] x 2, [hidden][q_dim]
  const float* ffn_norm = nullptr;   // [hidden]
  Matrix w1, w2, w3;                 // gate [ffn][hidden], down [hidden][ffn], up [ffn][hidden]
};

// Owns weight memory: aligned heap buffers and anything else (mappings) held by shared_ptr.
class WeightStorage {
 public:
  // 64-byte aligned, zeroed. From the kernel's huge page size up (2 MiB on x86-64), a mapping
  // of its own on huge pages where the kernel allows them: decode streams every weight per token, and with 4 KiB pages q4_0 lost
  // a tenth of its speed to TLB misses (docs/performance.md, session 25).
  std::byte* allocate(std::size_t bytes);
  // Whether [p, p + bytes) lies in a buffer allocate() returned (so it may be rewritten).
  bool owns(const std::byte* p, std::size_t bytes) const;
  void keep(std::shared_ptr<const void> owner) { m_owners.push_back(std::move(owner)); }
  // Keeps a read-only mapping of a file, whose pages may be handed back (release_mapped).
  void keep_file_mapping(std::shared_ptr<const void> owner, std::span<const std::byte> bytes);
  // Whether [p, p + bytes) lies in a mapping kept by keep_file_mapping.
  bool file_backed(const std::byte* p, std::size_t bytes) const;
  // [p, p + bytes) of a kept file mapping was copied and need not stay resident: hands its
  // whole pages back to the kernel, so a repacked model is not resident twice. The file's
  // pages stay in the page cache and a later read faults them in again. Anything else (owned
  // buffers, bytes held in memory, whose pages would come back zeroed) is left alone.
  void release_mapped(const std::byte* p, std::size_t bytes) const;
  // release_mapped for bytes copied for good (a converted or repacked matrix): also
  // advises the range MADV_NOHUGEPAGE, so a fault in a neighbour read in place cannot map it
  // back with one 2 MiB entry for a page-cache folio spanning both (Linux maps a folio whole
  // only inside one VMA allowing it). Only the released ranges: matrices read in place keep
  // their 2 MiB mappings (4 KiB ones cost f16 decode 28% in TLB misses, 10.7 -> 7.7 tok/s).
  void retire_mapped(const std::byte* p, std::size_t bytes) const;
  std::uint64_t allocated_bytes() const;  // of the buffers allocate() returned

 private:
  struct Free {
    std::size_t mapped_bytes = 0;  // > 0: a mapping of that length (munmap), else free()
    void operator()(std::byte* p) const;
  };
  std::vector<std::unique_ptr<std::byte[], Free>> m_buffers;
  std::vector<std::size_t> m_sizes;
  std::vector<std::shared_ptr<const void>> m_owners;
  std::vector<std::span<const std::byte>> m_file_mappings;

  // madvise(advice) on the whole pages of [p, p + bytes), only inside a kept file mapping.
  void advise_mapped(const std::byte* p, std::size_t bytes, std::initializer_list<int> advice) const;
};

struct Model {
  std::string name;   // where it came from, for messages: the file's path, or the synthetic shape's id
  std::string title;  // the model's own name, written as an export's general.name: its file's
                      // general.name, else the file's stem (never a local path: reliability D22)
  bool synthetic = false;  // weights from a PRNG, not trained
  ModelShape shape;
  float norm_eps = 1e-5f;
  Matrix token_embedding;  // [vocab][hidden]
  std::vector<LayerWeights> layers;
  const float* final_norm = nullptr;
  Matrix classifier;       // [vocab][hidden]; same data as token_embedding when tied
  std::vector<std::string> fallbacks;  // "name: q4_0 -> f32 (row 172 not a multiple of 32)"
  std::shared_ptr<WeightStorage> storage = std::make_shared<WeightStorage>();

  // Bytes of all matrices and norms, counting a tied classifier once.
  std::uint64_t weight_bytes() const;
  // Bytes of weights resident at the peak of a run (`looked_up`: one that looked up a token):
  // every owned buffer, every matrix and norm still in the mapping (each token streams them),
  // and of an untied embedding table left in the mapping one lookup's window (each row's pages
  // are handed back after it is read: release_embedding_row): the rest is never resident.
  std::uint64_t resident_weight_bytes(bool looked_up) const;
  // After token `token`'s embedding row was read: when the untied table is read through a file
  // mapping, hands back the pages the read brought in. The kernel maps more than the row
  // (fault-around, 64 KiB; a large folio of the page cache, up to 2 MiB), so without this each
  // distinct token left up to 2 MiB resident, past what resident_weight_bytes counted: 41 MiB
  // after 26 tokens of TinyLlama's q8_0 table on ext4. A later read faults the pages back in
  // from the page cache. A tied table (the classifier streams it) and owned memory are left alone.
  void release_embedding_row(std::int64_t token) const;
  // Bytes one decoded token streams: every layer matrix, norms, the classifier and one
  // embedding row.
  std::uint64_t decode_bytes_per_token() const;
  // The format holding most layer weights, for reports: "q4_0", or "q4_0+mixed" when some
  // matrices use another (fallbacks).
  std::string weights_name() const;
};

}  // namespace trilemma::engine
