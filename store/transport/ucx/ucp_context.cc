#include "store/transport/ucx/ucp_context.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "store/transport/ucx/ucs_status.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport::ucx {
namespace {

// Owns a ucp_config_t for the duration of Create().
struct ConfigDeleter {
  void operator()(ucp_config_t* config) const { ucp_config_release(config); }
};

}  // namespace

absl::StatusOr<std::shared_ptr<UcpContext>> UcpContext::Create(const UcpContextOptions& options) {
  ucp_config_t* raw_config = nullptr;
  STRATA_RETURN_IF_ERROR(
      UcsToStatus(ucp_config_read(nullptr, nullptr, &raw_config), "ucp_config_read"));
  std::unique_ptr<ucp_config_t, ConfigDeleter> config(raw_config);
  if (!options.transports.empty()) {
    STRATA_RETURN_IF_ERROR(
        UcsToStatus(ucp_config_modify(config.get(), "TLS", options.transports.c_str()),
                    "ucp_config_modify(TLS=" + options.transports + ")"));
  }

  ucp_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.field_mask =
      UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;
  params.name = options.name.c_str();

  ucp_context_h context = nullptr;
  STRATA_RETURN_IF_ERROR(UcsToStatus(ucp_init(&params, config.get(), &context), "ucp_init"));
  std::shared_ptr<UcpContext> owner(new UcpContext(context));
  ucp_context_attr_t attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(context, &attr) == UCS_OK) {
    owner->cuda_memory_ = (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
  }
  // UCX has no query for its transports; its printed resource list names them
  // ("resource 2 : md 1 dev 2 flags -- sysv/memory").
  char* text = nullptr;
  size_t length = 0;
  if (FILE* stream = open_memstream(&text, &length); stream != nullptr) {
    ucp_context_print_info(context, stream);
    fclose(stream);
    const std::string info(text, length);
    free(text);
    owner->has_shared_memory_and_cma_ =
        (info.find("sysv/") != std::string::npos || info.find("posix/") != std::string::npos) &&
        info.find("cma/") != std::string::npos;
  }
  return owner;
}

UcpContext::~UcpContext() { ucp_cleanup(context_); }

}  // namespace strata::store::transport::ucx
