// KvLayout: the shape of the KV-cache bytes of one model shard, and BlobLayout:
// where each layer's pages sit inside a blob.
//
// A KvLayout is part of a namespace (namespace.h): blobs of different layouts
// never match. Its numeric enum values and field widths go into prefix hashes
// (prefix_hash.h) and, later, the wire, so they are frozen: never renumber an
// enumerator, only add new ones.
//
// All types here are plain values; all functions are pure and thread-safe.
//
// Errors:
//   KvLayout::Validate      INVALID_ARGUMENT naming the field, the allowed range
//                           and the value, for the first bad field.
//   ParseDType/ParseKvFormat INVALID_ARGUMENT for an unknown name.
//   CheckCompatible         FAILED_PRECONDITION (layout mismatch) naming the
//                           first differing field and both values.
//   BlobLayout::Create      INVALID_ARGUMENT for an invalid layout or 0 pages.
//   BlobLayout::LayerPageRange  INVALID_ARGUMENT for an empty page range,
//                           OUT_OF_RANGE for a layer or page past the blob's end.
//
// Limits (inclusive; a layout outside them is rejected by Validate):
//   num_layers    1 .. 1024     (largest public models have ~130)
//   num_kv_heads  1 .. 1024     per TP rank; exactly 1 for kMlaLatent
//   head_dim      1 .. 16384    (MLA latent width is 576 for DeepSeek-V3)
//   page_tokens   1 .. 65536    (deployments use 16 .. 512)
//   tp_world      1 .. 1024, tp_rank 0 .. tp_world-1
//   BytesPerPage  <= kMaxPageBytes (1 GiB): one page of all layers.
// Within these limits no byte count here can overflow uint64.
//
// Blob byte layout
// ----------------
// A blob of n pages is layer-major: for each layer l, its n pages are
// contiguous, so pages [a, a+k) of every layer are num_layers contiguous
// ranges (a prefix read needs no bytes of pages >= a+k), and a layer-wise
// streamer can fetch layer 0, then layer 1, ... With L = BytesPerLayerPage():
//
//   offset              length   content
//   ------------------  -------  --------------------------------------------
//   0                   n*L      layer 0: page 0, page 1, ..., page n-1
//   n*L                 n*L      layer 1: page 0, ..., page n-1
//   ...
//   (l*n + p)*L         L        layer l, page p
//   ...
//   (num_layers-1)*n*L  n*L      layer num_layers-1
//   total = num_layers * n * L = n * BytesPerPage()
//
// One layer-page, with B = BytesPerKvBlock()
//   = page_tokens * num_kv_heads * head_dim * DTypeSize(dtype):
//
//   format       offset  length  content (row-major, last index fastest)
//   -----------  ------  ------  ------------------------------------------
//   kKeyValue    0       B       K[page_tokens][num_kv_heads][head_dim]
//                B       B       V[page_tokens][num_kv_heads][head_dim]
//   kMlaLatent   0       B       latent[page_tokens][1][head_dim]
//
// Elements are stored in their dtype's little-endian encoding (IEEE 754 for the
// float types, OCP FP8 for the float8 types, two's complement for int8).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::radix {

// Element type of the KV bytes. Values are frozen (hashed and on the wire);
// 0 is never a valid dtype, so a zero-initialised layout fails Validate.
enum class DType : uint8_t {
  kFloat16 = 1,     // IEEE binary16, 2 bytes
  kBFloat16 = 2,    // bfloat16, 2 bytes
  kFloat32 = 3,     // IEEE binary32, 4 bytes
  kFloat8E4M3 = 4,  // OCP FP8 E4M3 (e4m3fn), 1 byte
  kFloat8E5M2 = 5,  // OCP FP8 E5M2, 1 byte
  kInt8 = 6,        // signed 8-bit integer, 1 byte
  kUInt8 = 7,       // unsigned 8-bit integer, 1 byte
};

// Bytes per element; 0 for a value that is not a DType enumerator.
uint32_t DTypeSize(DType dtype);
// Canonical lowercase name ("bfloat16", "float8_e4m3", ...); "unknown(N)" for
// a value that is not an enumerator.
std::string DTypeName(DType dtype);
// Inverse of DTypeName; also accepts the aliases fp16, half, bf16, fp32, float,
// fp8_e4m3, float8_e4m3fn, fp8_e5m2. INVALID_ARGUMENT for anything else.
absl::StatusOr<DType> ParseDType(std::string_view name);

// What one token's KV looks like. Values are frozen (hashed and on the wire).
enum class KvFormat : uint8_t {
  // Separate K and V vectors per token, per KV head, per layer.
  kKeyValue = 1,
  // Multi-head latent attention: one latent vector per token per layer
  // (num_kv_heads must be 1; head_dim is the latent width, e.g. 576).
  kMlaLatent = 2,
};

