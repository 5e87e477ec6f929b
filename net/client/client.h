// Client: a blocking C++ client of relgraphd, with the engine's API and a pipelined batch API.
//
// Why this design: plain POSIX sockets with poll() deadlines; no io_context, no threads. Every
// call writes its frame(s) and reads the replies in order, so pipelining is simply "write N
// frames, then read N replies". Every failure is a Status: the server's error codes pass through
// unchanged; transport failures are kIOError (connect, reset), kTimeout (a deadline passed) or
// kProtocolError (a reply that breaks the protocol). After a transport failure the connection
// is unusable and later calls return kUnavailable; connect again.
//
// With options.tls.enabled the connection is TLS (net/tls/tls_channel.h on the same socket):
// the handshake runs in Connect, before HELLO, within connect_timeout; a certificate refused
// by either side is kUnauthenticated naming why, a server that answers in plain text is
// kProtocolError saying so. Contexts (the CA and certificate files read) are cached per
// process by their files, so reconnecting does not read them again.
//
// Thread-safety: one Client per thread (not thread-safe); distinct Clients are independent.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/client/typed_calls.h"
#include "net/protocol/frame.h"
#include "net/protocol/messages.h"
#include "net/tls/tls_channel.h"
#include "net/tls/tls_options.h"
#include "storage/status.h"

namespace relgraph::net {

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = kDefaultPort;
  std::string token;  // sent in HELLO
  TlsClientOptions tls;  // tls.enabled: speak TLS (docs/security.md)
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds io_timeout{30000};  // per call: all replies must arrive within it
};

// "host:port" -> host and port; kInvalidArgument names what is wrong.
Status ParseHostPort(std::string_view text, std::string* host, uint16_t* port);

// One reply of a pipelined batch.
struct RawReply {
  uint32_t request_id = 0;
  uint8_t opcode = 0;
  Status status;  // the server's error, or OK
  std::string body;
  template <typename Reply>
  Result<Reply> As() const {
    if (!status.ok()) return status;
    Reply r;
    if (Status s = WireDecode(body, &r, std::string(OpcodeName(opcode)) + " reply"); !s.ok()) {
      return s;
    }
    return r;
  }
};

