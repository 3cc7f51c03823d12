#include "strata/proto/namespace_convert.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

#include "strata/base/status_test_macros.h"
#include "strata/radix/prefix_hash.h"

namespace strata::proto {
namespace {

radix::KvLayout Llama8B() {
  return radix::KvLayout{.num_layers = 32,
                         .num_kv_heads = 8,
                         .head_dim = 128,
                         .dtype = radix::DType::kBFloat16,
                         .page_tokens = 16,
                         .format = radix::KvFormat::kKeyValue,
                         .tp_rank = 1,
                         .tp_world = 2};
}

radix::KvLayout DeepSeekMla() {
  return radix::KvLayout{.num_layers = 61,
                         .num_kv_heads = 1,
                         .head_dim = 576,
                         .dtype = radix::DType::kFloat8E4M3,
                         .page_tokens = 64,
                         .format = radix::KvFormat::kMlaLatent,
                         .tp_rank = 0,
                         .tp_world = 1};
}

v1::Namespace ValidWireNamespace() {
  v1::Namespace wire;
  ToProto(radix::Namespace::Create("acme", "meta-llama/Llama-3.1-8B", Llama8B()).value(), &wire);
  return wire;
}

// The status message must start with `prefix` (the field path) and contain
// `also` (the radix field or the value).
void ExpectInvalid(const absl::Status& status, std::string_view prefix, std::string_view also) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  const std::string message(status.message());
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
  EXPECT_NE(message.find(also), std::string::npos) << message << " lacks " << also;
}

TEST(NamespaceConvertTest, NamespacesRoundTrip) {
  for (const radix::KvLayout& layout : {Llama8B(), DeepSeekMla()}) {
    ASSERT_OK_AND_ASSIGN(radix::Namespace ns, radix::Namespace::Create("t-1", "org/m", layout));
    v1::Namespace wire;
    ToProto(ns, &wire);
    EXPECT_EQ(wire.tenant(), "t-1");
    EXPECT_EQ(wire.layout().num_layers(), layout.num_layers);
    ASSERT_OK_AND_ASSIGN(radix::Namespace back, NamespaceFromProto(wire, "ns"));
    EXPECT_EQ(back, ns);
    EXPECT_EQ(radix::NamespaceHash(back), radix::NamespaceHash(ns));

    // And through bytes, as a peer sees it.
    v1::Namespace parsed;
    ASSERT_TRUE(parsed.ParseFromString(wire.SerializeAsString()));
    ASSERT_OK_AND_ASSIGN(radix::Namespace from_bytes, NamespaceFromProto(parsed, "ns"));
    EXPECT_EQ(from_bytes, ns);
  }
}

TEST(NamespaceConvertTest, EveryFieldOfTheLayoutCrosses) {
  const radix::KvLayout layout = Llama8B();
  v1::KvLayout wire;
  ToProto(layout, &wire);
  EXPECT_EQ(wire.num_layers(), 32u);
  EXPECT_EQ(wire.num_kv_heads(), 8u);
  EXPECT_EQ(wire.head_dim(), 128u);
  EXPECT_EQ(wire.dtype(), v1::DTYPE_BFLOAT16);
  EXPECT_EQ(wire.page_tokens(), 16u);
  EXPECT_EQ(wire.format(), v1::KV_FORMAT_KEY_VALUE);
  EXPECT_EQ(wire.tp_rank(), 1u);
  EXPECT_EQ(wire.tp_world(), 2u);
  ASSERT_OK_AND_ASSIGN(radix::KvLayout back, KvLayoutFromProto(wire, "layout"));
  EXPECT_EQ(back, layout);
}

TEST(NamespaceConvertTest, EnumsKeepTheirNumbersAndNames) {
  struct Case {
    radix::DType dtype;
    const char* wire_name;
  };
  for (const Case& c :
       {Case{radix::DType::kFloat16, "DTYPE_FLOAT16"},
        Case{radix::DType::kBFloat16, "DTYPE_BFLOAT16"},
        Case{radix::DType::kFloat32, "DTYPE_FLOAT32"},
        Case{radix::DType::kFloat8E4M3, "DTYPE_FLOAT8_E4M3"},
        Case{radix::DType::kFloat8E5M2, "DTYPE_FLOAT8_E5M2"},
        Case{radix::DType::kInt8, "DTYPE_INT8"}, Case{radix::DType::kUInt8, "DTYPE_UINT8"}}) {
    const v1::DType wire = ToProto(c.dtype);
    EXPECT_EQ(static_cast<int>(wire), static_cast<int>(c.dtype));
    EXPECT_EQ(v1::DType_Name(wire), c.wire_name);
    ASSERT_OK_AND_ASSIGN(radix::DType back, DTypeFromProto(wire, "dtype"));
    EXPECT_EQ(back, c.dtype);
  }
  EXPECT_EQ(v1::KvFormat_Name(ToProto(radix::KvFormat::kKeyValue)), "KV_FORMAT_KEY_VALUE");
  EXPECT_EQ(v1::KvFormat_Name(ToProto(radix::KvFormat::kMlaLatent)), "KV_FORMAT_MLA_LATENT");
  // The proto enums have no value radix lacks (besides UNSPECIFIED).
  EXPECT_EQ(v1::DType_MAX, 7);
  EXPECT_EQ(v1::KvFormat_MAX, 2);
}

TEST(NamespaceConvertTest, UnsetNamespaceIsMissing) {
  v1::MatchRequest request;  // no ns
  ExpectInvalid(NamespaceFromProto(request.ns(), "ns").status(), "ns: missing", "missing");
}

TEST(NamespaceConvertTest, UnsetLayoutIsMissing) {
  v1::Namespace wire = ValidWireNamespace();
  wire.clear_layout();
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.layout: missing", "missing");
  // Present but empty reads the same.
  wire.mutable_layout();
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.layout: missing", "missing");
}

TEST(NamespaceConvertTest, UnspecifiedEnumsAreMissing) {
  v1::Namespace wire = ValidWireNamespace();
  wire.mutable_layout()->set_dtype(v1::DTYPE_UNSPECIFIED);
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.layout.dtype: missing", "missing");
  wire = ValidWireNamespace();
  wire.mutable_layout()->set_format(v1::KV_FORMAT_UNSPECIFIED);
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.layout.format: missing", "missing");
}

// Bytes a newer (or broken) peer could send: a KvLayout whose dtype (field 4)
// or format (field 6) is a number this build does not know.
v1::Namespace ParseWithLayoutBytes(const std::string& extra_layout_bytes) {
  v1::Namespace wire = ValidWireNamespace();
  std::string layout = wire.layout().SerializeAsString() + extra_layout_bytes;
  wire.clear_layout();
  std::string bytes = wire.SerializeAsString();
  bytes += '\x1a';  // field 3 (layout), length-delimited
  bytes += static_cast<char>(layout.size());
  bytes += layout;
  v1::Namespace parsed;
  EXPECT_TRUE(parsed.ParseFromString(bytes));
  return parsed;
}

TEST(NamespaceConvertTest, UnknownEnumValuesFromTheWireAreRejected) {
  // Later occurrences of a scalar field win: 0x20 = field 4 varint, 99.
  ExpectInvalid(NamespaceFromProto(ParseWithLayoutBytes("\x20\x63"), "ns").status(),
                "ns.layout.dtype: unknown value 99", "99");
  // 0x30 = field 6 varint, 7.
  ExpectInvalid(NamespaceFromProto(ParseWithLayoutBytes("\x30\x07"), "ns").status(),
                "ns.layout.format: unknown value 7", "7");
  // A negative value: int32 -1 is a 10-byte varint.
  ExpectInvalid(
      NamespaceFromProto(
          ParseWithLayoutBytes(std::string("\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")), "ns")
          .status(),
      "ns.layout.dtype: unknown value -1", "-1");
  // 256 must not wrap to a valid uint8 dtype (256 & 0xff == 0, 257 -> 1).
  ExpectInvalid(NamespaceFromProto(ParseWithLayoutBytes("\x20\x81\x02"), "ns").status(),
                "ns.layout.dtype: unknown value 257", "257");
}

TEST(NamespaceConvertTest, UnknownFieldsFromANewerPeerAreIgnored) {
  v1::Namespace wire = ValidWireNamespace();
  std::string bytes = wire.SerializeAsString();
  bytes += std::string("\xf8\x06\x2a", 3);  // field 111, varint 42
  v1::Namespace parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_OK(NamespaceFromProto(parsed, "ns"));
}

TEST(NamespaceConvertTest, AbsurdLayoutsAreRejectedNamingTheField) {
  struct Case {
    const char* what;
    void (*mutate)(v1::KvLayout*);
    const char* radix_field;
  };
  const Case cases[] = {
      {"4e9 layers", [](v1::KvLayout* l) { l->set_num_layers(4'000'000'000u); }, "num_layers"},
      {"0 layers", [](v1::KvLayout* l) { l->set_num_layers(0); }, "num_layers"},
      {"0 kv heads", [](v1::KvLayout* l) { l->set_num_kv_heads(0); }, "num_kv_heads"},
      {"huge head_dim", [](v1::KvLayout* l) { l->set_head_dim(1u << 31); }, "head_dim"},
      {"0 page tokens", [](v1::KvLayout* l) { l->set_page_tokens(0); }, "page_tokens"},
      {"tp_rank == tp_world", [](v1::KvLayout* l) { l->set_tp_rank(2); }, "tp_rank"},
      {"tp_world 0", [](v1::KvLayout* l) { l->set_tp_world(0); }, "tp_world"},
      {"MLA with 8 heads", [](v1::KvLayout* l) { l->set_format(v1::KV_FORMAT_MLA_LATENT); },
       "num_kv_heads"},
      {"page over 1 GiB",
       [](v1::KvLayout* l) {
         l->set_num_layers(1024);
         l->set_head_dim(16384);
         l->set_page_tokens(65536);
       },
       "bytes per page"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::Namespace wire = ValidWireNamespace();
    c.mutate(wire.mutable_layout());
    ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.layout: KvLayout", c.radix_field);
    ExpectInvalid(KvLayoutFromProto(wire.layout(), "req.layout").status(),
                  "req.layout: ", c.radix_field);
  }
}

TEST(NamespaceConvertTest, BadTenantOrModelNamesTheField) {
  v1::Namespace wire = ValidWireNamespace();
  wire.set_tenant("acme corp");
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.tenant: ", "byte 4");
  wire = ValidWireNamespace();
  wire.set_tenant(std::string(129, 'a'));
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.tenant: ", "129");
  wire = ValidWireNamespace();
  wire.clear_tenant();
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.tenant: ", "length 0");
  wire = ValidWireNamespace();
  wire.clear_model();
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.model: ", "length 0");
  wire = ValidWireNamespace();
  wire.set_model("with\ttab");
  ExpectInvalid(NamespaceFromProto(wire, "ns").status(), "ns.model: ", "byte 4");
}

TEST(NamespaceConvertTest, TheCallersFieldPathIsUsed) {
  v1::Namespace wire = ValidWireNamespace();
  wire.mutable_layout()->set_dtype(v1::DTYPE_UNSPECIFIED);
  ExpectInvalid(NamespaceFromProto(wire, "list.ns").status(), "list.ns.layout.dtype: missing",
                "missing");
}

}  // namespace
}  // namespace strata::proto
