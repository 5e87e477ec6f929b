package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.relgraph.client.ClusterRetry.Step;
import org.junit.jupiter.api.Test;

/** What the cluster client does after each kind of failure (docs/cluster.md, "Clients without NATS"). */
class ClusterRetryTest {
  static RelgraphException server(ErrorCode code, String message) {
    return new RelgraphException(code.code, 0, message, null);
  }

  @Test
  void movedRereadsTheMapAndMovingWaits() {
    for (boolean grouped : new boolean[] {false, true}) {
      assertEquals(Step.REFRESH_MAP, ClusterRetry.next(Opcode.FOLLOW, server(ErrorCode.MOVED, ""), grouped));
      assertEquals(Step.WAIT_MOVING, ClusterRetry.next(Opcode.FANS, server(ErrorCode.MOVING, ""), grouped));
      assertEquals(Step.FAIL, ClusterRetry.next(Opcode.FOLLOW, server(ErrorCode.SELF_FOLLOW, ""), grouped));
      assertEquals(Step.FAIL, ClusterRetry.next(Opcode.FOLLOW, server(ErrorCode.UNAVAILABLE, "no map"), grouped));
    }
  }

  @Test
  void anUnknownOutcomeIsRetriedOnlyForRetrySafeCommands() {
    ConnectionException sent = new ConnectionException("reset", true, Opcode.FOLLOW, null);
    ConnectionException unsent = new ConnectionException("refused", false, Opcode.FOLLOW, null);
    for (boolean grouped : new boolean[] {false, true}) {
      Step retry = grouped ? Step.FIND_PRIMARY : Step.RECONNECT;
      assertEquals(retry, ClusterRetry.next(Opcode.FOLLOW, sent, grouped));
      assertEquals(retry, ClusterRetry.next(Opcode.PROMOTE, unsent, grouped));
      assertEquals(Step.FAIL, ClusterRetry.next(Opcode.PROMOTE, sent, grouped));
      assertEquals(Step.FAIL, ClusterRetry.next(Opcode.SUBSCRIBE, sent, grouped));
    }
    RelgraphException steppedDown = server(ErrorCode.UNAVAILABLE,
        "the primary stepped down (epoch 4): the write's outcome is unknown");
    assertEquals(Step.FIND_PRIMARY, ClusterRetry.next(Opcode.UNFOLLOW, steppedDown, true));
    assertEquals(Step.FAIL, ClusterRetry.next(Opcode.PROMOTE, steppedDown, true));
    assertEquals(Step.FAIL, ClusterRetry.next(Opcode.UNFOLLOW, steppedDown, false));
  }

  @Test
  void readOnlyFindsTheGroupsPrimary() {
    RelgraphException ro = server(ErrorCode.READ_ONLY, "127.0.0.1:7711");
    assertEquals(Step.FIND_PRIMARY, ClusterRetry.next(Opcode.FOLLOW, ro, true));
    assertEquals(Step.FAIL, ClusterRetry.next(Opcode.FOLLOW, ro, false));
  }
}
