#include "net/client/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace relgraph::net {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr uint32_t kMaxReplyFrame = 64u << 20;

int MsUntil(SteadyClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// Waits until fd is ready for `events`; kTimeout at the deadline.
Status WaitFor(int fd, short events, SteadyClock::time_point deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = MsUntil(deadline);
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return Status::OK();
    if (r == 0) return Status(Code::kTimeout, std::string("timed out ") + what);
    if (errno != EINTR) return Status::IOError(std::string("poll: ") + std::strerror(errno));
  }
}

// The client context for `options`, built once per process for the same files (and rebuilt when
// one of them changes on disk).
Result<std::shared_ptr<const TlsContext>> ClientContext(const TlsClientOptions& options) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const TlsContext>> cache;
  std::string key = options.server_name + '\n' + (options.verify_server ? "v" : "-");
  for (const std::string* file : {&options.ca_file, &options.cert_file, &options.key_file}) {
    struct stat st {};
    const bool found = !file->empty() && ::stat(file->c_str(), &st) == 0;
    key += '\n' + *file + '@' + std::to_string(found ? st.st_mtim.tv_sec : 0) + '.' +
           std::to_string(found ? st.st_mtim.tv_nsec : 0);
  }
  std::lock_guard lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto built = TlsContext::ForClient(options);
  if (!built.ok()) return built.status();
  if (cache.size() > 64) cache.clear();
  cache.emplace(key, *built);
  return *built;
}

}  // namespace

Status ParseHostPort(std::string_view text, std::string* host, uint16_t* port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not HOST:PORT");
  }
  const std::string_view p = text.substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (ec != std::errc() || ptr != p.data() + p.size() || value > 65535) {
    return Status::InvalidArgument("port '" + std::string(p) + "' is not a number in 0..65535");
  }
  *host = std::string(text.substr(0, colon));
  *port = static_cast<uint16_t>(value);
  return Status::OK();
}

