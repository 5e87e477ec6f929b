#include "engine/graph_snapshot.h"

#include "engine/clock.h"

namespace relgraph {

Status AddSliceToSnapshot(const Graph::FollowingSlice& slice, SnapshotWriter* writer) {
  size_t at = 0;
  for (size_t i = 0; i < slice.followers.size(); ++i) {
    RELGRAPH_RETURN_IF_ERROR(
        writer->Add(slice.followers[i],
                    std::span<const SnapshotEdge>(slice.edges.data() + at, slice.counts[i])));
    at += slice.counts[i];
  }
  return Status::OK();
}

Result<SnapshotInfo> WriteGraphSnapshot(Env* env, const std::string& dir, const Graph& graph,
                                        uint64_t lsn) {
  auto writer = SnapshotWriter::Create(env, dir, lsn, SystemClock::Default()->NowMs());
  if (!writer.ok()) return writer.status();
  constexpr size_t kSlice = 65536;
  for (size_t begin = 0; begin < graph.user_count(); begin += kSlice) {
    Graph::FollowingSlice slice;
    graph.CopyFollowing(begin, begin + kSlice, &slice);
    RELGRAPH_RETURN_IF_ERROR(AddSliceToSnapshot(slice, writer->get()));
  }
  return (*writer)->Finish();
}

}  // namespace relgraph
