// Certificate fingerprints and organizations (common/util/pem.h), on the talos test certificates.
// The expected digests were computed independently:
//   openssl x509 -outform der | sha256sum
#include "common/util/pem.h"
#include "test_talos_fixtures.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ichor;
namespace fx = ichor::talos::fixtures;

TEST_CASE("a certificate's fingerprint is the SHA-256 of its DER", "[util]") {
    CHECK(util::certificate_fingerprint(fx::k_ca_crt) ==
          "sha256:58115f5c425cb117d531775d9a29a09d65a126bbfc0e31ed0d429ff003f42e22");
    CHECK(util::certificate_fingerprint(fx::k_client_crt) ==
          "sha256:e8d4bf2977ca8ad0ae6e5995f4d7c1f953865e4f57570f57d59a2ad474be9fbc");
}

TEST_CASE("only the first certificate of a PEM text counts", "[util]") {
    std::string both = std::string(fx::k_client_crt) + fx::k_ca_crt;
    CHECK(util::certificate_fingerprint(both) == util::certificate_fingerprint(fx::k_client_crt));
    CHECK(util::certificate_organizations(both) == std::vector<std::string>{"os:admin"});
}

TEST_CASE("text that holds no certificate has no fingerprint and no organizations", "[util]") {
    for (const char* bad :
         {"", "hello", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
          fx::k_client_key}) {
        INFO(bad);
        CHECK(util::certificate_fingerprint(bad) == std::nullopt);
        CHECK(util::certificate_organizations(bad).empty());
    }
}

TEST_CASE("the Subject O values are the Talos API roles", "[util]") {
    CHECK(util::certificate_organizations(fx::k_client_crt) ==
          std::vector<std::string>{"os:admin"});
    CHECK(util::certificate_organizations(fx::k_ca_crt) == std::vector<std::string>{"talos"});
}