Result<std::unique_ptr<Client>> Client::Connect(const ClientOptions& options) {
  std::unique_ptr<Client> client(new Client(options));
  RELGRAPH_RETURN_IF_ERROR(client->Open());
  auto hello = client->Call(HelloRequest{kProtocolVersion, options.token});
  if (hello.ok()) {
    client->hello_ = *hello;
    return client;
  }
  if (hello.status().code() == Code::kProtocolError &&
      hello.status().message().rfind("bad reply frame", 0) == 0) {
    // The first reply is not a relgraph frame: an HTTP server, Redis, ssh on that port.
    return Status(Code::kProtocolError,
                  "the server at " + options.host + ":" + std::to_string(options.port) +
                      " does not speak the relgraph protocol (is it relgraphd?): " +
                      hello.status().message());
  }
  if (hello.status().code() != Code::kUnsupported) return hello.status();
  // A server that speaks only version 1 refused version 2 and closed: greet it again in 1.
  client.reset(new Client(options));
  RELGRAPH_RETURN_IF_ERROR(client->Open());
  auto v1 = client->Call(HelloRequestV1{1, options.token});
  if (!v1.ok()) return v1.status();
  client->hello_ = HelloReply{v1->version, v1->max_frame, v1->server, ""};
  return client;
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

Status Client::Open() {
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int gai =
      ::getaddrinfo(options_.host.c_str(), std::to_string(options_.port).c_str(), &hints, &found);
  if (gai != 0) return Status::IOError("cannot resolve " + where + ": " + ::gai_strerror(gai));
  const auto deadline = SteadyClock::now() + options_.connect_timeout;
  Status last = Status::IOError("no address for " + where);
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int r = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (r != 0 && errno == EINPROGRESS) {
      Status s = WaitFor(fd, POLLOUT, deadline, ("connecting to " + where).c_str());
      if (!s.ok()) {
        ::close(fd);
        last = s;
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      errno = err;
      r = err == 0 ? 0 : -1;
    }
    if (r != 0) {
      last = Status::IOError("cannot connect to " + where + ": " + std::strerror(errno));
      ::close(fd);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fd_ = fd;
    break;
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) return last;
  if (options_.tls.enabled) return StartTls(deadline);
  return Status::OK();
}

Status Client::StartTls(SteadyClock::time_point deadline) {
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  auto context = ClientContext(options_.tls);
  if (!context.ok()) return context.status();
  auto channel = TlsChannel::Create(*context, options_.host);
  if (!channel.ok()) return channel.status();
  tls_ = std::move(*channel);
  std::string raw_seen;  // what the server sent, kept to explain a failed handshake
  char scratch[4096];
  for (;;) {
    auto plain = tls_->ReadPlain(scratch);  // drives the handshake
    std::string out;
    tls_->TakeOutput(&out);
    if (!out.empty()) RELGRAPH_RETURN_IF_ERROR(SendRaw(out, deadline));
    if (!plain.ok()) {
      // A relgraph frame where a TLS record should be: a plain server said why it refused.
      DecodeResult r = DecodeFrame(raw_seen, kMaxReplyFrame);
      if (r.state == DecodeState::kFrame && r.frame.flags_or_status != 0) {
        return Status(Code::kProtocolError, "TLS with " + where +
                                                " failed: the server answered in plain text (is "
                                                "TLS enabled on it?): " +
                                                StatusFromReply(r.frame).message());
      }
      return Status(plain.status().code(), plain.status().message() + " (" + where + ")");
    }
    if (tls_->handshake_done()) {
      if (*plain > 0) in_.append(scratch, *plain);
      return Status::OK();
    }
    RELGRAPH_RETURN_IF_ERROR(WaitFor(fd_, POLLIN, deadline, ("in the TLS handshake with " + where).c_str()));
    const ssize_t n = ::recv(fd_, scratch, sizeof(scratch), 0);
    if (n == 0) {
      return Status::IOError("the server at " + where +
                             " closed the connection during the TLS handshake (is TLS enabled "
                             "on it, and does it want a client certificate?)");
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return Status::IOError(std::string("recv: ") + std::strerror(errno));
    }
    if (raw_seen.size() < 4096) raw_seen.append(scratch, static_cast<size_t>(n));
    tls_->PutInput(std::string_view(scratch, static_cast<size_t>(n)));
  }
}

Status Client::Broken(Status why) {
  broken_ = why;
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  return why;
}

Status Client::SendAll(std::string_view bytes, SteadyClock::time_point deadline) {
  if (!tls_) return SendRaw(bytes, deadline);
  RELGRAPH_RETURN_IF_ERROR(tls_->WritePlain(bytes));
  std::string out;
  tls_->TakeOutput(&out);
  return SendRaw(out, deadline);
}

Status Client::SendRaw(std::string_view bytes, SteadyClock::time_point deadline) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The server may be waiting for us to read its replies (it pauses past its unsent cap);
      // RoundTrip callers send at most what the server accepts, so just wait.
      RELGRAPH_RETURN_IF_ERROR(WaitFor(fd_, POLLOUT, deadline, "sending"));
      continue;
    }
    return Status::IOError(std::string("send: ") + std::strerror(errno));
  }
  return Status::OK();
}

Status Client::ReadFrame(RawReply* reply, SteadyClock::time_point deadline) {
  for (;;) {
    const std::string_view pending(in_.data() + in_begin_, in_.size() - in_begin_);
    DecodeResult r = DecodeFrame(pending, kMaxReplyFrame);
    if (r.state == DecodeState::kBad) {
      return Status(Code::kProtocolError, "bad reply frame: " + r.error.message());
    }
    if (r.state == DecodeState::kFrame) {
      reply->request_id = r.frame.request_id;
      reply->opcode = r.frame.opcode;
      reply->status = StatusFromReply(r.frame);
      reply->body.assign(r.frame.body);
      in_begin_ += r.frame.size;
      if (in_begin_ == in_.size()) {
        in_.clear();
        in_begin_ = 0;
      }
      if (r.frame.opcode == static_cast<uint8_t>(Opcode::kNotice)) {
        return reply->status.ok() ? Status(Code::kProtocolError, "empty notice") : reply->status;
      }
      return Status::OK();
    }
    if (in_begin_ > 0 && in_begin_ * 2 > in_.size()) {
      in_.erase(0, in_begin_);
      in_begin_ = 0;
    }
    RELGRAPH_RETURN_IF_ERROR(ReceiveSome(deadline, "waiting for a reply"));
  }
}

