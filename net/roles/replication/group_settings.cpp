#include "net/roles/replication/group_settings.h"

#include <charconv>
#include <string_view>

namespace relgraph {

Result<std::optional<GroupSettings>> LoadGroupSettings(Env* env, const std::string& dir) {
  const std::string path = JoinPath(dir, kGroupSettingsFile);
  if (!env->Exists(path)) return std::optional<GroupSettings>();
  auto text = env->ReadFile(path);
  if (!text.ok()) return text.status();
  std::string_view line = *text;
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  constexpr std::string_view kKey = "sync_replicas=";
  GroupSettings s;
  if (line.substr(0, kKey.size()) == kKey) {
    const std::string_view value = line.substr(kKey.size());
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), s.sync_replicas);
    if (ec == std::errc() && ptr == value.data() + value.size() && !value.empty()) {
      return std::optional<GroupSettings>(s);
    }
  }
  return Status::Corruption(path + ": expected one line 'sync_replicas=N', found '" +
                            std::string(line.substr(0, 64)) + "'");
}

Status SaveGroupSettings(Env* env, const std::string& dir, const GroupSettings& settings) {
  const std::string path = JoinPath(dir, kGroupSettingsFile);
  const std::string tmp = path + ".tmp";
  {
    auto file = env->OpenWritable(tmp, /*truncate=*/true);
    if (!file.ok()) return file.status();
    RELGRAPH_RETURN_IF_ERROR(
        (*file)->Append("sync_replicas=" + std::to_string(settings.sync_replicas) + "\n"));
    RELGRAPH_RETURN_IF_ERROR((*file)->Sync());
    RELGRAPH_RETURN_IF_ERROR((*file)->Close());
  }
  RELGRAPH_RETURN_IF_ERROR(env->Rename(tmp, path));
  return env->SyncDir(dir);
}

}  // namespace relgraph
