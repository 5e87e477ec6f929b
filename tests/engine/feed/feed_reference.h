// A brute-force model of the feed semantics of docs/feed.md, for differential tests: state in
// plain std containers, every timeline computed at read time by merging all followees' posts.
// Follows obey docs/access.md: blocks sever and refuse them, private accounts turn them into
// requests until approved (or until the account goes public).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "engine/feed/feed_types.h"

namespace relgraph::testing {

class FeedReference {
 public:
  FeedReference(uint32_t k, uint32_t r) : k_(k), r_(r) {}

  struct Post {
    TimestampMs ts;
    PostId id;
    uint8_t kind;
    UserId author;
    PostKey key() const { return {ts, id}; }
  };

  bool Exists(PostId id) const { return author_of_.count(id) != 0; }
  // Mirrors Feed::Publish for a fresh id: returns the outcome.
  PublishOutcome Publish(UserId a, PostId id, uint8_t kind, TimestampMs ts) {
    PublishOutcome out;
    out.ts = ts;
    auto& ring = posts_[a];
    const PostKey key{ts, id};
    if (ring.size() >= k_ && key < ring.begin()->first) {
      out.retained = false;
      return out;
    }
    ring[key] = Post{ts, id, kind, a};
    author_of_[id] = a;
    if (ring.size() > k_) {
      out.evicted = ring.begin()->second.id;
      author_of_.erase(out.evicted);
      ring.erase(ring.begin());
    }
    return out;
  }
  bool Delete(UserId a, PostId id) {
    auto it = author_of_.find(id);
    if (it == author_of_.end() || it->second != a) return false;
    auto& ring = posts_[a];
    for (auto p = ring.begin(); p != ring.end(); ++p) {
      if (p->second.id == id) {
        ring.erase(p);
        break;
      }
    }
    author_of_.erase(it);
    return true;
  }
  // What a follow made: nothing (a block stands), an edge (new or already there), a request.
  enum class FollowResult { kBlocked, kEdge, kRequest };
  FollowResult Follow(UserId a, UserId b) {
    if (Blocked(a, b)) return FollowResult::kBlocked;
    if (follows_.count({a, b}) != 0) return FollowResult::kEdge;
    if (private_.count(b) != 0) {
      requests_.insert({a, b});
      return FollowResult::kRequest;
    }
    follows_.insert({a, b});
    return FollowResult::kEdge;
  }
  void Unfollow(UserId a, UserId b) { follows_.erase({a, b}); }
  bool Blocked(UserId a, UserId b) const {
    return blocks_.count({a, b}) != 0 || blocks_.count({b, a}) != 0;
  }
  // Mirrors BlockOutcome: created, and what the block removed.
  struct BlockResult {
    bool created, unfollowed, lost_follower, requests_removed;
  };
  BlockResult Block(UserId a, UserId b) {
    if (!blocks_.insert({a, b}).second) return {false, false, false, false};
    BlockResult r{true, follows_.erase({a, b}) != 0, follows_.erase({b, a}) != 0, false};
    r.requests_removed = (requests_.erase({a, b}) + requests_.erase({b, a})) != 0;
    return r;
  }
  bool Unblock(UserId a, UserId b) { return blocks_.erase({a, b}) != 0; }
  // Going public approves every pending request. Returns {changed, approved}.
  std::pair<bool, uint64_t> SetPrivate(UserId a, bool on) {
    if (on) return {private_.insert(a).second, 0};
    if (private_.erase(a) == 0) return {false, 0};
    uint64_t approved = 0;
    for (auto it = requests_.begin(); it != requests_.end();) {
      if (it->second != a) {
        ++it;
        continue;
      }
      follows_.insert(*it);
      it = requests_.erase(it);
      ++approved;
    }
    return {true, approved};
  }
  bool Approve(UserId target, UserId requester) {
    if (requests_.erase({requester, target}) == 0) return false;
    follows_.insert({requester, target});
    return true;
  }
  bool RemoveRequest(UserId requester, UserId target) {
    return requests_.erase({requester, target}) != 0;
  }
  // Pending requests as (requester, target), for picking answers.
  const std::set<std::pair<UserId, UserId>>& requests() const { return requests_; }
  bool Follows(UserId a, UserId b) const { return follows_.count({a, b}) != 0; }
  bool SetMute(UserId u, UserId b, bool on) { return Set(mutes_, u, b, on); }
  bool SetHide(UserId a, UserId u, bool on) { return Set(hides_, a, u, on); }
  void RemoveUser(UserId a) {
    for (auto it = follows_.begin(); it != follows_.end();) {
      it = (it->first == a || it->second == a) ? follows_.erase(it) : std::next(it);
    }
    for (auto& [key, p] : posts_[a]) author_of_.erase(p.id);
    posts_.erase(a);
    for (auto* s : {&mutes_, &hides_}) {
      for (auto it = s->begin(); it != s->end();) {
        it = it->first == a ? s->erase(it) : std::next(it);
      }
    }
    for (auto* s : {&blocks_, &requests_}) {
      for (auto it = s->begin(); it != s->end();) {
        it = (it->first == a || it->second == a) ? s->erase(it) : std::next(it);
      }
    }
    private_.erase(a);
  }

