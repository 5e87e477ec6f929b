package io.relgraph.client;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for relgraph-cli --json: objects (as LinkedHashMap), arrays, strings without
 * unicode escapes beyond \\uXXXX, integers (as BigInteger), true, false, null.
 */
final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    Json j = new Json(text.trim());
    Object v = j.value();
    if (j.i != j.s.length()) throw new IllegalArgumentException("trailing JSON: " + text);
    return v;
  }

  private Object value() {
    char c = s.charAt(i);
    switch (c) {
      case '{': {
        Map<String, Object> m = new LinkedHashMap<>();
        i++;
        if (s.charAt(i) == '}') {
          i++;
          return m;
        }
        while (true) {
          String k = (String) value();
          expect(':');
          m.put(k, value());
          if (s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect('}');
          return m;
        }
      }
      case '[': {
        List<Object> l = new ArrayList<>();
        i++;
        if (s.charAt(i) == ']') {
          i++;
          return l;
        }
        while (true) {
          l.add(value());
          if (s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect(']');
          return l;
        }
      }
      case '"': {
        StringBuilder b = new StringBuilder();
        i++;
        while (s.charAt(i) != '"') {
          char x = s.charAt(i++);
          if (x == '\\') {
            char e = s.charAt(i++);
            switch (e) {
              case 'n': b.append('\n'); break;
              case 't': b.append('\t'); break;
              case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
              default: b.append(e);
            }
          } else {
            b.append(x);
          }
        }
        i++;
        return b.toString();
      }
      default:
        if (s.startsWith("true", i)) {
          i += 4;
          return Boolean.TRUE;
        }
        if (s.startsWith("false", i)) {
          i += 5;
          return Boolean.FALSE;
        }
        if (s.startsWith("null", i)) {
          i += 4;
          return null;
        }
        int start = i;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '-')) i++;
        if (start == i) throw new IllegalArgumentException("bad JSON at " + i + ": " + s);
        return new BigInteger(s.substring(start, i));
    }
  }

  private void expect(char c) {
    if (s.charAt(i) != c) throw new IllegalArgumentException("expected " + c + " at " + i + ": " + s);
    i++;
  }
}
