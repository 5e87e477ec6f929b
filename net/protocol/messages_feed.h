// The feed's messages (docs/feed.md, docs/protocol.md 0x20-0x29): posts, timelines, mutes
// and hides. Field order is wire order.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "net/protocol/messages_common.h"

namespace relgraph::net {

struct PublishReply {
  int64_t ts = 0;
  bool retained = true;
  uint64_t evicted = 0;  // the post this one pushed out of the author's newest K; 0: none
  RELGRAPH_WIRE_FIELDS(ts, retained, evicted)
};
struct PublishRequest {
  static constexpr Opcode kOpcode = Opcode::kPublish;
  using Reply = PublishReply;
  uint64_t author = 0;
  uint64_t post = 0;
  uint8_t kind = 0;
  std::optional<int64_t> ts;  // absent: the server's clock
  RELGRAPH_WIRE_FIELDS(author, post, kind, ts)
};

struct DeletePostRequest {
  static constexpr Opcode kOpcode = Opcode::kDeletePost;
  using Reply = Empty;
  uint64_t author = 0;
  uint64_t post = 0;
  RELGRAPH_WIRE_FIELDS(author, post)
};

struct PostCursor {
  int64_t ts = 0;
  uint64_t post = 0;
  RELGRAPH_WIRE_FIELDS(ts, post)
  friend bool operator==(const PostCursor&, const PostCursor&) = default;
};
struct FeedItem {
  uint64_t post = 0;
  uint64_t author = 0;
  int64_t ts = 0;
  uint8_t kind = 0;
  RELGRAPH_WIRE_FIELDS(post, author, ts, kind)
  friend bool operator==(const FeedItem&, const FeedItem&) = default;
};
struct FeedReply {
  std::vector<FeedItem> entries;
  std::optional<PostCursor> next;
  RELGRAPH_WIRE_FIELDS(entries, next)
};
struct FeedQuery {
  uint64_t user = 0;  // the reader (timeline) or the author (user_posts)
  uint16_t limit = 20;
  std::optional<PostCursor> after;
  uint64_t kinds = 0;  // bit k: include kind k; 0: every kind
  RELGRAPH_WIRE_FIELDS(user, limit, after, kinds)
};
struct TimelineRequest : FeedQuery {
  static constexpr Opcode kOpcode = Opcode::kTimeline;
  using Reply = FeedReply;
};
struct UserPostsRequest : FeedQuery {
  static constexpr Opcode kOpcode = Opcode::kUserPosts;
  using Reply = FeedReply;
};

struct MuteRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kMute;
  using Reply = ChangedReply;
};
struct UnmuteRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kUnmute;
  using Reply = ChangedReply;
};
struct HideRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kHide;
  using Reply = ChangedReply;
};
struct UnhideRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kUnhide;
  using Reply = ChangedReply;
};

struct UserListReply {
  std::vector<uint64_t> users;  // in id order
  RELGRAPH_WIRE_FIELDS(users)
};
struct MutesRequest {
  static constexpr Opcode kOpcode = Opcode::kMutes;
  using Reply = UserListReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};
struct HidesRequest {
  static constexpr Opcode kOpcode = Opcode::kHides;
  using Reply = UserListReply;
  uint64_t user = 0;  // the author
  RELGRAPH_WIRE_FIELDS(user)
};

}  // namespace relgraph::net
