#include "engine/durable/graph_snapshot.h"

#include "engine/durable/graph_image_loader.h"
#include "engine/graph/clock.h"

namespace relgraph {

Result<SnapshotInfo> WriteGraphSnapshot(Env* env, const std::string& dir, const Graph& graph,
                                        uint64_t lsn) {
  auto writer =
      SnapshotWriter::Create(env, dir, lsn, SystemClock::Default()->NowMs(),
                             SnapshotLayout::kGraphImage, SnapshotCompression::kBackground);
  if (!writer.ok()) return writer.status();
  (*writer)->SetImageCounts(graph.image_users(), graph.image_edges());
  constexpr size_t kSlice = 65536;
  constexpr uint64_t kSliceEntries = 1 << 20;
  std::string records;
  for (size_t begin = 0; begin < graph.image_users(); begin += kSlice) {
    records.clear();
    graph.AppendImageIds(begin, begin + kSlice, &records);
    RELGRAPH_RETURN_IF_ERROR(AddImageRecords(records, writer->get()));
  }
  for (size_t next = 0; next < graph.image_users();) {
    records.clear();
    next = graph.AppendImageLists(next, graph.image_users(), kSliceEntries, &records);
    RELGRAPH_RETURN_IF_ERROR(AddImageRecords(records, writer->get()));
  }
  return (*writer)->Finish();
}

}  // namespace relgraph
