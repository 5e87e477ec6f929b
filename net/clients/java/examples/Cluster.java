// The Java client in cluster mode (docs/cluster.md, "Clients without NATS"). Run from
// net/clients/java after `mvn ... package`, against a cluster started as docs/cluster.md shows:
//   RELGRAPH_SEEDS=127.0.0.1:7701,127.0.0.1:7702 java -cp target/classes examples/Cluster.java

import io.relgraph.client.ClusterClient;
import io.relgraph.client.ClusterOptions;
import io.relgraph.client.KnownFollowers;
import io.relgraph.client.PageEntry;
import io.relgraph.client.PageQuery;
import io.relgraph.client.RelgraphException;
import io.relgraph.client.ShardMap;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

public class Cluster {
  public static void main(String[] args) {
    String[] seeds = System.getenv().getOrDefault("RELGRAPH_SEEDS", "127.0.0.1:7701").split(",");
    try (ClusterClient c = ClusterClient.connect(ClusterOptions.seeds(seeds)
        .withCallTimeout(Duration.ofSeconds(30)))) {
      ShardMap m = c.map();
      System.out.println(m);
      System.out.println("user 1 is on shard " + m.ownerOf(1) + ", user 2 on shard " + m.ownerOf(2));

      c.follow(1, 2);                                          // on user 1's shard
      CompletableFuture<Boolean> f = c.followAsync(3, 2)       // any number in flight
          .thenCompose(r -> c.unfollowAsync(3, 2));
      System.out.println("3 unfollowed 2: " + f.join());

      c.barrier(Duration.ofSeconds(30));                       // 2's shard has 1's follow now
      for (PageEntry e : c.fansAll(PageQuery.of(2, 100).withViewer(4))) {   // 4 may be elsewhere
        System.out.println("fan " + e.user() + ", seen by 4 as " + e.viewerRelation());
      }
      KnownFollowers k = c.knownFollowers(4, 2, 10);           // across shards too
      System.out.println("4 follows " + k.total() + " of 2's fans");

      System.out.println("shard 1 holds " + c.shard(1).info().get("edges") + " edges");
      try {
        c.await(c.call(io.relgraph.client.Opcode.INFO, new byte[0], io.relgraph.client.Codec.INFO));
      } catch (RelgraphException e) {                           // about no user: ask a shard
        System.out.println(e.getMessage());
      }
      System.out.println(c.stats());
    }
  }
}
