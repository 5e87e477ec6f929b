package io.relgraph.client;

/** FOLLOW's and APPROVE's reply: whether the edge (or request) is new, relation(follower, followee) afterwards, the edge's (or request's) time in ms. */
public record FollowResult(boolean created, Relation relation, long followedAt) {}