class Client : public TypedCalls<Client> {
 public:
  // Connects and performs the HELLO handshake in protocol version 2, falling back to version 1
  // (a second connection) when the server speaks only that. A first reply that is not a
  // relgraph frame is kProtocolError saying the server does not speak the relgraph protocol.
  static Result<std::unique_ptr<Client>> Connect(const ClientOptions& options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const HelloReply& hello() const { return hello_; }
  // False once a transport failure broke the connection (every later call fails at once).
  bool healthy() const { return broken_.ok(); }

  // ---- one request, one reply -----------------------------------------------------------------
  template <typename Request>
  Result<typename Request::Reply> Call(const Request& request) {
    std::string frame;
    AppendRequest(request, &frame);
    std::vector<RawReply> replies;
    RELGRAPH_RETURN_IF_ERROR(RoundTrip(frame, 1, &replies));
    return replies[0].As<typename Request::Reply>();
  }

  Status Ping();
  Result<InfoReply> Info();
  Result<SnapshotReply> Snapshot();
  // SLOWLOG (docs/protocol.md, "Slow-command log"): this server's newest `count` slow commands
  // (0: all), newest first; with `reset`, the server's log is emptied after being read.
  Result<SlowlogReply> Slowlog(uint16_t count = 0, bool reset = false);
  // Follow, Unfollow, Relation, Relations, Counts, RemoveUser, and the feed's Publish,
  // DeletePost, Timeline, UserPosts, Mute, Hide, Mutes, Hides: TypedCalls'.
  Result<PageReply> Following(const PageQuery& query);
  Result<PageReply> Fans(const PageQuery& query);
  Result<PageReply> Friends(const PageQuery& query);
  Result<KnownFollowersReply> KnownFollowers(uint64_t viewer, uint64_t target, uint16_t limit);

  // ---- blocks, private accounts, follow requests (docs/access.md) ---------------------------
  // Block, Unblock, SetPrivate, IsPrivate, Approve, Reject, Withdraw: TypedCalls'.
  Result<CountedPageReply> Blocks(const PageQuery& query);    // whom query.user blocks
  Result<CountedPageReply> Requests(const PageQuery& query);  // who asks to follow query.user

  // ---- the change stream (docs/change-stream.md) ----------------------------------------------
  // Sends SUBSCRIBE; on success this connection also carries EVENTS frames, read with
  // NextEvents. Other calls keep working on it (ACK, say): EVENTS frames that arrive while
  // they wait for their replies are kept for NextEvents, in order. net/client/subscriber.h
  // adds reconnection and resume on top.
  Result<SubscribeReply> StartSubscription(const SubscribeRequest& request);
  // The next EVENTS frame, waiting up to `timeout`: kTimeout when none came (the
  // subscription goes on); the server's error when the subscription ended (lsn_expired, whose
  // detail() is the oldest LSN kept); a transport error breaks the connection as usual.
  Result<EventsBody> NextEvents(std::chrono::milliseconds timeout);

  // Named cursors: ACK (every change up to lsn is handled), the list, and removal.
  Status Ack(const std::string& name, uint64_t lsn);
  Result<std::vector<CursorEntry>> Cursors();
  Status DeleteCursor(const std::string& name);

  // REPLICATE (docs/replication.md): on success this connection also carries RECORDS
  // frames, read with NextPush (and ForEachWireRecord); other calls (REPLICA_ACK) keep
  // working on it, as with a subscription.
  Result<ReplicateReply> StartReplication(const ReplicateRequest& request);
  // The next frame of this connection's subscription or replication, raw (its status is the
  // server's error when the stream ended). kTimeout when none came within `timeout`.
  Result<RawReply> NextPush(std::chrono::milliseconds timeout);
  // force: promote even when another replica is further ahead (docs/replication.md).
  Result<PromoteReply> Promote(bool force = false);
  Result<ReplicationReply> Replication();

  // FETCH_SNAPSHOT: writes the server's newest snapshot to `path` (through path + ".tmp",
  // fsynced, then renamed, so `path` is whole or absent) and returns its LSN and size. Load
  // it by placing it in an empty data directory as snapshot-<lsn, 20 digits>.rgs (or name
  // `path` so), then SUBSCRIBE from lsn + 1.
  Result<FetchSnapshotReply> FetchSnapshot(const std::string& path);

  // ---- pipelining --------------------------------------------------------------------------
  // Queues a request; Flush sends every queued request in one write and reads their replies,
  // in order. A server error fails only its own reply; a transport error fails the batch.
  template <typename Request>
  void Queue(const Request& request) {
    AppendRequest(request, &queued_);
    ++queued_count_;
  }
  Result<std::vector<RawReply>> Flush();
  size_t queued() const { return queued_count_; }

  // ---- raw access (tests, fuzzing, the CLI) ---------------------------------------------------
  // Sends bytes as they are and reads `replies` frames back.
  Status RoundTrip(std::string_view bytes, size_t replies, std::vector<RawReply>* out);

 private:
  explicit Client(const ClientOptions& options) : options_(options) {}
  template <typename Request>
  void AppendRequest(const Request& request, std::string* out) {
    const size_t start =
        BeginFrame(out, next_request_id_++, static_cast<uint8_t>(Request::kOpcode), 0);
    WirePut(out, request);
    EndFrame(out, start);
  }
  // Sends a request whose success makes the server push `push` frames with its request id
  // on this connection (SUBSCRIBE, REPLICATE); they are read with NextPush from then on.
  template <typename Request>
  Result<typename Request::Reply> StartPushed(const Request& request, Opcode push) {
    const uint32_t id = next_request_id_;
    auto reply = Call(request);
    if (reply.ok()) {
      subscription_id_ = id;
      push_opcode_ = static_cast<uint8_t>(push);
    }
    return reply;
  }
  Status Open();
  // The TLS handshake on the open socket (options_.tls.enabled).
  Status StartTls(std::chrono::steady_clock::time_point deadline);
  Status SendAll(std::string_view bytes, std::chrono::steady_clock::time_point deadline);
  // Writes bytes to the socket as they are (ciphertext under TLS).
  Status SendRaw(std::string_view bytes, std::chrono::steady_clock::time_point deadline);
  // Reads what the socket has (waiting for it until the deadline) and appends the plaintext
  // it carries to in_ (under TLS, possibly nothing yet).
  Status ReceiveSome(std::chrono::steady_clock::time_point deadline, const char* waiting_for);
  Status ReadFrame(RawReply* reply, std::chrono::steady_clock::time_point deadline);
  Status Broken(Status why);

  ClientOptions options_;
  int fd_ = -1;
  std::unique_ptr<TlsChannel> tls_;  // under TLS
  Status broken_;  // not OK after a transport failure
  uint32_t next_request_id_ = 1;
  std::string queued_;
  size_t queued_count_ = 0;
  std::deque<RawReply> pending_events_;      // pushed frames read while waiting for replies
  std::optional<uint32_t> subscription_id_;  // the SUBSCRIBE's request id, once it succeeded
  uint8_t push_opcode_ = 0;                  // EVENTS or RECORDS, once one succeeded
  std::string in_;                           // received, not yet decoded
  size_t in_begin_ = 0;
  HelloReply hello_;
};

}  // namespace relgraph::net
