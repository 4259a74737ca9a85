#include "net/client/fake_shard_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <variant>

#include "net/protocol_v1.h"
#include "net/ticket.h"

namespace tessera::net::client::testing {

struct FakeShardServer::Tls {
  ~Tls() { SSL_CTX_free(ctx); }
  SSL_CTX* ctx = nullptr;
};

namespace {

using json = nlohmann::json;

// A self-signed certificate for localhost / 127.0.0.1 installed in `ctx`;
// returns its PEM.
std::string MakeCertificate(SSL_CTX* ctx) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX v3;
  X509V3_set_ctx(&v3, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name,
                                            "DNS:localhost,IP:127.0.0.1");
  X509_add_ext(cert, san, -1);
  X509_EXTENSION_free(san);
  X509_sign(cert, key, EVP_sha256());
  SSL_CTX_use_certificate(ctx, cert);
  SSL_CTX_use_PrivateKey(ctx, key);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return pem;
}

// One connection's bytes, plain or TLS; blocking.
class Channel {
 public:
  Channel(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~Channel() { SSL_free(ssl_); }
  bool ReadMore() {
    char chunk[16384];
    const int n = ssl_ != nullptr
                      ? SSL_read(ssl_, chunk, sizeof chunk)
                      : static_cast<int>(recv(fd_, chunk, sizeof chunk, 0));
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  bool Fill(size_t n) {
    while (buffer_.size() < n) {
      if (!ReadMore()) return false;
    }
    return true;
  }
  bool Write(std::string_view data) {
    while (!data.empty()) {
      const int n =
          ssl_ != nullptr
              ? SSL_write(ssl_, data.data(), static_cast<int>(data.size()))
              : static_cast<int>(
                    send(fd_, data.data(), data.size(), MSG_NOSIGNAL));
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  std::string& buffer() { return buffer_; }

 private:
  int fd_;
  SSL* ssl_;
  std::string buffer_;
};

std::string Header(const std::string& head, const std::string& name) {
  std::string lower = head;
  for (char& c : lower) c = static_cast<char>(std::tolower(c));
  const size_t at = lower.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  size_t start = at + 3 + name.size();
  const size_t end = head.find("\r\n", start);
  while (start < end && head[start] == ' ') ++start;
  return head.substr(start, end - start);
}

std::string AcceptKey(const std::string& key) {
  const std::string text = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
       digest);
  unsigned char out[64];
  const int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
  return std::string(reinterpret_cast<char*>(out), static_cast<size_t>(n));
}

bool WriteFrame(Channel& channel, int opcode, std::string_view payload) {
  std::string frame(1, static_cast<char>(0x80 | opcode));
  if (payload.size() < 126) {
    frame += static_cast<char>(payload.size());
  } else if (payload.size() < 65536) {
    frame += static_cast<char>(126);
    frame += static_cast<char>(payload.size() >> 8);
    frame += static_cast<char>(payload.size() & 0xff);
  } else {
    frame += static_cast<char>(127);
    for (int i = 7; i >= 0; --i) {
      frame += static_cast<char>((payload.size() >> (8 * i)) & 0xff);
    }
  }
  frame += payload;
  return channel.Write(frame);
}

bool WriteClose(Channel& channel, int code) {
  std::string payload;
  payload += static_cast<char>(code >> 8);
  payload += static_cast<char>(code & 0xff);
  payload += "bye";
  return WriteFrame(channel, 8, payload);
}

bool ReadFrame(Channel& channel, int* opcode, std::string* payload);

// Starts the close handshake and waits for the client's answer.
void CloseAndWait(Channel& channel, int code) {
  if (!WriteClose(channel, code)) return;
  int opcode = 0;
  std::string payload;
  while (ReadFrame(channel, &opcode, &payload) && opcode != 8) {
  }
}

// The next client frame (masked); false at the end of the stream.
bool ReadFrame(Channel& channel, int* opcode, std::string* payload) {
  if (!channel.Fill(2)) return false;
  const auto* b =
      reinterpret_cast<const unsigned char*>(channel.buffer().data());
  *opcode = b[0] & 0x0f;
  uint64_t len = b[1] & 0x7f;
  size_t header = 2;
  if (len == 126) {
    if (!channel.Fill(4)) return false;
    b = reinterpret_cast<const unsigned char*>(channel.buffer().data());
    len = (uint64_t{b[2]} << 8) | b[3];
    header = 4;
  } else if (len == 127) {
    if (!channel.Fill(10)) return false;
    b = reinterpret_cast<const unsigned char*>(channel.buffer().data());
    len = 0;
    for (int i = 0; i < 8; ++i) len = (len << 8) | b[2 + i];
    header = 10;
  }
  const bool masked = (b[1] & 0x80) != 0;
  const size_t total = header + (masked ? 4 : 0) + len;
  if (!channel.Fill(total)) return false;
  const std::string& buffer = channel.buffer();
  payload->assign(buffer, header + (masked ? 4 : 0), len);
  if (masked) {
    for (size_t i = 0; i < len; ++i) (*payload)[i] ^= buffer[header + i % 4];
  }
  channel.buffer().erase(0, total);
  return true;
}

}  // namespace

FakeShardServer::FakeShardServer(FakeServerOptions options)
    : options_(std::move(options)) {
  if (options_.tls) {
    tls_ = std::make_unique<Tls>();
    tls_->ctx = SSL_CTX_new(TLS_server_method());
    certificate_pem_ = MakeCertificate(tls_->ctx);
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  listen(listen_fd_, 128);
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

FakeShardServer::~FakeShardServer() { Stop(); }

void FakeShardServer::Stop() {
  if (stopping_.exchange(true)) return;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (std::thread& worker : workers) worker.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : fds_) close(fd);
  fds_.clear();
}

void FakeShardServer::AcceptLoop() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0 || stopping_) {
      if (fd >= 0) close(fd);
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    fds_.push_back(fd);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakeShardServer::Serve(int fd) {
  // The peer sees the end at once; Stop closes the descriptor.
  struct EndOnReturn {
    int fd;
    ~EndOnReturn() { shutdown(fd, SHUT_RDWR); }
  } end_on_return{fd};
  SSL* ssl = nullptr;
  if (tls_) {
    ssl = SSL_new(tls_->ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) <= 0) {
      SSL_free(ssl);
      return;  // e.g. the client refused the certificate
    }
  }
  Channel channel(fd, ssl);
  size_t end;
  while ((end = channel.buffer().find("\r\n\r\n")) == std::string::npos) {
    if (!channel.ReadMore()) return;
  }
  const std::string head = channel.buffer().substr(0, end + 2);
  channel.buffer().erase(0, end + 4);
  const std::string request_line = head.substr(0, head.find("\r\n"));

  if (request_line.rfind("POST /join ", 0) == 0) {
    const size_t length = std::stoul("0" + Header(head, "content-length"));
    if (!channel.Fill(length)) return;
    const json body =
        json::parse(channel.buffer().substr(0, length), nullptr, false);
    std::string status = "200 OK", reply;
    if (!body.is_object() || body.value("shard", "") == "refuse") {
      status = "404 Not Found";
      reply = R"({"code":"not_found","message":"no such shard"})";
    } else {
      const std::string shard = body.value("shard", "");
      const std::string sub = body.value("subscriber", "");
      reply = json{{"shardId", shard},
                   {"subscriberId", sub},
                   {"ticket", FakeTicket(options_.secret, shard, sub)}}
                  .dump();
    }
    channel.Write("HTTP/1.1 " + status +
                  "\r\nContent-Type: application/json\r\nContent-Length: " +
                  std::to_string(reply.size()) +
                  "\r\nConnection: close\r\n\r\n" + reply);
    return;
  }
  const std::string prefix = "GET /shard/";
  if (request_line.rfind(prefix, 0) != 0) return;
  const std::string shard = request_line.substr(
      prefix.size(), request_line.find(' ', prefix.size()) - prefix.size());
  if (!channel.Write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: "
                     "websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: " +
                     AcceptKey(Header(head, "sec-websocket-key")) +
                     "\r\n\r\n")) {
    return;
  }
  bool welcomed = false;
  std::string subscriber;
  bool frame_acks = false;
  uint64_t tick = 0, inputs = 0;
  int opcode = 0;
  std::string payload;
  while (ReadFrame(channel, &opcode, &payload)) {
    if (opcode == 8) {  // close: answer and end
      WriteClose(channel, 1000);
      return;
    }
    if (opcode == 9) {
      WriteFrame(channel, 10, payload);
      continue;
    }
    if (opcode != 2) continue;
    Result<v1::ClientMessage> msg = v1::DecodeClientMessage(std::span(
        reinterpret_cast<const uint8_t*>(payload.data()), payload.size()));
    if (!msg.ok()) return CloseAndWait(channel, 4000);
    if (auto* hello = std::get_if<v1::Hello>(&*msg)) {
      const TicketCheck check = VerifyTicket(options_.secret, hello->ticket,
                                             shard, Wall().UnixNowSecs());
      if (check.error != TicketError::kNone) {
        return CloseAndWait(
            channel, check.error == TicketError::kWrongShard ? 4003 : 4001);
      }
      welcomed = true;
      subscriber = check.ticket.subscriber_id;
      frame_acks =
          (hello->flags & v1::kHelloFrameAcks) != 0 && options_.frame_acks;
      ++sessions_;
      if (options_.ping_before_welcome) {
        WriteFrame(channel, 2, v1::EncodePing(7));
      }
      WriteFrame(
          channel, 2,
          v1::EncodeWelcome(shard, check.ticket.subscriber_id, 20, "msgpack", 0,
                            frame_acks ? v1::kHelloFrameAcks : 0));
    } else if (auto* input = std::get_if<v1::Input>(&*msg)) {
      if (!welcomed) return CloseAndWait(channel, 4010);
      ++inputs_;
      ++inputs;
      const std::vector<uint8_t> snapshot = json::to_msgpack({{"tick", tick}});
      const bool reject =
          options_.reject_every > 0 &&
          inputs % static_cast<uint64_t>(options_.reject_every) == 0;
      // With frame acks a REJECT comes before the FRAME and an ACK not at
      // all; otherwise both after it.
      if (frame_acks && reject) {
        WriteFrame(channel, 2, v1::EncodeReject(input->seq, "nope"));
      }
      WriteFrame(channel, 2,
                 v1::EncodeFrameHeader(++tick, input->seq, snapshot.size()) +
                     std::string(snapshot.begin(), snapshot.end()));
      if (!frame_acks) {
        WriteFrame(channel, 2,
                   reject ? v1::EncodeReject(input->seq, "nope")
                          : v1::EncodeAck(input->seq));
      }
      if (options_.close_after_inputs > 0 &&
          inputs == static_cast<uint64_t>(options_.close_after_inputs)) {
        if (options_.transfer_to.empty()) {
          return CloseAndWait(channel, options_.close_code);
        }
        WriteFrame(
            channel, 2,
            v1::EncodeTransfer(options_.transfer_to,
                               FakeTicket(options_.secret, options_.transfer_to,
                                          subscriber, Wall())));
        return CloseAndWait(channel, 4011);
      }
    } else if (auto* ping = std::get_if<v1::Ping>(&*msg)) {
      WriteFrame(channel, 2, v1::EncodePong(ping->nonce));
    } else if (std::holds_alternative<v1::Pong>(*msg)) {
      ++pongs_;
    }
  }
}

std::string FakeTicket(const std::string& secret, const std::string& shard,
                       const std::string& subscriber,
                       const WallClock& wall_clock) {
  Ticket ticket;
  ticket.resource_id = shard;
  ticket.subscriber_id = subscriber;
  ticket.expires_unix = wall_clock.UnixNowSecs() + 600;
  return MintTicket(secret, ticket, &wall_clock);
}

}  // namespace tessera::net::client::testing
