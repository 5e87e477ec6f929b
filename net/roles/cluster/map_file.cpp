#include "net/roles/cluster/map_file.h"

#include <charconv>
#include <string_view>

namespace relgraph {
namespace {

constexpr std::string_view kMagic = "relgraph-cluster-map 1\n";

}  // namespace

Status SaveShardMapFile(Env* env, const std::string& dir, const net::ShardMap& map) {
  const std::string text = std::string(kMagic) + "version " + std::to_string(map.version) + "\n" +
                           net::EncodeShardMap(map);
  const std::string path = JoinPath(dir, kShardMapFileName);
  const std::string temp = path + ".tmp";
  auto f = env->OpenWritable(temp, /*truncate=*/true);
  if (!f.ok()) return f.status();
  Status s = (*f)->Append(text);
  if (s.ok()) s = (*f)->Sync();
  if (Status c = (*f)->Close(); s.ok()) s = c;
  if (s.ok()) s = env->Rename(temp, path);
  if (s.ok()) s = env->SyncDir(dir);
  return s;
}

Result<net::ShardMap> LoadShardMapFile(Env* env, const std::string& dir) {
  const std::string path = JoinPath(dir, kShardMapFileName);
  if (!env->Exists(path)) return Status::NotFound(path + " does not exist");
  auto text = env->ReadFile(path);
  if (!text.ok()) return text.status();
  auto bad = [&](const std::string& what) { return Status(Code::kCorruption, path + ": " + what); };
  std::string_view rest = *text;
  if (rest.substr(0, kMagic.size()) != kMagic) {
    return bad("does not start with '" + std::string(kMagic.substr(0, kMagic.size() - 1)) + "'");
  }
  rest.remove_prefix(kMagic.size());
  constexpr std::string_view kVersion = "version ";
  const size_t nl = rest.find('\n');
  uint64_t version = 0;
  if (rest.substr(0, kVersion.size()) != kVersion || nl == std::string_view::npos ||
      std::from_chars(rest.data() + kVersion.size(), rest.data() + nl, version).ptr !=
          rest.data() + nl) {
    return bad("expected 'version N' on its second line");
  }
  auto map = net::ParseShardMap(rest.substr(nl + 1));
  if (!map.ok()) return bad(map.status().message());
  map->version = version;
  return map;
}

}  // namespace relgraph