  bool Visible(UserId reader, UserId author) const {
    if (reader == author) return true;
    return Follows(reader, author) && mutes_.count({reader, author}) == 0 &&
           hides_.count({author, reader}) == 0;
  }

  // The whole timeline window (newest R), newest first.
  std::vector<Post> Window(UserId u) const {
    std::vector<Post> all;
    for (const auto& [author, ring] : posts_) {
      if (!Visible(u, author)) continue;
      for (const auto& [key, p] : ring) all.push_back(p);
    }
    std::sort(all.begin(), all.end(),
              [](const Post& a, const Post& b) { return b.key() < a.key(); });
    if (all.size() > r_) all.resize(r_);
    return all;
  }
  std::vector<Post> AuthorPosts(UserId a) const {
    std::vector<Post> all;
    auto it = posts_.find(a);
    if (it != posts_.end()) {
      for (auto p = it->second.rbegin(); p != it->second.rend(); ++p) all.push_back(p->second);
    }
    return all;
  }

  static FeedPage Page(const std::vector<Post>& list, const FeedPageRequest& req) {
    FeedPage page;
    for (const Post& p : list) {
      if (req.after && !(p.key() < *req.after)) continue;
      if (page.entries.size() == req.limit) {
        page.next = PostKey{page.entries.back().ts, page.entries.back().post};
        break;
      }
      if (req.kinds != 0 && ((req.kinds >> p.kind) & 1) == 0) continue;
      page.entries.push_back({p.id, p.author, p.ts, p.kind});
    }
    return page;
  }
  FeedPage Timeline(UserId u, const FeedPageRequest& req) const { return Page(Window(u), req); }
  FeedPage UserPosts(UserId a, const FeedPageRequest& req) const {
    return Page(AuthorPosts(a), req);
  }
  // Every retained post, for picking delete targets.
  std::vector<std::pair<UserId, PostId>> AllPosts() const {
    std::vector<std::pair<UserId, PostId>> out;
    for (const auto& [id, a] : author_of_) out.push_back({a, id});
    return out;
  }

 private:
  static bool Set(std::set<std::pair<UserId, UserId>>& s, UserId a, UserId b, bool on) {
    return on ? s.insert({a, b}).second : s.erase({a, b}) != 0;
  }

  uint32_t k_, r_;
  std::map<UserId, std::map<PostKey, Post>> posts_;
  std::map<PostId, UserId> author_of_;
  std::set<std::pair<UserId, UserId>> follows_, mutes_, hides_;
  std::set<std::pair<UserId, UserId>> blocks_, requests_;  // (blocker, blocked), (from, to)
  std::set<UserId> private_;
};

}  // namespace relgraph::testing
