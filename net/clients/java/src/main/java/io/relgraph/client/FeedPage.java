package io.relgraph.client;
import java.util.List;
/** A page of posts, newest first; next is null exactly when no more follow. */
public record FeedPage(List<Post> entries, PostCursor next) {}
