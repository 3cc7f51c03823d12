#include "strata/store/transport/messenger.h"

#include <utility>

#include "store/transport/messenger_impl.h"
#include "strata/base/status_macros.h"

namespace strata::store::transport {

absl::StatusOr<std::unique_ptr<Messenger>> Messenger::Create(MessengerOptions options) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<MessengerImpl> impl,
                          MessengerImpl::Create(std::move(options)));
  return std::unique_ptr<Messenger>(new Messenger(std::move(impl)));
}

Messenger::Messenger(std::unique_ptr<MessengerImpl> impl) : impl_(std::move(impl)) {}

Messenger::~Messenger() { impl_->Stop(); }

absl::Status Messenger::RegisterHandler(uint16_t id, MessageHandler handler) {
  return impl_->RegisterHandler(id, std::move(handler));
}

absl::StatusOr<uint16_t> Messenger::Listen(std::string_view address) {
  return impl_->Listen(address);
}

absl::StatusOr<PeerId> Messenger::Connect(std::string_view address, absl::Duration timeout,
                                          std::string_view credential) {
  return impl_->Connect(address, timeout, credential);
}

void Messenger::Send(PeerId peer, uint16_t id, absl::Span<const uint8_t> header,
                     absl::Span<const uint8_t> payload, SendOptions options,
                     CompletionCallback done) {
  impl_->Send(peer, id, header, payload, options, std::move(done));
}

void Messenger::Disconnect(PeerId peer) { impl_->Disconnect(peer); }

absl::StatusOr<std::string> Messenger::DescribePeer(PeerId peer) {
  return impl_->DescribePeer(peer);
}

absl::StatusOr<std::string> Messenger::PeerIdentity(PeerId peer) {
  return impl_->PeerIdentity(peer);
}

absl::StatusOr<std::unique_ptr<MemoryRegion>> Messenger::RegisterMemory(void* data, size_t size) {
  return impl_->RegisterMemory(data, size);
}

size_t Messenger::max_header_size() const { return impl_->max_header_size(); }

bool Messenger::AcceptsCudaMemory() const { return impl_->AcceptsCudaMemory(); }

bool Messenger::OnProgressThread() const { return impl_->OnProgressThread(); }

MessengerStats Messenger::stats() const { return impl_->stats(); }

}  // namespace strata::store::transport
