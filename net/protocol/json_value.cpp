#include "net/protocol/json_value.h"

namespace relgraph::net {
namespace {

constexpr int kMaxDepth = 32;

class JsonReader {
 public:
  explicit JsonReader(std::string_view in) : in_(in) {}

  Result<JsonValue> Document() {
    JsonValue v;
    RELGRAPH_RETURN_IF_ERROR(Value(&v, 0));
    SkipSpace();
    if (pos_ != in_.size()) return Fail("expected the end of the document");
    return v;
  }

 private:
  Status Fail(const std::string& what) const {
    return Status::InvalidArgument("JSON: at byte " + std::to_string(pos_) + ": " + what);
  }
  void SkipSpace() {
    while (pos_ < in_.size() &&
           (in_[pos_] == ' ' || in_[pos_] == '\t' || in_[pos_] == '\n' || in_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(std::string_view word) {
    if (in_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Status Value(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return Fail("nested deeper than " + std::to_string(kMaxDepth));
    SkipSpace();
    if (pos_ >= in_.size()) return Fail("expected a value, found the end");
    const char c = in_[pos_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v->kind = JsonValue::Kind::kString;
      return String(&v->text);
    }
    if (Consume("true")) {
      v->kind = JsonValue::Kind::kBool;
      v->boolean = true;
      return Status::OK();
    }
    if (Consume("false")) {
      v->kind = JsonValue::Kind::kBool;
      return Status::OK();
    }
    if (Consume("null")) {
      v->kind = JsonValue::Kind::kNull;
      return Status::OK();
    }
    if (c == '-' || (c >= '0' && c <= '9')) return Number(v);
    return Fail(std::string("unexpected character '") + c + "'");
  }

  Status Object(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kObject;
    ++pos_;  // '{'
    SkipSpace();
    if (Consume("}")) return Status::OK();
    for (;;) {
      SkipSpace();
      if (pos_ >= in_.size() || in_[pos_] != '"') return Fail("expected a member name");
      std::string name;
      RELGRAPH_RETURN_IF_ERROR(String(&name));
      SkipSpace();
      if (!Consume(":")) return Fail("expected ':'");
      JsonValue member;
      RELGRAPH_RETURN_IF_ERROR(Value(&member, depth + 1));
      v->members.emplace_back(std::move(name), std::move(member));
      SkipSpace();
      if (Consume("}")) return Status::OK();
      if (!Consume(",")) return Fail("expected ',' or '}'");
    }
  }

  Status Array(JsonValue* v, int depth) {
    v->kind = JsonValue::Kind::kArray;
    ++pos_;  // '['
    SkipSpace();
    if (Consume("]")) return Status::OK();
    for (;;) {
      JsonValue item;
      RELGRAPH_RETURN_IF_ERROR(Value(&item, depth + 1));
      v->items.push_back(std::move(item));
      SkipSpace();
      if (Consume("]")) return Status::OK();
      if (!Consume(",")) return Fail("expected ',' or ']'");
    }
  }

  Status Number(JsonValue* v) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    Consume("-");
    const size_t first = pos_;
    const size_t whole = digits();
    if (whole == 0) return Fail("expected a digit");
    if (whole > 1 && in_[first] == '0') return Fail("a number may not start with 0");
    if (Consume(".") && digits() == 0) return Fail("expected a digit after '.'");
    if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
      ++pos_;
      if (!Consume("+")) Consume("-");
      if (digits() == 0) return Fail("expected a digit in the exponent");
    }
    v->kind = JsonValue::Kind::kNumber;
    v->text = std::string(in_.substr(start, pos_ - start));
    return Status::OK();
  }

  Result<uint32_t> Hex4() {
    if (in_.size() - pos_ < 4) return Fail("expected 4 hex digits after \\u");
    uint32_t u = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = in_[pos_++];
      u <<= 4;
      if (h >= '0' && h <= '9') {
        u |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        u |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        u |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return Fail("expected a hex digit after \\u");
      }
    }
    return u;
  }

  static void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  Status String(std::string* out) {
    ++pos_;  // '"'
    for (;;) {
      if (pos_ >= in_.size()) return Fail("unterminated string");
      const char c = in_[pos_++];
      if (c == '"') return Status::OK();
      if (static_cast<unsigned char>(c) < 0x20) return Fail("a control byte inside a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= in_.size()) return Fail("unterminated escape");
      const char e = in_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          auto cp = Hex4();
          if (!cp.ok()) return cp.status();
          uint32_t code = *cp;
          if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate: its low one follows
            if (!Consume("\\u")) return Fail("a high surrogate without its low one");
            auto low = Hex4();
            if (!low.ok()) return low.status();
            if (*low < 0xDC00 || *low > 0xDFFF) return Fail("a high surrogate without its low one");
            code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            return Fail("a low surrogate without its high one");
          }
          AppendUtf8(out, code);
          break;
        }
        default:
          return Fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::Find(std::string_view name) const {
  for (const auto& [key, value] : members) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::string_view JsonKindName(JsonValue::Kind kind) {
  constexpr std::string_view kNames[] = {"null", "boolean", "number", "string", "array", "object"};
  return kNames[static_cast<size_t>(kind)];
}

Result<JsonValue> ParseJson(std::string_view text) {
  return JsonReader(text).Document();
}

void AppendJsonString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

}  // namespace relgraph::net
