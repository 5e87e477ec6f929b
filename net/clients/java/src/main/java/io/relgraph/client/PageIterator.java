package io.relgraph.client;

import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * Every entry of a list from a first query on, fetching page after page with the search-after
 * cursor of the previous one (stable while the list changes) until a page has no next cursor.
 * Blocking; errors are thrown by {@link #hasNext()}. Belongs to one thread at a time.
 */
public final class PageIterator<E> implements Iterator<E>, Iterable<E> {
  /** One page: its entries, and the fetch of the next one (null at the end). */
  private record Step<E>(List<E> entries, java.util.function.Supplier<Step<E>> next) {}

  private java.util.function.Supplier<Step<E>> fetch;
  private List<E> page = List.of();
  private int at;
  private long pages;

  private PageIterator(java.util.function.Supplier<Step<E>> first) {
    this.fetch = first;
  }

  static PageIterator<PageEntry> users(PageQuery q, Function<PageQuery, Page> call) {
    return new PageIterator<>(userStep(q, call));
  }

  private static java.util.function.Supplier<Step<PageEntry>> userStep(PageQuery q,
      Function<PageQuery, Page> call) {
    return () -> {
      Page p = call.apply(q);
      return new Step<>(p.entries(),
          p.next() == null ? null : userStep(q.withOffset(0).withAfter(p.next()), call));
    };
  }

  static PageIterator<Post> posts(FeedQuery q, Function<FeedQuery, FeedPage> call) {
    return new PageIterator<>(postStep(q, call));
  }

  private static java.util.function.Supplier<Step<Post>> postStep(FeedQuery q,
      Function<FeedQuery, FeedPage> call) {
    return () -> {
      FeedPage p = call.apply(q);
      return new Step<>(p.entries(), p.next() == null ? null : postStep(q.withAfter(p.next()), call));
    };
  }

  @Override
  public boolean hasNext() {
    while (at == page.size()) {
      if (fetch == null) return false;
      Step<E> s = fetch.get();
      pages++;
      page = s.entries();
      at = 0;
      fetch = s.next();
    }
    return true;
  }

  @Override
  public E next() {
    if (!hasNext()) throw new NoSuchElementException();
    return page.get(at++);
  }

  /** Pages fetched so far. */
  public long pages() {
    return pages;
  }

  @Override
  public Iterator<E> iterator() {
    return this;
  }
}
