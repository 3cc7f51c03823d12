// BlobTable: the node's blob records, by record id and (for linked blobs) by key.
//
// Owns every BlobRecord (pending, linked and unlinked). Linked records are also indexed
// by key in key order, which List pages through; at most one record per key is linked.
// Pointers returned stay valid until the record is erased.
//
// Thread safety: thread-compatible (the NodeEngine guards it with its mutex).
// Errors: List INVALID_ARGUMENT for a page token it did not hand out; nothing else fails;
// misuse (a duplicate id, linking a key twice, erasing a linked record) is
// a caller bug and CHECK-fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

#include "strata/radix/blob_key.h"
#include "strata/store/core/access_scope.h"
#include "strata/store/core/blob_record.h"
#include "strata/store/core/node_engine_types.h"

namespace strata::store::core {

class BlobTable {
 public:
  BlobTable() = default;
  BlobTable(const BlobTable&) = delete;
  BlobTable& operator=(const BlobTable&) = delete;

  // Takes ownership of `record` (any state but kLinked). REQUIRES: its id is new.
  BlobRecord* Add(std::unique_ptr<BlobRecord> record);
  BlobRecord* Find(tiering::BlobId id) const;
  // The linked record of `key`, or nullptr.
  BlobRecord* FindLinked(const radix::BlobKey& key) const;

  // kPending -> kLinked, visible by key. REQUIRES: no other record of its key is linked.
  void Link(BlobRecord* record);
  // kLinked or kPending -> kUnlinked; no longer visible by key.
  void Unlink(BlobRecord* record);
  // Destroys the record. REQUIRES: not linked.
  void Erase(tiering::BlobId id);

  // Calls fn on linked records with key > `after` (or all, when after is null) in key
  // order until fn returns false.
  void ForEachLinkedAfter(const radix::BlobKey* after,
                          absl::FunctionRef<bool(const BlobRecord&)> fn) const;

  // One page of NodeEngine::List: linked records (of request.namespace_hash, when set) in
  // key order after the page token's key, at most request.limit (0: 100; at most 1000),
  // as BlobInfoOf shows them without tokens; next_page_token ("v1:" + the last key's hex)
  // when more follow.
  absl::StatusOr<ListReply> List(const ListRequest& request,
                                 const AccessScope& scope = AccessScope::All()) const;

  size_t size() const { return records_.size(); }
  size_t linked() const { return by_key_.size(); }
  // Calls fn on every record (any order).
  void ForEach(absl::FunctionRef<void(const BlobRecord&)> fn) const;

 private:
  absl::flat_hash_map<tiering::BlobId, std::unique_ptr<BlobRecord>> records_;
  absl::btree_map<radix::BlobKey, BlobRecord*> by_key_;
};

}  // namespace strata::store::core
