#include "net/cluster/placement.h"

#include <xxhash.h>

#include <algorithm>
#include <charconv>

namespace relgraph::net {
namespace {

constexpr std::string_view kMagic = "relgraph-shard-map 1";
constexpr std::string_view kVersionedMagic = "relgraph-cluster-map 1\n";

Status Bad(size_t line, const std::string& what) {
  return Status::InvalidArgument("shard map line " + std::to_string(line) + ": " + what);
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// host:port with a nonempty host and a port 1..65535.
bool ValidAddress(std::string_view a) {
  const size_t colon = a.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  uint64_t port = 0;
  if (!ParseU64(a.substr(colon + 1), &port) || port == 0 || port > 65535) return false;
  return std::none_of(a.begin(), a.end(), [](char c) { return c == ' ' || c == '\n'; });
}

bool ValidGroupName(std::string_view g) {
  return !g.empty() && g.size() <= 64 && std::all_of(g.begin(), g.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

// A shard's group: a valid name and its members' addresses (the first is `address`, none
// repeated), or neither.
Status ValidateGroup(const ShardInfo& s) {
  const std::string what = "shard map: shard " + std::to_string(s.id);
  if (s.group.empty() && s.members.empty()) return Status::OK();
  if (!ValidGroupName(s.group)) {
    return Status::InvalidArgument(what + " group name '" + s.group +
                                   "', expected 1 to 64 of A-Z a-z 0-9 _ -");
  }
  if (s.members.empty() || s.members.front() != s.address) {
    return Status::InvalidArgument(what + " group " + s.group +
                                   ": its members must start with the shard's address");
  }
  for (size_t i = 0; i < s.members.size(); ++i) {
    if (!ValidAddress(s.members[i]) || s.members[i].find(',') != std::string::npos) {
      return Status::InvalidArgument(what + " member address '" + s.members[i] +
                                     "', expected host:port");
    }
    for (size_t j = 0; j < i; ++j) {
      if (s.members[j] == s.members[i]) {
        return Status::InvalidArgument(what + " member " + s.members[i] + " listed twice");
      }
    }
  }
  return Status::OK();
}

// "first-last" within 0..buckets-1.
bool ParseRange(std::string_view w, uint32_t buckets, uint32_t* first, uint32_t* last) {
  const size_t dash = w.find('-');
  uint64_t f = 0, l = 0;
  if (dash == std::string_view::npos || !ParseU64(w.substr(0, dash), &f) ||
      !ParseU64(w.substr(dash + 1), &l) || f > l || l >= buckets) {
    return false;
  }
  *first = static_cast<uint32_t>(f);
  *last = static_cast<uint32_t>(l);
  return true;
}

}  // namespace

std::string_view MovePhaseName(MovePhase phase) {
  switch (phase) {
    case MovePhase::kPrepare:
      return "prepare";
    case MovePhase::kFlip:
      return "flip";
    case MovePhase::kCopy:
      return "copy";
  }
  return "?";
}

uint32_t BucketOf(uint64_t user, uint32_t buckets) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(user >> (8 * i));
  return static_cast<uint32_t>(XXH3_64bits(bytes, sizeof bytes) % buckets);
}

const ShardInfo* ShardMap::Find(uint32_t id) const {
  auto it = std::lower_bound(shards.begin(), shards.end(), id,
                             [](const ShardInfo& s, uint32_t v) { return s.id < v; });
  return it != shards.end() && it->id == id ? &*it : nullptr;
}

std::vector<uint32_t> ShardMap::BucketCounts() const {
  std::vector<uint32_t> counts(shards.size(), 0);
  for (uint32_t id : owner) {
    for (size_t i = 0; i < shards.size(); ++i) {
      if (shards[i].id == id) ++counts[i];
    }
  }
  return counts;
}

Status ValidateShardMap(const ShardMap& map) {
  if (map.buckets < 1 || map.buckets > kMaxBuckets) {
    return Status::InvalidArgument("shard map: " + std::to_string(map.buckets) +
                                   " buckets, expected 1 to " + std::to_string(kMaxBuckets));
  }
  if (map.owner.size() != map.buckets) {
    return Status::InvalidArgument("shard map: owners for " + std::to_string(map.owner.size()) +
                                   " buckets, expected " + std::to_string(map.buckets));
  }
  if (map.shards.empty()) return Status::InvalidArgument("shard map: no shards");
  for (size_t i = 0; i < map.shards.size(); ++i) {
    const ShardInfo& s = map.shards[i];
    if (s.id == 0 || s.id > 65535) {
      return Status::InvalidArgument("shard map: shard id " + std::to_string(s.id) +
                                     ", expected 1 to 65535");
    }
    if (i > 0 && s.id <= map.shards[i - 1].id) {
      return Status::InvalidArgument("shard map: shard " + std::to_string(s.id) +
                                     " repeated or out of order");
    }
    if (!ValidAddress(s.address)) {
      return Status::InvalidArgument("shard map: shard " + std::to_string(s.id) + " address '" +
                                     s.address + "', expected host:port");
    }
    RELGRAPH_RETURN_IF_ERROR(ValidateGroup(s));
  }
  for (uint32_t b = 0; b < map.buckets; ++b) {
    if (map.Find(map.owner[b]) == nullptr) {
      return Status::InvalidArgument("shard map: bucket " + std::to_string(b) +
                                     " belongs to shard " + std::to_string(map.owner[b]) +
                                     ", which is not in the map");
    }
  }
  if (map.move) {
    const BucketMove& mv = *map.move;
    const std::string what = "shard map: the move of buckets " + std::to_string(mv.first) + "-" +
                             std::to_string(mv.last);
    if (mv.first > mv.last || mv.last >= map.buckets) {
      return Status::InvalidArgument(what + " is outside 0-" + std::to_string(map.buckets - 1));
    }
    if (map.Find(mv.from) == nullptr || map.Find(mv.to) == nullptr || mv.from == mv.to) {
      return Status::InvalidArgument(what + " is from shard " + std::to_string(mv.from) +
                                     " to shard " + std::to_string(mv.to) +
                                     ": two different shards of the map are needed");
    }
    if (mv.id == 0) return Status::InvalidArgument(what + " has id 0");
    if (mv.phase < MovePhase::kPrepare || mv.phase > MovePhase::kCopy) {
      return Status::InvalidArgument(what + " has no phase");
    }
    if (mv.phase == MovePhase::kPrepare && mv.flipped_ms != 0) {
      return Status::InvalidArgument(what + " has a flip time in phase prepare");
    }
    const uint32_t holder = mv.phase == MovePhase::kPrepare ? mv.from : mv.to;
    for (uint32_t b = mv.first; b <= mv.last; ++b) {
      if (map.owner[b] != holder) {
        return Status::InvalidArgument(what + ": bucket " + std::to_string(b) +
                                       " belongs to shard " + std::to_string(map.owner[b]) +
                                       ", expected shard " + std::to_string(holder) + " in phase " +
                                       std::string(MovePhaseName(mv.phase)));
      }
    }
  }
  return Status::OK();
}

namespace {

std::string Encode(const ShardMap& map, bool with_generation) {
  std::string out(kMagic);
  out += "\nbuckets " + std::to_string(map.buckets) + "\n";
  if (with_generation && map.generation >= 2) {
    out += "generation " + std::to_string(map.generation) + "\n";
  }
  for (const ShardInfo& s : map.shards) {
    if (s.group.empty()) {
      out += "shard " + std::to_string(s.id) + " " + s.address + "\n";
      continue;
    }
    out += "shard " + std::to_string(s.id) + " ";
    for (size_t i = 0; i < s.members.size(); ++i) out += (i > 0 ? "," : "") + s.members[i];
    out += " group " + s.group + "\n";
  }
  for (uint32_t first = 0; first < map.buckets;) {
    uint32_t last = first;
    while (last + 1 < map.buckets && map.owner[last + 1] == map.owner[first]) ++last;
    out += "owner " + std::to_string(first) + "-" + std::to_string(last) + " " +
           std::to_string(map.owner[first]) + "\n";
    first = last + 1;
  }
  if (map.move) {
    const BucketMove& mv = *map.move;
    out += "move " + std::to_string(mv.first) + "-" + std::to_string(mv.last) + " " +
           std::to_string(mv.from) + " " + std::to_string(mv.to) + " " +
           std::string(MovePhaseName(mv.phase)) + " " + std::to_string(mv.id);
    if (mv.flipped_ms != 0) out += " " + std::to_string(mv.flipped_ms);
    out += "\n";
  }
  return out;
}

}  // namespace

std::string EncodeShardMap(const ShardMap& map) {
  return Encode(map, /*with_generation=*/true);
}

uint64_t ShardMapDigest(const ShardMap& map) {
  const std::string text = Encode(map, /*with_generation=*/false);
  return XXH3_64bits(text.data(), text.size());
}

std::string EncodeVersionedShardMap(const ShardMap& map) {
  return std::string(kVersionedMagic) + "version " + std::to_string(map.version) + "\n" +
         EncodeShardMap(map);
}

Result<ShardMap> ParseVersionedShardMap(std::string_view text) {
  if (text.substr(0, kVersionedMagic.size()) != kVersionedMagic) {
    return Status::InvalidArgument(
        "does not start with '" +
        std::string(kVersionedMagic.substr(0, kVersionedMagic.size() - 1)) + "'");
  }
  text.remove_prefix(kVersionedMagic.size());
  constexpr std::string_view kVersion = "version ";
  const size_t nl = text.find('\n');
  uint64_t version = 0;
  if (text.substr(0, kVersion.size()) != kVersion || nl == std::string_view::npos ||
      !ParseU64(text.substr(kVersion.size(), nl - kVersion.size()), &version)) {
    return Status::InvalidArgument("expected 'version N' on its second line");
  }
  auto map = ParseShardMap(text.substr(nl + 1));
  if (!map.ok()) return map.status();
  map->version = version;
  return map;
}

Result<ShardMap> ParseShardMap(std::string_view text) {
  ShardMap map;
  map.buckets = 0;
  std::vector<bool> covered;
  bool has_generation = false;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line_no == 1) {
      if (line != kMagic) return Bad(1, "expected '" + std::string(kMagic) + "'");
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string_view> w = Words(line);
    uint64_t n = 0, m = 0;
    if (w[0] == "buckets" && w.size() == 2 && ParseU64(w[1], &n) && n >= 1 && n <= kMaxBuckets &&
        map.buckets == 0) {
      map.buckets = static_cast<uint32_t>(n);
      map.owner.assign(map.buckets, 0);
      covered.assign(map.buckets, false);
    } else if (w[0] == "generation" && w.size() == 2 && ParseU64(w[1], &n) && n >= 2 &&
               !has_generation) {
      map.generation = n;
      has_generation = true;
    } else if (w[0] == "shard" && w.size() == 3 && ParseU64(w[1], &n) && n <= 65535 &&
               w[2].find(',') == std::string_view::npos) {
      map.shards.push_back({static_cast<uint32_t>(n), std::string(w[2])});
    } else if (w[0] == "shard" && w.size() == 5 && ParseU64(w[1], &n) && n <= 65535 &&
               w[3] == "group") {
      ShardInfo s;
      s.id = static_cast<uint32_t>(n);
      s.group = std::string(w[4]);
      for (std::string_view rest = w[2];;) {
        const size_t comma = rest.find(',');
        s.members.emplace_back(rest.substr(0, comma));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      s.address = s.members.front();
      map.shards.push_back(std::move(s));
    } else if (w[0] == "owner" && w.size() == 3 && map.buckets > 0 && ParseU64(w[2], &m)) {
      uint32_t first = 0, last = 0;
      if (!ParseRange(w[1], map.buckets, &first, &last)) {
        return Bad(line_no, "bucket range '" + std::string(w[1]) + "' outside 0-" +
                                std::to_string(map.buckets - 1));
      }
      for (uint64_t b = first; b <= last; ++b) {
        if (covered[b]) return Bad(line_no, "bucket " + std::to_string(b) + " owned twice");
        covered[b] = true;
        map.owner[b] = static_cast<uint32_t>(std::min<uint64_t>(m, UINT32_MAX));
      }
    } else if (w[0] == "move" && (w.size() == 6 || w.size() == 7) && map.buckets > 0) {
      if (map.move) return Bad(line_no, "a second move line");
      BucketMove mv;
      uint64_t from = 0, to = 0;
      if (!ParseRange(w[1], map.buckets, &mv.first, &mv.last)) {
        return Bad(line_no, "bucket range '" + std::string(w[1]) + "' outside 0-" +
                                std::to_string(map.buckets - 1));
      }
      if (!ParseU64(w[2], &from) || !ParseU64(w[3], &to) || from > 65535 || to > 65535 ||
          !ParseU64(w[5], &mv.id) || (w.size() == 7 && !ParseU64(w[6], &mv.flipped_ms))) {
        return Bad(line_no, "expected 'move FIRST-LAST FROM TO PHASE ID [FLIPPED_MS]'");
      }
      mv.from = static_cast<uint32_t>(from);
      mv.to = static_cast<uint32_t>(to);
      if (w[4] == "prepare") {
        mv.phase = MovePhase::kPrepare;
      } else if (w[4] == "flip") {
        mv.phase = MovePhase::kFlip;
      } else if (w[4] == "copy") {
        mv.phase = MovePhase::kCopy;
      } else {
        return Bad(line_no,
                   "move phase '" + std::string(w[4]) + "', expected prepare, flip or copy");
      }
      map.move = mv;
    } else {
      return Bad(line_no, "'" + std::string(line) +
                              "' is not a buckets, generation, shard, owner or move line");
    }
  }
  if (line_no == 0) return Status::InvalidArgument("shard map: empty");
  if (map.buckets == 0) return Status::InvalidArgument("shard map: no buckets line");
  for (uint32_t b = 0; b < map.buckets; ++b) {
    if (!covered[b]) {
      return Status::InvalidArgument("shard map: bucket " + std::to_string(b) + " has no owner");
    }
  }
  RELGRAPH_RETURN_IF_ERROR(ValidateShardMap(map));
  return map;
}

Result<ShardMap> EvenShardMap(std::vector<ShardInfo> shards, uint32_t buckets) {
  std::sort(shards.begin(), shards.end(),
            [](const ShardInfo& a, const ShardInfo& b) { return a.id < b.id; });
  ShardMap map;
  map.buckets = buckets;
  map.shards = std::move(shards);
  if (!map.shards.empty() && buckets >= 1 && buckets <= kMaxBuckets) {
    const size_t n = map.shards.size();
    for (size_t i = 0; i < n; ++i) {
      const uint32_t count = static_cast<uint32_t>(buckets / n + (i < buckets % n ? 1 : 0));
      map.owner.insert(map.owner.end(), count, map.shards[i].id);
    }
  }
  RELGRAPH_RETURN_IF_ERROR(ValidateShardMap(map));
  return map;
}

}  // namespace relgraph::net
