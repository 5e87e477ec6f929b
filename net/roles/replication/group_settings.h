// GroupSettings: the replication group's settings as this node keeps them in its data
// directory (file `replication-group`), so that they outlive the process: a primary restarted
// without --sync-replicas keeps the group's, and a replica that heard them from its primary
// keeps them when it is promoted (docs/replication.md, "Synchronous replicas").
//
// The file is one line of text, `sync_replicas=N`, replaced atomically (a temporary file,
// fsync, rename, fsync of the directory). A missing file means "never set".
//
// Thread-safety: the functions are thread-safe for distinct directories; one writer per
// directory at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "storage/env/env.h"
#include "storage/status.h"

namespace relgraph {

struct GroupSettings {
  uint32_t sync_replicas = 0;
  friend bool operator==(const GroupSettings&, const GroupSettings&) = default;
};

inline constexpr const char* kGroupSettingsFile = "replication-group";

// nullopt when the directory holds no settings; kCorruption (naming the file) for a file that
// does not parse.
Result<std::optional<GroupSettings>> LoadGroupSettings(Env* env, const std::string& dir);
// REQUIRES: `dir` exists.
Status SaveGroupSettings(Env* env, const std::string& dir, const GroupSettings& settings);

}  // namespace relgraph