Status Client::ReceiveSome(SteadyClock::time_point deadline, const char* waiting_for) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n == 0) return Status::IOError("the server closed the connection");
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        RELGRAPH_RETURN_IF_ERROR(WaitFor(fd_, POLLIN, deadline, waiting_for));
        continue;
      }
      return Status::IOError(std::string("recv: ") + std::strerror(errno));
    }
    if (!tls_) {
      in_.append(buf, static_cast<size_t>(n));
      return Status::OK();
    }
    tls_->PutInput(std::string_view(buf, static_cast<size_t>(n)));
    const size_t had = in_.size();
    for (;;) {
      auto plain = tls_->ReadPlain(buf);
      if (!plain.ok()) {
        // What came before the end is the server's last word (a refused HELLO's error, a
        // NOTICE): hand it over; the next read reports the end.
        if (in_.size() > had) break;
        if (plain.status().code() == Code::kUnavailable) {
          return Status::IOError("the server closed the connection");
        }
        return plain.status();
      }
      if (*plain == 0) break;
      in_.append(buf, *plain);
    }
    std::string out;  // a TLS message the session itself must answer (a key update)
    if (tls_->TakeOutput(&out)) RELGRAPH_RETURN_IF_ERROR(SendRaw(out, deadline));
    return Status::OK();
  }
}

Status Client::RoundTrip(std::string_view bytes, size_t replies, std::vector<RawReply>* out) {
  if (fd_ < 0) {
    return Status(Code::kUnavailable,
                  "the connection is closed after an earlier error: " + broken_.ToString());
  }
  const auto deadline = SteadyClock::now() + options_.io_timeout;
  out->clear();
  out->resize(replies);
  if (Status s = SendAll(bytes, deadline); !s.ok()) return Broken(s);
  for (size_t i = 0; i < replies;) {
    RawReply& reply = (*out)[i];
    if (Status s = ReadFrame(&reply, deadline); !s.ok()) return Broken(s);
    if (subscription_id_ && reply.opcode == push_opcode_ && reply.request_id == subscription_id_) {
      pending_events_.push_back(std::move(reply));  // a subscription's, not a reply
      reply = RawReply{};
      continue;
    }
    ++i;
  }
  return Status::OK();
}

Status Client::Ack(const std::string& name, uint64_t lsn) {
  return Call(AckRequest{name, lsn}).status();
}
Result<std::vector<CursorEntry>> Client::Cursors() {
  auto r = Call(CursorsRequest{});
  if (!r.ok()) return r.status();
  return std::move(r->cursors);
}
Status Client::DeleteCursor(const std::string& name) {
  return Call(DeleteCursorRequest{name}).status();
}

Result<SubscribeReply> Client::StartSubscription(const SubscribeRequest& request) {
  return StartPushed(request, Opcode::kEvents);
}

Result<ReplicateReply> Client::StartReplication(const ReplicateRequest& request) {
  return StartPushed(request, Opcode::kRecords);
}

Result<PromoteReply> Client::Promote(bool force) {
  return Call(PromoteRequest{force});
}

Result<ReplicationReply> Client::Replication() {
  return Call(ReplicationRequest{});
}

