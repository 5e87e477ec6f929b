// One client connection: reads frames, runs them through the Service, writes replies in order.
//
// Why this design: a connection lives on exactly one io thread (its IoWorker), so its state needs
// no lock; the only cross-thread events (a durable ticket, a background command's reply) are
// posted to that thread. Replies are appended to one output buffer in request order; a reply that
// must wait (its write is not durable yet, or a background command is still running) leaves a
// hold marker at its offset, and only the bytes before the first hold are written. Pipelined
// replies so keep request order without stalling request execution. Reading pauses while unsent
// bytes exceed the cap, and a peer that stops reading is cut after send_timeout, so a slow client
// cannot grow server memory.
//
// Memory follows use: a connection waits for its socket to become readable (async_wait), then
// reads into its worker's shared scratch buffer and runs the whole frames there; only the bytes
// of an unfinished frame (or of frames held back while reading is paused) are copied into in_.
// in_, out_ and writing_ give their memory back once drained. An idle connection so costs its
// record and its socket, about a kilobyte (docs/benchmarks.md).
//
// A connection that SUBSCRIBEd (or FETCH_SNAPSHOT) also carries the frames its Subscription
// pushes (EVENTS, SNAPSHOT_DATA). It pulls the next body only while its unsent bytes are below
// a low-water mark, so a subscriber that reads slowly just reads the log later, and never holds
// memory or writers back; caught up, it looks again every millisecond (a timer that exists
// only while subscribed).
//
// On a TLS port the connection carries a TlsChannel (net/tls/tls_channel.h): what the socket
// gives is put into the channel and the plaintext taken out is run as above (in the same
// scratch buffer); replies are encrypted into writing_ when written. A first byte that cannot
// start a TLS handshake gets a plain error frame saying the port wants TLS.
//
// Who the client is (ClientIdentity) is settled at HELLO, from its token or its verified
// certificate; every later command is checked against the permission it needs
// (net/auth/permissions.h). A reload of the clients (ServerCore::clients_generation) makes
// the next command look the client up again. Before HELLO, frames are capped at
// kPreAuthMaxFrame bytes, so an unauthenticated peer cannot make the server buffer a megabyte.
//
// Thread-safety: every method runs on the owning IoWorker's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include "net/server/asio.h"

#include "net/auth/client_registry.h"
#include "net/protocol/frame.h"
#include "net/protocol/messages.h"
#include "net/server/server_core.h"
#include "net/service.h"
#include "net/tls/tls_channel.h"

namespace relgraph::net {

class IoWorker;

// What a connection gathers a pipelined run of batchable writes into (kCommandBatches): one per
// io thread, shared by its connections, so a connection holds no batch memory of its own.
// Frames before HELLO succeeded may not exceed this (HELLO's body is a version and a token).
inline constexpr uint32_t kPreAuthMaxFrame = 4096;

struct WriteBatchScratch {
  static constexpr size_t kMaxFrames = 1024;  // a longer run is executed in several batches
  std::vector<Frame> frames;                  // bodies point into the buffer being processed
  std::vector<BatchItem> items;               // items[i]: frames[i]'s command and body
  std::string replies;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Clock = std::chrono::steady_clock;

  Connection(ServerCore& core, IoWorker& worker, boost::asio::ip::tcp::socket socket);
  ~Connection();

  void Start();
  // Replies `why` as a notice and closes; used when the connection is over a limit at accept.
  void StartRejected(const Status& why);
  // Stops reading new requests; closes once every reply already owed is written.
  void BeginShutdown();
  // The durable ticket moved (or durability failed): release or drop held write replies.
  void OnDurabilityChange();
  // Applies the idle, send and drain timeouts.
  void Sweep(Clock::time_point now);
  void Abort();  // closes now, unsent replies are lost

 private:
  struct Hold {
    size_t offset = 0;        // in out_: bytes from here on wait
    uint64_t ticket = 0;      // until this ticket is durable
    uint64_t background = 0;  // non-zero: until this background command's reply is inserted
  };

