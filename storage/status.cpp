#include "storage/status.h"

namespace relgraph {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kInvalidUserId:
      return "invalid_user_id";
    case Code::kSelfFollow:
      return "self_follow";
    case Code::kFollowLimit:
      return "follow_limit";
    case Code::kRateLimited:
      return "rate_limited";
    case Code::kNotFound:
      return "not_found";
    case Code::kCorruption:
      return "corruption";
    case Code::kIOError:
      return "io_error";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kInternal:
      return "internal";
    case Code::kUnauthenticated:
      return "unauthenticated";
    case Code::kResourceExhausted:
      return "resource_exhausted";
    case Code::kProtocolError:
      return "protocol_error";
    case Code::kUnsupported:
      return "unsupported";
    case Code::kTimeout:
      return "timeout";
    case Code::kAlreadyExists:
      return "already_exists";
    case Code::kLimitExceeded:
      return "limit_exceeded";
    case Code::kLsnExpired:
      return "lsn_expired";
    case Code::kReadOnly:
      return "read_only";
    case Code::kDiverged:
      return "diverged";
    case Code::kBlocked:
      return "blocked";
    case Code::kMoved:
      return "moved";
    case Code::kMoving:
      return "moving";
    case Code::kPermissionDenied:
      return "permission_denied";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(CodeName(code_));
  if (!message_.empty()) {
    s += ": ";
    s += message_;
  }
  return s;
}

}  // namespace relgraph
