package io.relgraph.client;

/** PUBLISH's reply: the post's time, whether it was kept (false: older than the author's newest K), the post it pushed out (0: none). */
public record PublishResult(long ts, boolean retained, long evicted) {}