  void DoRead();
  void OnReadable(const boost::system::error_code& ec);
  // Runs the whole frames at the front of `pending`; returns the bytes they took. Stops early
  // when the connection closes or reading pauses.
  size_t ProcessFrames(std::string_view pending);
  // Frees the buffers that are empty, and brings ServerCore::connection_bytes up to date.
  void ReleaseDrainedBuffers();
  void HandleFrame(const Frame& frame);
  // The command of `frame` when it may join a batch of writes (kCommandBatches), else nullptr.
  const CommandSpec* BatchableSpec(const Frame& frame) const;
  // Executes the gathered frames as one batch (Service::ExecuteBatch), appends their replies
  // in order, and empties the scratch. One frame alone goes through HandleFrame.
  void RunWriteBatch(WriteBatchScratch& batch);
  // Holds the replies from `offset` in out_ on (and every later one) until `ticket` is durable;
  // nothing when it already is.
  void HoldUntilDurable(size_t offset, uint64_t ticket);
  void HandleHello(const Frame& frame);
  // Whether the client may run `op` (its permissions, looked up again after a reload); a
  // refusal is answered here.
  bool Permitted(const Frame& frame, Opcode op);
  // Runs `got` (plaintext) as the bytes read: the frames, with what is left kept in in_.
  void ProcessInput(std::string_view got);
  // A TLS port's bytes: starts the channel on the first ones, decrypts, runs the plaintext.
  void ProcessTls(std::span<char> scratch, size_t n);
  // The TLS session failed: log it, send the alert that says why, close.
  void FailTls(const Status& why);
  // Notes that `frame`'s command took `ns` and ended with `code` (command_record.h: its
  // metrics and, when slow, a slow-log entry).
  void Record(const Frame& frame, uint64_t ns, Code code);
  // Replies with an error to a request refused before it ran, counting it (command_metrics.h);
  // with `close`, then closes the connection.
  void Refuse(const Frame& frame, const Status& why, bool close = false);
  void RunBackground(const CommandSpec& spec, const Frame& frame);
  // Logs an admin command with who ran it (ServerCore::Log).
  // From any thread: reads only peer_, which never changes.
  void LogAdmin(uint8_t opcode, const std::string& client, Code code) const;
  void FailAndClose(uint32_t request_id, uint8_t opcode, const Status& why);
  void ReleaseHolds();
  size_t sendable_bytes() const { return holds_.empty() ? out_.size() : holds_.front().offset; }
  void DoWrite();
  void OnWrite(const boost::system::error_code& ec);
  void MaybeFinish();
  void Drain();
  // Moves events from the subscription into out_ while the socket keeps up.
  void PumpEvents();
  void ArmEventPoll();
  size_t unsent_bytes() const { return out_.size() + writing_.size(); }

  ServerCore& core_;
  IoWorker& worker_;
  boost::asio::ip::tcp::socket socket_;
  boost::asio::ip::tcp::endpoint peer_;  // the client's address, for the slow log
  std::shared_ptr<const TlsContext> tls_context_;  // a TLS port's, until the channel starts
  std::unique_ptr<TlsChannel> tls_;                // a TLS connection's session
  bool tls_close_sent_ = false;
  bool tls_failed_ = false;           // the session broke: only its alert is still written
  std::optional<Status> reject_after_handshake_;  // a TLS port's StartRejected
  ClientIdentity client_;            // who HELLO authenticated
  uint64_t client_generation_ = 0;   // the clients_generation client_ was looked up in
  std::string in_;       // received, not yet run: an unfinished frame, or frames held while paused
  std::string out_;      // replies not yet handed to the socket, in request order
  std::string writing_;  // being written
  std::deque<Hold> holds_;  // by offset
  uint64_t next_background_ = 1;
  std::unique_ptr<Subscription> subscription_;
  uint32_t subscription_request_id_ = 0;
  std::unique_ptr<boost::asio::steady_timer> event_poll_;  // only while subscribed
  bool event_poll_armed_ = false;
  int64_t accounted_bytes_ = 0;  // this connection's share of ServerCore::connection_bytes
  bool greeted_ = false;
  bool reading_ = false;
  bool write_active_ = false;
  bool read_paused_ = false;
  bool closing_ = false;   // no more requests; close when the owed replies are written
  bool draining_ = false;  // our side is shut; discarding input until the peer closes
  bool closed_ = false;
  Clock::time_point accepted_;
  Clock::time_point last_request_;
  Clock::time_point last_write_progress_;
  Clock::time_point drain_started_;
};

}  // namespace relgraph::net