// "key_value" / "mla_latent"; "unknown(N)" for a non-enumerator.
std::string KvFormatName(KvFormat format);
// Inverse of KvFormatName. INVALID_ARGUMENT for anything else.
absl::StatusOr<KvFormat> ParseKvFormat(std::string_view name);

inline constexpr uint32_t kMaxLayers = 1024;
inline constexpr uint32_t kMaxKvHeads = 1024;
inline constexpr uint32_t kMaxHeadDim = 16384;
inline constexpr uint32_t kMaxPageTokens = 65536;
inline constexpr uint32_t kMaxTpWorld = 1024;
inline constexpr uint64_t kMaxPageBytes = uint64_t{1} << 30;

// The KV shape of one tensor-parallel shard of one model. Fields are frozen in
// this order (the namespace encoding follows it). Default-constructed, it is
// invalid; fill it with designated initializers and call Validate().
struct KvLayout {
  uint32_t num_layers = 0;
  uint32_t num_kv_heads = 0;  // KV heads held by this TP rank
  uint32_t head_dim = 0;      // elements per head (latent width for MLA)
  DType dtype = DType{0};
  uint32_t page_tokens = 0;  // tokens per page
  KvFormat format = KvFormat{0};
  uint32_t tp_rank = 0;
  uint32_t tp_world = 0;

  // OK, or INVALID_ARGUMENT for the first field outside the limits above.
  absl::Status Validate() const;

  // Bytes of one K block, one V block, or (MLA) the latent block of one layer
  // and one page. REQUIRES: Validate().ok() (else the value is meaningless).
  uint64_t BytesPerKvBlock() const;
  // Bytes of one layer of one page: K block then V block for kKeyValue, one
  // latent block for kMlaLatent. REQUIRES: Validate().ok().
  uint64_t BytesPerLayerPage() const;
  // Bytes of one page of all layers. REQUIRES: Validate().ok().
  uint64_t BytesPerPage() const;

  // "KvLayout{layers=32 kv_heads=8 head_dim=128 dtype=bfloat16 page_tokens=16
  // format=key_value tp=0/1}"; well defined for invalid layouts too.
  std::string ToString() const;

  friend bool operator==(const KvLayout&, const KvLayout&) = default;
  friend std::ostream& operator<<(std::ostream& os, const KvLayout& layout) {
    return os << layout.ToString();
  }
};

// OK when `got` equals `expected`; else FAILED_PRECONDITION "KV layout
// mismatch: <field> expected <x>, got <y>" for the first differing field (in
// declaration order). Compares only; does not validate either layout.
absl::Status CheckCompatible(const KvLayout& expected, const KvLayout& got);

// A byte range inside a blob.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;

  uint64_t end() const { return offset + length; }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
  friend std::ostream& operator<<(std::ostream& os, const ByteRange& r) {
    return os << "[" << r.offset << ", +" << r.length << ")";
  }
};

// The byte layout (table above) of one blob of `blob_pages` pages of one
// KvLayout. Immutable value; always valid once created.
class BlobLayout {
 public:
  // INVALID_ARGUMENT if `layout` is invalid or blob_pages == 0.
  static absl::StatusOr<BlobLayout> Create(const KvLayout& layout, uint32_t blob_pages);

  const KvLayout& layout() const { return layout_; }
  uint32_t blob_pages() const { return blob_pages_; }

  // num_layers * blob_pages * BytesPerLayerPage().
  uint64_t TotalBytes() const;

  // The bytes of pages [first_page, first_page + num_pages) of `layer`: one
  // contiguous range. INVALID_ARGUMENT if num_pages == 0; OUT_OF_RANGE if
  // layer >= num_layers or first_page + num_pages > blob_pages.
  absl::StatusOr<ByteRange> LayerPageRange(uint32_t layer, uint32_t first_page,
                                           uint32_t num_pages) const;

  // LayerPageRange(l, first_page, num_pages) for every layer l in order: the
  // num_layers ranges a reader fetches for those pages. Same errors.
  absl::StatusOr<std::vector<ByteRange>> PageRangeOfAllLayers(uint32_t first_page,
                                                              uint32_t num_pages) const;

  friend bool operator==(const BlobLayout&, const BlobLayout&) = default;

 private:
  BlobLayout(const KvLayout& layout, uint32_t blob_pages)
      : layout_(layout), blob_pages_(blob_pages) {}

  KvLayout layout_;
  uint32_t blob_pages_;
};

}  // namespace strata::radix
