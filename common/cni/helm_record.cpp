#include "common/cni/helm_record.h"

#include "common/doc/vocabulary.h"
#include "common/util/strings.h"

#include <zlib.h>

#include <array>

namespace ichor::cni {

namespace {

using doc::Value;

constexpr std::string_view k_release_type = "helm.sh/release.v1";

Error record_error(std::string_view source, const std::string& what,
                   std::string_view code = vocab::code::k_helm_record) {
    return make_error(ErrorKind::Config, std::string(source) + ": " + what, {}, std::string(code));
}

Error limit_error(std::string_view source, const std::string& what, std::size_t limit) {
    return record_error(source, what + " (limit " + std::to_string(limit) + " bytes)",
                        std::string(vocab::code::k_input_limit));
}

bool is_gzip(std::string_view data) {
    return data.size() >= 3 && static_cast<unsigned char>(data[0]) == 0x1f &&
           static_cast<unsigned char>(data[1]) == 0x8b && static_cast<unsigned char>(data[2]) == 8;
}

std::int64_t int_of(const Value& v) {
    if (v.is_number_integer()) {
        return v.get<std::int64_t>();
    }
    return 0;
}

} // namespace

bool is_release_secret(const Value& secret) {
    // Items of an API list carry no kind, so only a kind that says otherwise disqualifies.
    return secret.is_object() && secret.value("kind", "Secret") == "Secret" &&
           secret.value("type", "") == k_release_type;
}

Result<std::string> gunzip(std::string_view data, std::size_t max_bytes, std::string_view source) {
    if (!is_gzip(data)) {
        return record_error(source, "not gzip data");
    }
    z_stream zs{};
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
        return make_error(ErrorKind::Internal, std::string(source) + ": zlib: inflateInit2 failed");
    }
    // zlib takes a non-const pointer but does not write through next_in.
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs.avail_in = static_cast<uInt>(data.size());
    std::string out;
    std::array<char, 64 * 1024> buf{};
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef*>(buf.data());
        zs.avail_out = static_cast<uInt>(buf.size());
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            std::string msg = zs.msg != nullptr ? zs.msg : "truncated stream";
            inflateEnd(&zs);
            return record_error(source, "gzip: " + msg);
        }
        std::size_t got = buf.size() - zs.avail_out;
        if (out.size() + got > max_bytes) {
            inflateEnd(&zs);
            return limit_error(source, "the release inflates past its limit", max_bytes);
        }
        out.append(buf.data(), got);
        if (rc == Z_OK && got == 0 && zs.avail_in == 0) {
            inflateEnd(&zs);
            return record_error(source, "gzip: truncated stream");
        }
    }
    inflateEnd(&zs);
    return out;
}

Result<HelmRelease> decode_release(std::string_view helm_encoded, std::string_view source,
                                   const RecordLimits& limits) {
    if (helm_encoded.size() > limits.max_encoded_bytes) {
        return limit_error(
            source, "the release is " + std::to_string(helm_encoded.size()) + " bytes encoded",
            limits.max_encoded_bytes);
    }
    auto raw = util::base64_decode(helm_encoded);
    if (!raw) {
        return record_error(source, "the release is not base64 (Helm's encoding)");
    }
    std::string json;
    if (is_gzip(*raw)) {
        auto inflated = gunzip(*raw, limits.max_inflated_bytes, source);
        if (!inflated.ok()) {
            return inflated.error();
        }
        json = std::move(*inflated);
    } else {
        json = std::move(*raw); // Helm before 3.0 GA wrote the JSON without gzip
    }
    // Helm writes JSON. Anything else is refused here rather than handed to the YAML reader,
    // which can take very long over some short garbage (found by tests/fuzz/fuzz_helm_record).
    auto first = json.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || json[first] != '{') {
        return record_error(source, "not a Helm release (not a JSON object)");
    }
    doc::Limits read_limits;
    read_limits.max_document_bytes = limits.max_inflated_bytes;
    auto parsed = doc::parse_one(json, source, read_limits);
    if (!parsed.ok()) {
        Error e = parsed.error();
        e.kind = ErrorKind::Config;
        if (e.code.empty()) {
            e.code = vocab::code::k_helm_record;
        }
        return e;
    }
    const Value& r = *parsed;
    if (!r.is_object() || !r.contains("name") || !r["name"].is_string() ||
        doc::find_path(r, "chart.metadata.name") == nullptr || !r.contains("version")) {
        return record_error(source, "not a Helm release (no name, version or chart.metadata)");
    }
    HelmRelease rel;
    rel.name = r["name"].get<std::string>();
    rel.namespace_name = doc::get_string(r, "namespace");
    rel.revision = int_of(r["version"]);
    rel.status = doc::get_string(r, "info.status");
    rel.chart_name = doc::get_string(r, "chart.metadata.name");
    rel.chart_version = doc::get_string(r, "chart.metadata.version");
    rel.app_version = doc::get_string(r, "chart.metadata.appVersion");
    if (const Value* config = doc::find_path(r, "config");
        config != nullptr && !config->is_null()) {
        if (!config->is_object()) {
            return record_error(source, "the release's config (its values) is not a map");
        }
        rel.config = *config;
    }
    return rel;
}

Result<HelmRelease> read_release_secret(const Value& secret, const RecordLimits& limits) {
    std::string name = doc::get_string(secret, "metadata.name");
    std::string source = "Secret " + doc::get_string(secret, "metadata.namespace") + "/" + name;
    if (!is_release_secret(secret)) {
        return record_error(source, "not a Helm release record (type is not helm.sh/release.v1)");
    }
    const Value* data = doc::find_path(secret, "data.release");
    if (data == nullptr || !data->is_string()) {
        return record_error(source, "no data.release");
    }
    const auto& outer = data->get_ref<const std::string&>();
    // The API's base64 is 4/3 of Helm's text; bound it before decoding either layer.
    if (outer.size() > limits.max_encoded_bytes * 4 / 3 + 4) {
        return limit_error(source, "data.release is " + std::to_string(outer.size()) + " bytes",
                           limits.max_encoded_bytes * 4 / 3 + 4);
    }
    auto helm = util::base64_decode(outer);
    if (!helm) {
        return record_error(source, "data.release is not base64");
    }
    auto rel = decode_release(*helm, source, limits);
    if (rel.ok()) {
        rel->secret_name = name;
    }
    return rel;
}

Result<std::optional<HelmRelease>> current_release(const std::vector<Value>& secrets,
                                                   std::string_view chart,
                                                   const RecordLimits& limits) {
    std::optional<HelmRelease> best;
    auto better = [](const HelmRelease& a, const HelmRelease& b) {
        bool ad = a.status == "deployed";
        bool bd = b.status == "deployed";
        return ad != bd ? ad : a.revision > b.revision;
    };
    for (const auto& s : secrets) {
        if (!is_release_secret(s)) {
            continue;
        }
        auto rel = read_release_secret(s, limits);
        if (!rel.ok()) {
            return rel.error();
        }
        if (rel->chart_name != chart) {
            continue;
        }
        if (!best || better(*rel, *best)) {
            best = std::move(*rel);
        }
    }
    return best;
}

} // namespace ichor::cni
