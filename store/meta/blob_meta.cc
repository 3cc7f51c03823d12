#include "strata/store/meta/blob_meta.h"

#include "absl/strings/str_cat.h"

namespace strata::store::meta {

std::string BlobMetaSummary(const BlobMeta& m) {
  std::string out = absl::StrCat("BlobMeta{key=", m.key.ToHex(), " ns=", m.namespace_hash.ToHex(),
                                 " pages=[", m.first_page, ", ", uint64_t{m.first_page} + m.pages,
                                 ") bytes=", m.bytes, " tokens=", m.tokens.size(),
                                 " checksums=", m.checksums.size(), " dram=", m.in_dram);
  if (m.parent) absl::StrAppend(&out, " parent=", m.parent->key.ToHex(), "/", m.parent->pages);
  if (m.ssd) absl::StrAppend(&out, " ssd=[", m.ssd->offset, ", +", m.ssd->length, ")");
  absl::StrAppend(&out, " hits=", m.hits, " pinned=", m.pinned, " gen=", m.generation, "}");
  return out;
}

}  // namespace strata::store::meta
