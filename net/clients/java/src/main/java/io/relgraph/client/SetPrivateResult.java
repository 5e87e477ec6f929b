package io.relgraph.client;

/** SET_PRIVATE's reply: whether the account changed, the pending requests approved by going public, and the change's time (0 when nothing changed). */
public record SetPrivateResult(boolean changed, long approved, long ts) {}
