// Status and Result<T>: the one error style used at every boundary of relgraph.
//
// Why here: storage/ is the bottom layer, and this header is pure vocabulary (no I/O, no engine
// types), so engine/, net/ and tools/ may all include it. It is the only storage/ header net/ may
// include (tests/layering_check.sh enforces that).
//
// The numeric values of Code are stable: the wire protocol and the WAL reuse them, so never
// renumber; append new codes at the end.
//
// Thread-safety: values; safe to copy across threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace relgraph {

enum class Code : uint16_t {
  kOk = 0,
  kInvalidArgument = 1,  // malformed or out-of-range input (limit, timestamp, batch size)
  kInvalidUserId = 2,    // user id 0
  kSelfFollow = 3,       // follow(a, a)
  kFollowLimit = 4,      // the follower already follows the maximum number of users
  kRateLimited = 5,      // no token left; retry_after_ms() says when one will be
  kNotFound = 6,
  kCorruption = 7,  // stored bytes fail a checksum or a format rule
  kIOError = 8,
  kUnavailable = 9,  // the component refuses work (e.g. after a failed write)
  kInternal = 10,
  kUnauthenticated = 11,    // the server wants a valid token before anything but HELLO
  kResourceExhausted = 12,  // a server limit (connections, unsent replies, idle time) was hit
  kProtocolError = 13,      // bytes that break the wire protocol (framing, body layout)
  kUnsupported = 14,        // unknown opcode or protocol version; data of another setting
                            // (a snapshot's time resolution)
  kTimeout = 15,            // a client-side deadline passed
  kAlreadyExists = 16,      // a unique id is taken (publishing a post id the engine holds)
  kLimitExceeded = 17,      // a per-user list is full (mutes, hides)
  kLsnExpired = 18,         // a WAL position older than what the WAL still keeps
  kReadOnly = 19,           // a replica refuses writes (the message names its primary)
  kDiverged = 20,           // a node holds records its primary never had (after a failover)
  kBlocked = 21,            // a block between the two users forbids the follow or request
  kMoved = 22,   // a cluster shard does not own the user's bucket (the message names the owner)
  kMoving = 23,  // a cluster shard is taking the user's bucket over: retry shortly
  kPermissionDenied = 24,  // the authenticated client lacks the permission the command needs
};
inline constexpr uint16_t kMaxCode = 24;

// Stable lower-case name of a code, e.g. "follow_limit". Never empty.
std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message, int64_t detail = 0)
      : code_(code), detail_(detail), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status IOError(std::string m) { return {Code::kIOError, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Code-specific number: for kRateLimited, milliseconds until a token is available; for a
  // failed batch (Graph::Import), the index of the item that failed; for kIOError from an Env,
  // errno (0 when there is none).
  int64_t detail() const { return detail_; }
  int64_t retry_after_ms() const { return code_ == Code::kRateLimited ? detail_ : 0; }

  // "follow_limit: user 7 already follows 1000 users (the maximum)"
  std::string ToString() const;

  // Marks a deliberately ignored status; greppable.
  void IgnoreError() const {}

 private:
  Code code_ = Code::kOk;
  int64_t detail_ = 0;
  std::string message_;
};

// A value or the Status explaining why there is none. REQUIRES for value(): ok().
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT; REQUIRES: !status.ok()

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace relgraph

// Returns early with the status of an expression that yields a Status.
#define RELGRAPH_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::relgraph::Status relgraph_status_ = (expr);        \
    if (!relgraph_status_.ok()) return relgraph_status_; \
  } while (0)
