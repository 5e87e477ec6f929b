// Feed::CheckInvariants: a full walk of the feed's state against the rules the rest of the
// feed relies on (docs/feed.md), for tests and `relgraph-admin verify`. O(posts + inbox
// entries); each failure names what is wrong.
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "engine/feed/feed_internal.h"

namespace relgraph {

namespace {

Status Broken(const std::string& what) {
  return Status::Corruption("feed invariant: " + what);
}

}  // namespace

std::vector<InternalId> Feed::ScanCelebrities(const Graph& g, InternalId reader) const {
  std::vector<InternalId> out;
  ForEachVisibleCelebrity(g, reader, [&](InternalId f) { out.push_back(f); });
  std::sort(out.begin(), out.end());
  return out;
}

Status Feed::CheckInvariants(const Graph& g) const {
  const auto name = [&](InternalId u) { return std::to_string(g.ExternalOf(u)); };
  RELGRAPH_RETURN_IF_ERROR(posts_.CheckInvariants(g));
  RELGRAPH_RETURN_IF_ERROR(audience_.CheckInvariants(g));
  // Inboxes: their own rules, and two that need the graph: a current celebrity list names
  // the reader's visible celebrity followees, and a marked reader follows none.
  auto header_rule = [&](const InboxCold& c, const std::string& who) {
    if (c.celebrities_epoch != audience_.EpochTag()) return Status::OK();
    const std::span<const InternalId> cached = inboxes_.CelebritiesOf(c);
    std::vector<InternalId> sorted(cached.begin(), cached.end());
    std::sort(sorted.begin(), sorted.end());
    if (sorted != ScanCelebrities(g, c.reader))
      return Broken(who + " lists other celebrity followees than the reader has");
    if (inboxes_.HasSide(c) && cached.size() == 1 && !inboxes_.HasPending(c))
      return Broken(who + " keeps a side for one celebrity");
    return Status::OK();
  };
  auto mark_rule = [&](InternalId reader) {
    if (!ScanCelebrities(g, reader).empty())
      return Broken("user " + name(reader) + " has a mark for an inbox but follows a celebrity");
    return Status::OK();
  };
  return inboxes_.CheckInvariants(name, g.user_count(), header_rule, mark_rule);
}

}  // namespace relgraph
