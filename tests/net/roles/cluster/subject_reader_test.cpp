// The message-get request and reply (net/roles/cluster/subject_reader.h): replies as
// nats-server writes them, errors, and base64 against known encodings.
#include "net/roles/cluster/subject_reader.h"

#include <doctest.h>

#include <random>

namespace relgraph {
namespace {

TEST_CASE("subject reader: the request names the sequence and the subject") {
  CHECK(MsgGetRequest(42, "relgraph_cluster.shard.3") ==
        R"({"seq":42,"next_by_subj":"relgraph_cluster.shard.3"})");
}

TEST_CASE("subject reader: a reply's sequence, subject and data") {
  auto m = ParseMsgGetReply(
      R"({"type":"io.nats.jetstream.api.v1.stream_msg_get_response","message":{"subject":"a.shard.2","seq":1234,"hdrs":"TkFUUy8xLjANCk5hdHMtTXNnLUlkOiAxPjI6NS01DQoNCg==","data":"AAECAwRiYXI=","time":"2026-11-27T19:00:00.123Z"}})");
  REQUIRE(m.ok());
  CHECK(m->seq == 1234);
  CHECK(m->subject == "a.shard.2");
  CHECK(m->data == std::string("\x00\x01\x02\x03\x04"
                               "bar",
                               8));
}

TEST_CASE("subject reader: no message is kNotFound, other errors kUnavailable") {
  auto none = ParseMsgGetReply(
      R"({"type":"io.nats.jetstream.api.v1.stream_msg_get_response","error":{"code":404,"err_code":10037,"description":"no message found"}})");
  CHECK(none.status().code() == Code::kNotFound);
  auto other = ParseMsgGetReply(
      R"({"type":"x","error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}})");
  CHECK(other.status().code() == Code::kUnavailable);
  CHECK(other.status().message().find("temporarily unavailable") != std::string::npos);
}

TEST_CASE("subject reader: a reply without a sequence or with bad base64 is refused") {
  CHECK(ParseMsgGetReply(R"({"message":{"subject":"a","data":"AA=="}})").status().code() ==
        Code::kInvalidArgument);
  CHECK(ParseMsgGetReply(R"({"message":{"subject":"a","seq":3,"data":"A*=="}})").status().code() ==
        Code::kInvalidArgument);
  CHECK(ParseMsgGetReply("{}").status().code() == Code::kInvalidArgument);
  auto empty = ParseMsgGetReply(R"({"message":{"subject":"a","seq":3,"time":"t"}})");
  REQUIRE(empty.ok());
  CHECK(empty->data.empty());
}

TEST_CASE("subject reader: base64 decodes what an encoder wrote, of every length") {
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::mt19937_64 rng(7);
  for (int n = 0; n < 200; ++n) {
    std::string bytes(static_cast<size_t>(n), '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::string encoded;  // a plain reference encoder
    for (size_t i = 0; i < bytes.size(); i += 3) {
      uint32_t g = static_cast<uint8_t>(bytes[i]) << 16;
      if (i + 1 < bytes.size()) g |= static_cast<uint8_t>(bytes[i + 1]) << 8;
      if (i + 2 < bytes.size()) g |= static_cast<uint8_t>(bytes[i + 2]);
      encoded += alphabet[(g >> 18) & 63];
      encoded += alphabet[(g >> 12) & 63];
      encoded += i + 1 < bytes.size() ? alphabet[(g >> 6) & 63] : '=';
      encoded += i + 2 < bytes.size() ? alphabet[g & 63] : '=';
    }
    std::string decoded;
    REQUIRE(DecodeBase64(encoded, &decoded));
    CHECK(decoded == bytes);
  }
  std::string out;
  CHECK(DecodeBase64("Zm9vYmFy", &out));
  CHECK(out == "foobar");
  CHECK_FALSE(DecodeBase64("Zm9", &out));
  CHECK_FALSE(DecodeBase64("Z=9v", &out));
}

}  // namespace
}  // namespace relgraph
