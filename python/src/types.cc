// The value types of the Python module (python/README.md): thin wrappers over libstrata's.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

#include "client/cli/layout_spec.h"
#include "pybind11/operators.h"
#include "pybind11/stl.h"
#include "python/src/bindings.h"
#include "strata/radix/prefix_hash.h"

namespace strata::python {
namespace {

DType DTypeFrom(const py::object& value) {
  if (py::isinstance<py::str>(value))
    return ValueOrThrow(radix::ParseDType(value.cast<std::string>()));
  return value.cast<DType>();
}

KvFormat FormatFrom(const py::object& value) {
  if (py::isinstance<py::str>(value)) {
    const std::string name = value.cast<std::string>();
    if (name == "kv") return KvFormat::kKeyValue;
    if (name == "mla") return KvFormat::kMlaLatent;
    return ValueOrThrow(radix::ParseKvFormat(name));
  }
  return value.cast<KvFormat>();
}

BlobKey KeyFromHex(const std::string& hex) {
  BlobKey key;
  if (!radix::PrefixHash::FromHex(hex, &key.hash)) {
    throw StatusError(
        absl::InvalidArgumentError(absl::StrCat("blob key: \"", hex, "\" is not 32 hex digits")));
  }
  return key;
}

std::string SegmentRepr(const Segment& s) {
  return absl::StrCat("Segment(blob=", s.blob.ToHex(), ", seq_pages=[", s.seq_page_begin, ", ",
                      s.seq_page_begin + s.page_count, "), blob_page_offset=", s.blob_page_offset,
                      ", tier=", std::string(TierName(s.tier)), ")");
}

}  // namespace

void BindTypes(py::module_& m) {
  py::enum_<DType>(m, "DType", "Element type of the KV bytes (radix::DType).")
      .value("FLOAT16", DType::kFloat16)
      .value("BFLOAT16", DType::kBFloat16)
      .value("FLOAT32", DType::kFloat32)
      .value("FLOAT8_E4M3", DType::kFloat8E4M3)
      .value("FLOAT8_E5M2", DType::kFloat8E5M2)
      .value("INT8", DType::kInt8)
      .value("UINT8", DType::kUInt8);
  py::enum_<KvFormat>(m, "KvFormat", "What one token's KV looks like.")
      .value("KEY_VALUE", KvFormat::kKeyValue)
      .value("MLA_LATENT", KvFormat::kMlaLatent);
  py::enum_<Tier>(m, "Tier", "Where a blob's bytes (or only its tokens) live.")
      .value("HBM", Tier::kHbm)
      .value("DRAM", Tier::kDram)
      .value("SSD", Tier::kSsd)
      .value("TEXT", Tier::kText);
  py::enum_<LookupPhase>(m, "LookupPhase", "What a match is for (statistics only).")
      .value("UNSPECIFIED", LookupPhase::kUnspecified)
      .value("PREFILL", LookupPhase::kPrefill)
      .value("MIDFILL", LookupPhase::kMidfill)
      .value("DECODE", LookupPhase::kDecode);

  py::class_<KvLayout>(m, "KvLayout", R"doc(
The shape of a model's KV cache on one TP rank. One page is ``page_tokens`` tokens of every
layer; the bytes of n pages are layer-major: layer l, page p at
``(l * n + p) * bytes_per_layer_page``. ``dtype`` and ``format`` take the enum or a name
("bf16", "fp8_e4m3", ...; "kv" or "mla").)doc")
      .def(py::init([](uint32_t num_layers, uint32_t num_kv_heads, uint32_t head_dim,
                       const py::object& dtype, uint32_t page_tokens, const py::object& format,
                       uint32_t tp_rank, uint32_t tp_world) {
             KvLayout layout;
             layout.num_layers = num_layers;
             layout.num_kv_heads = num_kv_heads;
             layout.head_dim = head_dim;
             layout.dtype = DTypeFrom(dtype);
             layout.page_tokens = page_tokens;
             layout.format = FormatFrom(format);
             layout.tp_rank = tp_rank;
             layout.tp_world = tp_world;
             ThrowIfError(layout.Validate());
             return layout;
           }),
           py::kw_only(), py::arg("num_layers"), py::arg("num_kv_heads"), py::arg("head_dim"),
           py::arg("dtype"), py::arg("page_tokens"), py::arg("format") = "kv",
           py::arg("tp_rank") = 0, py::arg("tp_world") = 1)
      .def_static(
          "from_spec",
          [](const std::string& spec) { return ValueOrThrow(cli::ParseLayoutSpec(spec)); },
          py::arg("spec"),
          "From a spec as the CLI takes it: "
          "\"layers=32,kv_heads=8,head_dim=128,dtype=bf16,page_tokens=16\".")
      .def_property_readonly("spec", &cli::FormatLayoutSpec)
      .def_readonly("num_layers", &KvLayout::num_layers)
      .def_readonly("num_kv_heads", &KvLayout::num_kv_heads)
      .def_readonly("head_dim", &KvLayout::head_dim)
      .def_readonly("dtype", &KvLayout::dtype)
      .def_readonly("page_tokens", &KvLayout::page_tokens)
      .def_readonly("format", &KvLayout::format)
      .def_readonly("tp_rank", &KvLayout::tp_rank)
      .def_readonly("tp_world", &KvLayout::tp_world)
      .def_property_readonly("bytes_per_kv_block", &KvLayout::BytesPerKvBlock)
      .def_property_readonly("bytes_per_layer_page", &KvLayout::BytesPerLayerPage)
      .def_property_readonly("bytes_per_page", &KvLayout::BytesPerPage)
      .def(
          "pages_bytes", [](const KvLayout& l, uint32_t pages) { return PagesBytes(l, pages); },
          py::arg("pages"), "Bytes of `pages` pages of every layer (what a read of them fills).")
      .def(py::self == py::self)
      .def("__hash__",
           [](const KvLayout& l) { return py::hash(py::str(cli::FormatLayoutSpec(l))); })
      .def("__repr__", [](const KvLayout& l) {
        return absl::StrCat("KvLayout.from_spec('", cli::FormatLayoutSpec(l), "')");
      });

  py::class_<Namespace>(m, "Namespace", R"doc(
(tenant, model, layout): blobs of different namespaces never match.)doc")
      .def(py::init([](std::string tenant, std::string model, const KvLayout& layout) {
             return ValueOrThrow(Namespace::Create(std::move(tenant), std::move(model), layout));
           }),
           py::arg("tenant"), py::arg("model"), py::arg("layout"))
      .def_property_readonly("tenant", &Namespace::tenant)
      .def_property_readonly("model", &Namespace::model)
      .def_property_readonly("layout", &Namespace::layout)
      .def(
          "key_for",
          [](const Namespace& ns, py::handle tokens) {
            std::vector<TokenId> ids = TokensFrom(tokens);
            return BlobKey{
                radix::PrefixHashAt(radix::NamespaceHash(ns), ids, ns.layout().page_tokens)};
          },
          py::arg("tokens"),
          "The key of the blob that ends after the whole pages of `tokens` (a sequence from page "
          "0): "
          "what write() of those tokens from page 0, or of their last pages continuing the rest, "
          "returns. "
          "Computed here, no call to a node.")
      .def(py::self == py::self)
      .def("__hash__",
           [](const Namespace& ns) { return py::hash(py::bytes(ns.CanonicalEncoding())); })
      .def("__repr__", [](const Namespace& ns) {
        return absl::StrCat("Namespace('", ns.tenant(), "', '", ns.model(),
                            "', KvLayout.from_spec('", cli::FormatLayoutSpec(ns.layout()), "'))");
      });

  py::class_<BlobKey>(m, "BlobKey",
                      "A blob's key: the prefix hash of its sequence's pages through its end.")
      .def(py::init(&KeyFromHex), py::arg("hex"))
      .def_property_readonly("hex", &BlobKey::ToHex)
      .def(py::self == py::self)
      .def("__hash__", [](const BlobKey& k) { return py::hash(py::str(k.ToHex())); })
      .def("__str__", &BlobKey::ToHex)
      .def("__repr__", [](const BlobKey& k) { return absl::StrCat("BlobKey('", k.ToHex(), "')"); });

  py::class_<Segment>(m, "Segment", R"doc(
One piece of a match: sequence pages [seq_page_begin, seq_page_begin + page_count) are pages
[blob_page_offset, ...) of blob ``blob``, in ``tier``. A TEXT segment's bytes are gone: it
carries its ``tokens`` (recompute them, or request a rebuild).)doc")
      .def(py::init([](const BlobKey& blob, uint32_t blob_page_offset, uint32_t page_count,
                       uint32_t seq_page_begin, uint32_t blob_pages, Tier tier) {
             Segment s;
             s.blob = blob;
             s.blob_page_offset = blob_page_offset;
             s.page_count = page_count;
             s.seq_page_begin = seq_page_begin;
             s.blob_pages = blob_pages;
             s.tier = tier;
             return s;
           }),
           py::arg("blob"), py::arg("blob_page_offset"), py::arg("page_count"),
           py::arg("seq_page_begin"), py::arg("blob_pages") = 0, py::arg("tier") = Tier::kDram,
           "A segment made by the caller: a piece of an earlier match, re-based or cut (e.g. to "
           "read pages "
           "[a, b) of a match as pages [0, b - a) of a destination).")
      .def_readonly("blob", &Segment::blob)
      .def_readonly("blob_page_offset", &Segment::blob_page_offset)
      .def_readonly("page_count", &Segment::page_count)
      .def_readonly("seq_page_begin", &Segment::seq_page_begin)
      .def_readonly("blob_pages", &Segment::blob_pages)
      .def_readonly("tier", &Segment::tier)
      .def_readonly("tokens", &Segment::tokens)
      .def_readonly("replicas", &Segment::replicas)
      .def(py::self == py::self)
      .def("__repr__", &SegmentRepr);

  py::class_<MatchResult>(m, "MatchResult", R"doc(
The longest cached prefix of a query. Read ``readable_pages`` pages (the prefix before the
first TEXT segment), never ``matched_pages``, when the match may hold TEXT segments.)doc")
      .def(py::init<>(), "An empty match (nothing cached).")
      .def_readonly("matched_pages", &MatchResult::matched_pages)
      .def_readonly("segments", &MatchResult::segments)
      .def_readonly("truncated", &MatchResult::truncated)
      .def_property_readonly("readable_pages", &MatchResult::ReadablePages)
      .def_property_readonly("text_segments", &MatchResult::TextSegments)
      .def("__repr__", [](const MatchResult& r) {
        return absl::StrCat(
            "MatchResult(matched_pages=", r.matched_pages, ", readable_pages=", r.ReadablePages(),
            ", segments=", r.segments.size(), r.truncated ? ", truncated" : "", ")");
      });

  py::class_<ReadRange>(m, "ReadRange",
                        "Pages [first_page, first_page + num_pages) of every layer of a blob.")
      .def(py::init([](const BlobKey& blob, uint32_t first_page, uint32_t num_pages) {
             return ReadRange{blob, first_page, num_pages};
           }),
           py::arg("blob"), py::arg("first_page"), py::arg("num_pages"))
      .def_static("from_segment", &ReadRange::FromSegment, py::arg("segment"))
      .def_readonly("blob", &ReadRange::blob)
      .def_readonly("first_page", &ReadRange::first_page)
      .def_readonly("num_pages", &ReadRange::num_pages)
      .def(py::self == py::self)
      .def("__repr__", [](const ReadRange& r) {
        return absl::StrCat("ReadRange(", r.blob.ToHex(), ", ", r.first_page, ", ", r.num_pages,
                            ")");
      });

  py::class_<Parent>(m, "Parent", R"doc(
Where a new blob continues from: the first ``pages`` pages of its sequence, which end inside
or at the end of blob ``key``.)doc")
      .def(py::init([](const BlobKey& key, uint32_t pages) {
             return Parent{key, pages};
           }),
           py::arg("key"), py::arg("pages"))
      .def_readonly("key", &Parent::key)
      .def_readonly("pages", &Parent::pages)
      .def(py::self == py::self)
      .def("__repr__", [](const Parent& p) {
        return absl::StrCat("Parent(", p.key.ToHex(), ", pages=", p.pages, ")");
      });

  py::class_<WriteResult>(m, "WriteResult", "What a write did.")
      .def_readonly("key", &WriteResult::key)
      .def_readonly("existed", &WriteResult::existed, "The key existed: nothing was sent.")
      .def_readonly("indexed_pages", &WriteResult::indexed_pages)
      .def("__repr__", [](const WriteResult& w) {
        return absl::StrCat("WriteResult(key=", w.key.ToHex(),
                            ", existed=", w.existed ? "True" : "False",
                            ", indexed_pages=", w.indexed_pages, ")");
      });

  py::class_<RebuildTask>(m, "RebuildTask", R"doc(
One blob to recompute: compute pages [first_page, first_page + pages) of ``sequence_tokens``
in ``ns``'s layout and fill it with ``Client.write(ns, own_tokens(), data, parent=parent)``.
The node accepts only bytes whose chunk checksums equal ``chunk_checksums``.)doc")
      .def_readonly("task_id", &RebuildTask::task_id)
      .def_readonly("ns", &RebuildTask::ns)
      .def_readonly("key", &RebuildTask::key)
      .def_readonly("parent", &RebuildTask::parent)
      .def_readonly("first_page", &RebuildTask::first_page)
      .def_readonly("pages", &RebuildTask::pages)
      .def_readonly("sequence_tokens", &RebuildTask::sequence_tokens)
      .def_readonly("chunk_checksums", &RebuildTask::chunk_checksums)
      .def_property_readonly("segment_start_pages",
                             [](const RebuildTask& t) -> py::object {
                               if (!t.segment_start) return py::none();
                               return py::int_(t.segment_start->pages);
                             })
      .def_property_readonly(
          "seconds_left",
          [](const RebuildTask& t) { return absl::ToDoubleSeconds(t.deadline - absl::Now()); },
          "Seconds until the task goes back to the queue unless a write fills it.")
      .def("own_tokens", &RebuildTask::OwnTokens,
           "The blob's own tokens (the last pages * page_tokens).")
      .def("__repr__", [](const RebuildTask& t) {
        return absl::StrCat("RebuildTask(id=", t.task_id, ", key=", t.key.ToHex(), ", pages=[",
                            t.first_page, ", ", t.first_page + t.pages, "))");
      });
}

}  // namespace strata::python
