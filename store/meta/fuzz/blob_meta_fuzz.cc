// libFuzzer: the durable BlobMeta record (blob_meta_codec.h), as a restart reads it back
// from RocksDB, possibly torn or corrupted. Arbitrary bytes, and the same bytes with a
// correct trailing checksum appended (so the structure behind the checksum is reached),
// decode to a value or DATA_LOSS — never a crash or an allocation the bytes do not justify;
// a value that decodes encodes to a record that decodes to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"

#include "strata/store/meta/blob_meta_codec.h"
#include "xxhash.h"

namespace meta = strata::store::meta;

namespace {

void Decode(std::string_view bytes) {
  absl::StatusOr<meta::BlobMeta> decoded = meta::DecodeBlobMeta(bytes);
  if (!decoded.ok()) {
    if (decoded.status().code() != absl::StatusCode::kDataLoss) std::abort();
    return;
  }
  absl::StatusOr<meta::BlobMeta> again = meta::DecodeBlobMeta(meta::EncodeBlobMeta(*decoded));
  if (!again.ok() || !(*again == *decoded)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Decode(bytes);
  std::string sealed(bytes);
  const uint64_t hash = XXH3_64bits_withSeed(sealed.data(), sealed.size(), meta::kBlobMetaSeed);
  for (int i = 0; i < 8; ++i) sealed.push_back(static_cast<char>(hash >> (8 * i)));
  Decode(sealed);
  return 0;
}
