package io.relgraph.client;
import java.util.List;
/** KNOWN_FOLLOWERS's reply: how many the viewer follows that follow the target, and the first of them. */
public record KnownFollowers(long total, List<Long> users) {}
