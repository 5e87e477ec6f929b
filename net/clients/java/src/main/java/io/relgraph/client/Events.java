package io.relgraph.client;
import java.util.List;
/** An EVENTS frame's body: the LSN the stream goes on from, and its events in LSN order. */
public record Events(long nextLsn, List<Event> events) {}