Result<FetchSnapshotReply> Client::FetchSnapshot(const std::string& path) {
  const uint32_t id = next_request_id_;
  auto reply = Call(FetchSnapshotRequest{});
  if (!reply.ok()) return reply.status();
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create " + tmp + ": " + std::strerror(errno));
  Status s;
  uint64_t have = 0;
  while (s.ok() && have < reply->file_bytes) {
    RawReply frame;
    s = ReadFrame(&frame, SteadyClock::now() + options_.io_timeout);
    if (!s.ok()) {
      s = Broken(s);
      break;
    }
    if (frame.request_id != id || frame.opcode != static_cast<uint8_t>(Opcode::kSnapshotData)) {
      s = Broken(Status(Code::kProtocolError, "a " + std::string(OpcodeName(frame.opcode)) +
                                                  " frame arrived during a snapshot transfer"));
      break;
    }
    if (!frame.status.ok()) {
      s = frame.status;
      break;
    }
    if (frame.body.size() < kSnapshotDataHeaderBytes) {
      s = Broken(Status(Code::kProtocolError, "a SNAPSHOT_DATA frame without its offset"));
      break;
    }
    uint64_t offset = 0;
    for (int i = 7; i >= 0; --i) offset = (offset << 8) | static_cast<uint8_t>(frame.body[i]);
    const std::string_view data(frame.body.data() + 8, frame.body.size() - 8);
    if (offset != have || have + data.size() > reply->file_bytes) {
      s = Broken(Status(Code::kProtocolError, "SNAPSHOT_DATA at offset " + std::to_string(offset) +
                                                  " where " + std::to_string(have) +
                                                  " was expected"));
      break;
    }
    for (size_t done = 0; s.ok() && done < data.size();) {
      const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) s = Status::IOError("writing " + tmp + ": " + std::strerror(errno));
      if (n > 0) done += static_cast<size_t>(n);
    }
    have += data.size();
  }
  if (s.ok() && ::fsync(fd) != 0) s = Status::IOError("fsync " + tmp + ": " + std::strerror(errno));
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Status::IOError("rename to " + path + ": " + std::strerror(errno));
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return *reply;
}

Result<RawReply> Client::NextPush(std::chrono::milliseconds timeout) {
  RawReply frame;
  if (!pending_events_.empty()) {
    frame = std::move(pending_events_.front());
    pending_events_.pop_front();
    return frame;
  }
  if (fd_ < 0) {
    return Status(Code::kUnavailable,
                  "the connection is closed after an earlier error: " + broken_.ToString());
  }
  const Status s = ReadFrame(&frame, SteadyClock::now() + timeout);
  if (s.code() == Code::kTimeout) return s;  // a partial frame stays buffered
  if (!s.ok()) return Broken(s);
  if (!subscription_id_ || frame.opcode != push_opcode_ || frame.request_id != subscription_id_) {
    return Broken(
        Status(Code::kProtocolError, "a " + std::string(OpcodeName(frame.opcode)) +
                                         " reply arrived with no request waiting for it"));
  }
  return frame;
}

Result<EventsBody> Client::NextEvents(std::chrono::milliseconds timeout) {
  auto frame = NextPush(timeout);
  if (!frame.ok()) return frame.status();
  return frame->As<EventsBody>();
}

Result<std::vector<RawReply>> Client::Flush() {
  std::vector<RawReply> replies;
  const Status s = RoundTrip(queued_, queued_count_, &replies);
  queued_.clear();
  queued_count_ = 0;
  if (!s.ok()) return s;
  return replies;
}

Status Client::Ping() {
  auto r = Call(PingRequest{});
  return r.status();
}
Result<InfoReply> Client::Info() {
  return Call(InfoRequest{});
}
Result<SnapshotReply> Client::Snapshot() {
  return Call(SnapshotRequest{});
}
Result<SlowlogReply> Client::Slowlog(uint16_t count, bool reset) {
  return Call(SlowlogRequest{count, reset});
}
Result<PageReply> Client::Following(const PageQuery& query) {
  return Call(FollowingRequest{query});
}
Result<PageReply> Client::Fans(const PageQuery& query) {
  return Call(FansRequest{query});
}
Result<PageReply> Client::Friends(const PageQuery& query) {
  return Call(FriendsRequest{query});
}
Result<KnownFollowersReply> Client::KnownFollowers(uint64_t viewer, uint64_t target,
                                                   uint16_t limit) {
  return Call(KnownFollowersRequest{viewer, target, limit});
}

Result<CountedPageReply> Client::Blocks(const PageQuery& query) {
  return Call(BlocksRequest{query});
}
Result<CountedPageReply> Client::Requests(const PageQuery& query) {
  return Call(RequestsRequest{query});
}

}  // namespace relgraph::net
