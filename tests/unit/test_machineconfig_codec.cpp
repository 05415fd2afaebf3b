#include "common/machineconfig/codec.h"
#include "common/util/strings.h"

#include <catch2/catch.hpp>

using namespace ichor;
using doc::Value;
using machineconfig::layout::Codec;
using machineconfig::layout::decode;
using machineconfig::layout::encode;

namespace {
const std::string k_pem = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----";
} // namespace

TEST_CASE("PEM: base64 in v1alpha1, the text in a document", "[machineconfig][codec]") {
    CHECK(encode(Codec::Pem, util::base64_encode(k_pem + "\n")) == k_pem);
    CHECK(encode(Codec::Pem, "not base64!") == "not base64!");
    CHECK(decode(Codec::Pem, k_pem) == k_pem);  // read back as the text, which drift compares
    CHECK(encode(Codec::PemKey, "").is_null()); // a worker's CA has no key
    CHECK(encode(Codec::Pem, "") == "");
    Value list = Value::array({Value{{"crt", util::base64_encode(k_pem)}}, Value{{"x", 1}}});
    CHECK(encode(Codec::PemList, list) == Value::array({k_pem}));
    CHECK(decode(Codec::PemList, Value::array({k_pem, Value{{"cert", "c"}}})) ==
          Value::array({Value{{"crt", k_pem}}, Value{{"crt", "c"}}}));
    CHECK(encode(Codec::PemList, "x").is_null());
}

TEST_CASE("the install disk as a CEL match", "[machineconfig][codec]") {
    CHECK(encode(Codec::DevPath, "/dev/sda") == "disk.dev_path == \"/dev/sda\"");
    CHECK(decode(Codec::DevPath, "disk.dev_path == \"/dev/sda\"") == "/dev/sda");
    CHECK(decode(Codec::DevPath, "disk.size > 10u * GB").is_null());
    CHECK(decode(Codec::Cel, "disk.size > 10u * GB") == "disk.size > 10u * GB");
    CHECK(decode(Codec::Cel, "disk.dev_path == \"/dev/sda\"").is_null());
    CHECK(encode(Codec::Cel, "anything").is_null()); // v1alpha1 has no CEL selector
}

TEST_CASE("the encryption secret: one provider each, a digest stays itself",
          "[machineconfig][codec]") {
    Value box = encode(Codec::Secretbox, "s");
    CHECK(box.dump() == R"({"resources":[{"providers":[{"secretbox":{"keys":[{"name":"key1",)"
                        R"("secret":"s"}]}}],"resources":["secrets"]}]})");
    CHECK(decode(Codec::Secretbox, box) == "s");
    CHECK(decode(Codec::Aescbc, box).is_null());
    CHECK(decode(Codec::Aescbc, encode(Codec::Aescbc, "a")) == "a");
    CHECK(decode(Codec::Secretbox, encode(Codec::Aescbc, "a")).is_null());
    CHECK(decode(Codec::Secretbox, doc::to_yaml(box)) == "s"); // given as YAML text
    const std::string digest = util::sha256_digest(box.dump());
    CHECK(decode(Codec::Secretbox, digest) == digest);
    CHECK(decode(Codec::Aescbc, digest).is_null());
    CHECK(machineconfig::layout::wraps_secret(Codec::Secretbox));
    CHECK(machineconfig::layout::wraps_secret(Codec::Aescbc));
    CHECK_FALSE(machineconfig::layout::wraps_secret(Codec::Pem));
}

TEST_CASE("an EncryptionConfiguration in a generated form or in its owner's",
          "[machineconfig][codec]") {
    using machineconfig::layout::generated_encryption;
    CHECK(generated_encryption(encode(Codec::Secretbox, "s")));
    CHECK(generated_encryption(encode(Codec::Aescbc, "a")));
    // Talos's own generator (machinery v1.14.1 config/generate/kubernetes.go): key2, and an
    // aescbc secret as a second secretbox key, key1
    auto talos = doc::parse_one(R"({"resources":[{"resources":["secrets"],"providers":[
        {"secretbox":{"keys":[{"name":"key2","secret":"s"}]}},
        {"secretbox":{"keys":[{"name":"key1","secret":"a"}]}}]}]})",
                                "talos");
    REQUIRE(talos.ok());
    CHECK(generated_encryption(*talos));
    Value identity = *talos;
    identity["resources"][0]["providers"].push_back(Value{{"identity", Value::object()}});
    CHECK_FALSE(generated_encryption(identity));
    Value renamed = encode(Codec::Secretbox, "s");
    renamed["resources"][0]["providers"][0]["secretbox"]["keys"][0]["name"] = "mine";
    CHECK_FALSE(generated_encryption(renamed));
    Value more = encode(Codec::Secretbox, "s");
    more["resources"][0]["resources"].push_back("configmaps");
    CHECK_FALSE(generated_encryption(more));
    Value two_keys = encode(Codec::Secretbox, "s");
    two_keys["resources"][0]["providers"][0]["secretbox"]["keys"].push_back(
        Value{{"name", "key2"}, {"secret", "t"}});
    CHECK_FALSE(generated_encryption(two_keys));
    for (const Value& odd : {Value(), Value("text"), Value::object(), Value::array({1}),
                             Value{{"resources", "x"}}, Value{{"resources", Value::array({1})}}}) {
        CHECK_FALSE(generated_encryption(odd));
    }
    // the owner's form still says which key it holds first
    CHECK(decode(Codec::Secretbox, identity) == "s");
}

TEST_CASE("a mirror: overridePath once in v1alpha1, on each endpoint in a document",
          "[machineconfig][codec]") {
    Value m = Value{{"endpoints", Value::array({"https://a", "https://b"})},
                    {"overridePath", true},
                    {"skipFallback", true}};
    Value d = encode(Codec::Mirror, m);
    CHECK(d ==
          Value{{"endpoints", Value::array({Value{{"url", "https://a"}, {"overridePath", true}},
                                            Value{{"url", "https://b"}, {"overridePath", true}}})},
                {"skipFallback", true}});
    CHECK(decode(Codec::Mirror, d) == m);
    Value plain = encode(Codec::Mirror, Value{{"endpoints", Value::array({"https://a"})}});
    CHECK(plain == Value{{"endpoints", Value::array({Value{{"url", "https://a"}}})}});
    CHECK(decode(Codec::Mirror, Value{{"endpoints", Value::array({"https://s"})}}) ==
          Value{{"endpoints", Value::array({"https://s"})}});
}

TEST_CASE("the other codecs", "[machineconfig][codec]") {
    CHECK(encode(Codec::Negated, true) == false);
    CHECK(decode(Codec::Negated, false) == true);
    CHECK(decode(Codec::Negated, "yes").is_null());
    CHECK(decode(Codec::Url, Value{{"url", "https://e:6443"}}) == "https://e:6443");
    CHECK(decode(Codec::Url, "https://e:6443") == "https://e:6443");
    CHECK(encode(Codec::Same, Value{{"a", 1}}) == Value{{"a", 1}});
}
