package io.relgraph.client;

import java.util.LinkedHashMap;
import java.util.Map;

/** INFO's reply: every name = value pair in the server's order; names this client does not know are kept. */
public record Info(Map<String, Long> fields) {
  public Info {
    fields = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(fields));
  }

  /** The value of a field, or -1 when the server did not send it. */
  public long get(String name) {
    Long v = fields.get(name);
    return v == null ? -1 : v;
  }
}
