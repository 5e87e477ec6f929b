#include "net/roles/cluster/map_file.h"

#include <charconv>
#include <string_view>

namespace relgraph {

Status SaveShardMapFile(Env* env, const std::string& dir, const net::ShardMap& map) {
  const std::string text = net::EncodeVersionedShardMap(map);
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
  auto map = net::ParseVersionedShardMap(*text);
  if (!map.ok()) return Status(Code::kCorruption, path + ": " + map.status().message());
  return map;
}

}  // namespace relgraph
