#include "strata/tiering/leaf_first_index.h"

namespace strata::tiering {

const BlobView* LeafFirstIndex::Find(BlobId id) const {
  const auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second.view;
}

bool LeafFirstIndex::Insert(BlobId id, const BlobTraits& traits, double mark) {
  if (const auto it = nodes_.find(id); it != nodes_.end()) {
    Node& node = it->second;
    BlobView& view = node.view;
    order_.erase(KeyOf(view));
    tracked_bytes_ = tracked_bytes_ - view.traits.bytes + traits.bytes;
    const BlobId old_parent = view.traits.parent;
    view.traits = traits;
    if (traits.parent != old_parent) {
      view.traits.parent = old_parent;  // Unlink finds the parent it counted in
      Unlink(&node);
      Link(&node, traits.parent, /*new_child=*/false);
    }
    TouchView(&view, mark);
    return false;
  }
  Node& node = nodes_[id];
  node.generation = ++generations_;
  BlobView& view = node.view;
  view.id = id;
  view.traits = traits;
  view.insert_tick = view.last_touch = ++clock_;
  view.touches = 1;
  view.mark = mark;
  view.priority = priority_->Priority(view);
  tracked_bytes_ += traits.bytes;
  Place(view);
  Link(&node, traits.parent, /*new_child=*/true);
  return true;
}

bool LeafFirstIndex::Touch(BlobId id, double mark) {
  const auto it = nodes_.find(id);
  if (it == nodes_.end()) return false;
  BlobView& view = it->second.view;
  order_.erase(KeyOf(view));
  TouchView(&view, mark);
  return true;
}

void LeafFirstIndex::TouchView(BlobView* view, double mark) {
  ++view->touches;
  view->last_touch = ++clock_;
  view->mark = mark;
  view->priority = priority_->Priority(*view);
  Place(*view);
}

void LeafFirstIndex::SetMark(BlobId id, double mark) {
  const auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  BlobView& view = it->second.view;
  order_.erase(KeyOf(view));
  view.mark = mark;
  view.priority = priority_->Priority(view);
  Place(view);
}

void LeafFirstIndex::SetChildrenEver(BlobId id, uint32_t children_ever) {
  if (const auto it = nodes_.find(id); it != nodes_.end()) {
    it->second.view.children_ever = children_ever;
  }
}

void LeafFirstIndex::Erase(BlobId id) {
  const auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  Node& node = it->second;
  if (const auto parent = nodes_.find(node.view.traits.parent);
      node.view.traits.parent != 0 && parent != nodes_.end() &&
      parent->second.view.newest_child == id) {
    parent->second.view.newest_child = 0;
  }
  Unlink(&node);
  order_.erase(KeyOf(node.view));
  tracked_bytes_ -= node.view.traits.bytes;
  nodes_.erase(it);
}

void LeafFirstIndex::CollectVictims(uint64_t bytes_needed,
                                    absl::FunctionRef<bool(BlobId)> evictable,
                                    std::vector<BlobId>* victims) const {
  uint64_t collected = 0;
  for (auto it = order_.begin(); it != order_.end() && collected < bytes_needed; ++it) {
    const BlobId id = it->id;
    if (!evictable(id)) continue;
    victims->push_back(id);
    collected += nodes_.find(id)->second.view.traits.bytes;
  }
}

const BlobView* LeafFirstIndex::First() const {
  return order_.empty() ? nullptr : Find(order_.begin()->id);
}

void LeafFirstIndex::Place(const BlobView& view) {
  const OrderKey key = KeyOf(view);
  // A touch usually ranks last (LRU-like priorities): then the end is the place, and the
  // hint saves the descent.
  if (order_.empty() || OrderCompare()(*order_.rbegin(), key) < 0) {
    order_.insert(order_.end(), key);
  } else {
    order_.insert(key);
  }
}

void LeafFirstIndex::Link(Node* node, BlobId parent, bool new_child) {
  node->view.traits.parent = parent;
  node->parent_generation = 0;
  if (parent == 0 || parent == node->view.id) return;
  const auto parent_it = nodes_.find(parent);
  if (parent_it == nodes_.end()) return;
  Node& parent_node = parent_it->second;
  node->parent_generation = parent_node.generation;
  if (new_child) {
    ++parent_node.view.children_ever;
    parent_node.view.newest_child = node->view.id;
  }
  CountChild(&parent_node, +1);
}

void LeafFirstIndex::Unlink(Node* node) {
  const uint64_t linked_generation = node->parent_generation;
  node->parent_generation = 0;
  if (linked_generation == 0) return;
  const auto parent_it = nodes_.find(node->view.traits.parent);
  // The parent may have been erased (and even re-inserted) since: then this child no
  // longer counts in it.
  if (parent_it == nodes_.end() || parent_it->second.generation != linked_generation) return;
  CountChild(&parent_it->second, -1);
}

void LeafFirstIndex::CountChild(Node* parent, int delta) {
  BlobView& view = parent->view;
  const bool was_leaf = view.tracked_children == 0;
  if (shape_ == Shape::kPriorityOnly) {
    view.tracked_children += delta;
    return;
  }
  const bool regroup = delta > 0 ? was_leaf : view.tracked_children == 1;
  if (regroup) order_.erase(KeyOf(view));
  view.tracked_children += delta;
  if (regroup) order_.insert(KeyOf(view));
}

}  // namespace strata::tiering
