package io.relgraph.client;

/** One user of a page: its id, the follow time (FRIENDS: when the pair became mutual; BLOCKS, REQUESTS: the block's or request's), relation(viewer, user) when the query named a viewer, and whether the list's owner and the user follow each other. */
public record PageEntry(long user, long ts, Relation viewerRelation, boolean mutual) {}
