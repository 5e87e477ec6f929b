package io.relgraph.client;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The change stream's named cursors (docs/protocol.md "Named cursors"). */
public interface CursorCommands extends Calls {
  /** The consumer {@code name} has handled every change up to lsn (0: before the first). */
  default CompletableFuture<Void> ackAsync(String name, long lsn) {
    return call(Opcode.ACK, Codec.ack(name, lsn), Codec.EMPTY);
  }

  default void ack(String name, long lsn) {
    await(ackAsync(name, lsn));
  }

  default CompletableFuture<List<CursorInfo>> cursorsAsync() {
    return call(Opcode.CURSORS, Codec.empty(), Codec.CURSORS);
  }

  default List<CursorInfo> cursors() {
    return await(cursorsAsync());
  }

  default CompletableFuture<Void> deleteCursorAsync(String name) {
    return call(Opcode.DELETE_CURSOR, Codec.name(name), Codec.EMPTY);
  }

  default void deleteCursor(String name) {
    await(deleteCursorAsync(name));
  }
}
