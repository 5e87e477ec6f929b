// A tour of the Java client. Run from net/clients/java after `mvn ... package`:
//   RELGRAPH_ADDR=127.0.0.1:7707 java -cp target/classes examples/Basic.java
// With RELGRAPH_TLS_CA=ca.crt it speaks TLS, trusting that CA (README.md, "TLS").

import io.relgraph.client.ClientOptions;
import io.relgraph.client.ErrorCode;
import io.relgraph.client.Event;
import io.relgraph.client.FollowResult;
import io.relgraph.client.PageEntry;
import io.relgraph.client.PageQuery;
import io.relgraph.client.RelgraphClient;
import io.relgraph.client.RelgraphException;
import io.relgraph.client.SubscribeOptions;
import io.relgraph.client.Subscription;
import io.relgraph.client.TlsOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

public class Basic {
  public static void main(String[] args) {
    String addr = System.getenv().getOrDefault("RELGRAPH_ADDR", "127.0.0.1:7707");
    String token = System.getenv().getOrDefault("RELGRAPH_TOKEN", "");
    String ca = System.getenv().getOrDefault("RELGRAPH_TLS_CA", "");
    TlsOptions tls = ca.isEmpty() ? TlsOptions.off() : TlsOptions.caFile(Path.of(ca));
    try (RelgraphClient c = RelgraphClient.connect(ClientOptions.to(addr).withToken(token)
        .withTls(tls))) {
      System.out.println("connected to " + c.hello().server() + " " + c.hello().serverVersion());

      // Blocking calls.
      FollowResult r = c.follow(1, 2);
      System.out.println("follow 1 -> 2: created " + r.created() + ", relation " + r.relation());
      try {
        c.follow(1, 1);
      } catch (RelgraphException e) {
        System.out.println("follow 1 -> 1: " + e.code() + " (" + e.serverMessage() + ")");
        assert e.code() == ErrorCode.SELF_FOLLOW;
      }

      // Async calls: many in flight on one connection, matched by request id.
      List<CompletableFuture<FollowResult>> fs = new java.util.ArrayList<>();
      for (long fan = 10; fan < 60; fan++) fs.add(c.followAsync(fan, 2));
      CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0])).join();

      // A page iterator follows the search-after cursor.
      int n = 0;
      for (PageEntry e : c.fansAll(PageQuery.of(2, 20).withViewer(1))) {
        if (n++ < 3) System.out.println("fan " + e.user() + " at " + e.ts() + ", viewer: " + e.viewerRelation());
      }
      System.out.println("user 2 has " + n + " fans; counts " + c.counts(2));

      // The change stream, from LSN 1 (a server with a data directory), resuming by itself.
      try (Subscription s = c.subscribe(SubscribeOptions.fromLsn(1))) {
        for (int i = 0; i < 3; i++) {
          Event e = s.next(Duration.ofSeconds(2));
          if (e == null) break;
          System.out.println("event " + e);
        }
      } catch (RelgraphException e) {
        System.out.println("no change stream here: " + e.getMessage());
      }
    }
  }
}
