#include "net/webtransport/wt_shard_acceptor.h"

#include <string>

#include "net/http_session.h"
#include "net/router.h"
#include "net/server_context.h"
#include "net/shard_link_session.h"
#include "net/webtransport/wt_link.h"

namespace tessera::net::wt {
namespace {

// The session's events to its link; keeps the shard session alive while
// the WebTransport session lasts.
class ShardSessionHandler final : public WtSessionHandler {
 public:
  ShardSessionHandler(std::shared_ptr<void> session, WtLink* link)
      : session_(std::move(session)), link_(link) {}
  ~ShardSessionHandler() override { link_->Ended(); }

  void OnOpen(WtSessionIo& io) override { link_->Opened(io); }
  void OnStreamData(int64_t stream_id, std::span<const uint8_t> bytes,
                    bool fin) override {
    link_->StreamData(stream_id, bytes, fin);
  }
  // Client datagrams (acks of applied ticks) are a later step.
  void OnDatagram(std::span<const uint8_t>) override {}
  void OnEnd() override { link_->Ended(); }

 private:
  std::shared_ptr<void> session_;
  WtLink* link_;
};

}  // namespace

std::unique_ptr<WtSessionHandler> ShardWtAcceptor::Accept(std::string_view path,
                                                          std::string_view) {
  path = path.substr(0, path.find('?'));
  const std::string_view prefix = kShardPathPrefix;
  if (path.substr(0, prefix.size()) != prefix) return nullptr;
  std::string id;
  if (!PercentDecode(path.substr(prefix.size()), &id) || id.empty()) {
    return nullptr;
  }
  WtLink::Options options;
  options.max_message_bytes = ctx_.options.max_message_bytes;
  options.max_queued_frames = ctx_.options.max_queued_frames;
  WtLink* link = nullptr;
  std::shared_ptr<void> session = RunShardSessionOn(
      ctx_, std::move(id), [&](MessageLink::Handler& handler) {
        auto made = std::make_unique<WtLink>(executor_, options, handler);
        link = made.get();
        return made;
      });
  return std::make_unique<ShardSessionHandler>(std::move(session), link);
}

}  // namespace tessera::net::wt
