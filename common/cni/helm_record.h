// Helm release records: the Secrets Helm's storage driver writes for each revision of a release
// (type helm.sh/release.v1, named sh.helm.release.v1.<release>.v<revision>, in the release's
// namespace). Its data.release holds Helm's encoding, base64 of gzip of the release JSON, and the
// Kubernetes API adds its own base64 of Secret data: so base64, base64, gunzip, JSON. Pure.
//
// Bounded (docs/cni.md, "Limits"): an encoded text longer than max_encoded_bytes, or a gzip
// stream that inflates past max_inflated_bytes, is refused before more is decoded; the JSON is read
// with the suite's reader limits (common/doc/limits.h) and max_inflated_bytes as the document size.
// zlib inflates; it is linked already, through libcurl.
//
// Errors are ErrorKind::Config (the object is the cluster's and malformed); code "InputLimit" for
// a limit, "HelmRecord" for anything that is not a Helm release. Messages name the Secret.
#pragma once

#include "common/doc/value.h"
#include "common/util/result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ichor::cni {

struct RecordLimits {
    // Helm's text (the Secret's data.release once the API's base64 is undone). The apiserver
    // stores a Secret of at most 1 MiB of data, so anything longer did not come from an apiserver;
    // the API's base64 of it is bounded at 4/3 of this before it is decoded.
    std::size_t max_encoded_bytes = 1u << 20;
    // Cilium's records (chart templates, values and the rendered manifest) inflate to a few MiB;
    // 16 MiB leaves room for larger charts and refuses a gzip bomb (gzip reaches about 1000:1)
    // long before it fills memory.
    std::size_t max_inflated_bytes = 16u << 20;
};

inline constexpr RecordLimits k_record_limits{};

struct HelmRelease {
    std::string secret_name;    // metadata.name of the record ("" when decoded from bytes)
    std::string name;           // the release name
    std::string namespace_name; // the release namespace
    std::int64_t revision = 0;
    std::string status; // info.status: deployed, superseded, failed, ...
    std::string chart_name;
    std::string chart_version;
    std::string app_version;
    doc::Value config = doc::Value::object(); // the user-supplied values (helm get values)

    // True when the release carries user values (config is a non-empty map).
    [[nodiscard]] bool has_values() const { return config.is_object() && !config.empty(); }
};

// True for a Secret of type helm.sh/release.v1 (an object without kind, as in an API list's
// items, counts as a Secret).
bool is_release_secret(const doc::Value& secret);

// Inflates a gzip stream, refusing one that inflates past `max_bytes` or is not gzip. `source`
// names the input in the error.
Result<std::string> gunzip(std::string_view data, std::size_t max_bytes, std::string_view source);

// Decodes Helm's encoding (base64 of gzip of JSON; a record written before Helm gzipped is taken
// too) into a release. `source` names the input in errors.
Result<HelmRelease> decode_release(std::string_view helm_encoded, std::string_view source,
                                   const RecordLimits& limits = k_record_limits);

// Reads a release Secret as the Kubernetes API returns it (data.release base64 of Helm's
// encoding). A Secret of another type, or without data.release, is a HelmRecord error.
Result<HelmRelease> read_release_secret(const doc::Value& secret,
                                        const RecordLimits& limits = k_record_limits);

// The current release of chart `chart` among `secrets` (any Secrets; others are skipped): the
// highest revision whose status is deployed, or, when none is deployed, the highest revision.
// nullopt when no record is of that chart. A record that fails to decode is an error: a release
// whose values cannot be read must not pass for a release without values.
Result<std::optional<HelmRelease>> current_release(const std::vector<doc::Value>& secrets,
                                                   std::string_view chart,
                                                   const RecordLimits& limits = k_record_limits);

} // namespace ichor::cni
