// BlobId: how tiering names a blob.
//
// tiering does not know what a blob is (that is radix's business and tiering may not
// depend on radix), so its policies and bookkeeping identify blobs by an opaque 64-bit
// id that the caller (the node engine) chooses and keeps unique among live blobs, e.g.
// a slot number or the low bits of a BlobKey. Value type.
#pragma once

#include <cstdint>

namespace strata::tiering {

using BlobId = uint64_t;

}  // namespace strata::tiering
