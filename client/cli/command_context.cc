#include "client/cli/command.h"

namespace strata::cli {

absl::StatusOr<Client*> CommandContext::client() {
  if (client_ == nullptr) {
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(options_);
    if (!client.ok()) return client.status();
    client_ = std::move(client).value();
  }
  return client_.get();
}

}  // namespace strata::cli
