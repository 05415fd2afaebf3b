#include "common/kube/status.h"

#include "common/doc/value.h"
#include "common/util/strings.h"

#include <map>

namespace ichor::kube {

namespace {

std::string reason_for_http(long code) {
    static const std::map<long, std::string_view> k_reasons = {
        {400, reason::k_bad_request},
        {401, reason::k_unauthorized},
        {403, reason::k_forbidden},
        {404, reason::k_not_found},
        {405, reason::k_method_not_allowed},
        {406, reason::k_not_acceptable},
        {409, reason::k_conflict},
        {410, reason::k_gone},
        {413, reason::k_request_entity_too_large},
        {415, reason::k_unsupported_media_type},
        {422, reason::k_invalid},
        {429, reason::k_too_many_requests},
        {500, reason::k_internal_error},
        {503, reason::k_service_unavailable},
        {504, reason::k_timeout},
    };
    auto it = k_reasons.find(code);
    return std::string(it == k_reasons.end() ? reason::k_unknown : it->second);
}

ErrorKind kind_for(const std::string& reason, long http) {
    static const std::map<std::string_view, ErrorKind, std::less<>> k_kinds = {
        {reason::k_unauthorized, ErrorKind::Config},
        {reason::k_forbidden, ErrorKind::Config},
        {reason::k_not_found, ErrorKind::Config},
        {reason::k_already_exists, ErrorKind::Config},
        {reason::k_conflict, ErrorKind::Config},
        {reason::k_invalid, ErrorKind::Config},
        {reason::k_bad_request, ErrorKind::Config},
        {reason::k_gone, ErrorKind::Config},
        {reason::k_expired, ErrorKind::Config},
        {reason::k_request_entity_too_large, ErrorKind::Config},
        {reason::k_too_many_requests, ErrorKind::Unreachable},
        {reason::k_service_unavailable, ErrorKind::Unreachable},
        {reason::k_server_timeout, ErrorKind::Unreachable},
        {reason::k_timeout, ErrorKind::Unreachable},
        {reason::k_internal_error, ErrorKind::Unreachable},
    };
    auto it = k_kinds.find(reason);
    if (it != k_kinds.end()) {
        return it->second;
    }
    return http >= 500 ? ErrorKind::Unreachable : ErrorKind::Internal;
}

doc::Value parse_status(std::string_view body) {
    doc::Value v = doc::Value::parse(body, nullptr, false);
    if (v.is_discarded() || !v.is_object() || doc::get_string(v, "kind") != "Status") {
        return doc::Value();
    }
    return v;
}

std::string first_line(std::string_view body) {
    body = util::trim(body);
    auto nl = body.find('\n');
    std::string line(util::trim(body.substr(0, nl)));
    if (line.size() > 200) {
        line = line.substr(0, 200) + "...";
    }
    return line;
}

struct PathParts {
    std::string group;
    std::string ns;
    std::string plural;
    std::string name;
    std::string sub;
};

// Splits /api/v1/[namespaces/NS/]PLURAL[/NAME[/SUB]] and the /apis/GROUP/VERSION/... form.
std::optional<PathParts> split_path(std::string_view path) {
    path = path.substr(0, path.find('?'));
    std::vector<std::string> seg;
    for (auto& s : util::split(path, '/')) {
        if (!s.empty()) {
            seg.push_back(s);
        }
    }
    PathParts p;
    size_t i = 0;
    if (seg.size() >= 2 && seg[0] == "api") {
        i = 2;
    } else if (seg.size() >= 3 && seg[0] == "apis") {
        p.group = seg[1];
        i = 3;
    } else {
        return std::nullopt;
    }
    if (seg.size() >= i + 3 && seg[i] == "namespaces") {
        p.ns = seg[i + 1];
        i += 2;
    }
    if (seg.size() <= i) {
        return std::nullopt;
    }
    p.plural = seg[i];
    p.name = seg.size() > i + 1 ? seg[i + 1] : "";
    p.sub = seg.size() > i + 2 ? seg[i + 2] : "";
    return p;
}

} // namespace

std::string status_reason(long http_status, std::string_view body) {
    doc::Value st = parse_status(body);
    std::string reason = st.is_null() ? "" : doc::get_string(st, "reason");
    return reason.empty() ? reason_for_http(http_status) : reason;
}

std::optional<long> retry_after_seconds(std::string_view header, std::string_view body) {
    std::string h(util::trim(header));
    if (!h.empty() && h.find_first_not_of("0123456789") == std::string::npos && h.size() < 9) {
        return std::stol(h);
    }
    doc::Value st = parse_status(body);
    const doc::Value* s = st.is_null() ? nullptr : doc::find_path(st, "details.retryAfterSeconds");
    if (s != nullptr && s->is_number_integer()) {
        return s->get<long>();
    }
    return std::nullopt;
}

std::string can_i_command(std::string_view method, std::string_view path) {
    auto p = split_path(path);
    if (!p) {
        return {};
    }
    std::string verb = method == "GET"      ? (p->name.empty() ? "list" : "get")
                       : method == "POST"   ? "create"
                       : method == "PUT"    ? "update"
                       : method == "PATCH"  ? "patch"
                       : method == "DELETE" ? (p->name.empty() ? "deletecollection" : "delete")
                                            : util::to_lower(method);
    std::string cmd = "kubectl auth can-i " + verb + " " + p->plural;
    if (!p->group.empty()) {
        cmd += "." + p->group;
    }
    if (!p->sub.empty()) {
        cmd += " --subresource=" + p->sub;
    }
    if (!p->ns.empty()) {
        cmd += " -n " + p->ns;
    }
    return cmd;
}

Error status_error(long http_status, std::string_view body, const RequestInfo& req) {
    doc::Value st = parse_status(body);
    std::string reason = status_reason(http_status, body);
    std::string message = st.is_null() ? "" : doc::get_string(st, "message");
    if (message.empty()) {
        std::string line = first_line(body);
        message = req.method + " " + req.path + ": HTTP " + std::to_string(http_status) +
                  (line.empty() ? "" : ": " + line);
    }
    std::string hint;
    if (reason == "Forbidden" || reason == "Unauthorized") {
        hint = can_i_command(req.method, req.path);
    }
    if (reason == "Unauthorized") {
        message = req.server + " rejected the credentials: " + message;
    }
    return make_error(kind_for(reason, http_status), message, hint, reason);
}

std::vector<std::string> parse_warning_header(std::string_view value) {
    std::vector<std::string> out;
    std::string_view s = util::trim(value);
    while (!s.empty()) {
        // warn-code SP warn-agent SP quoted-string [SP quoted-date]
        auto sp1 = s.find(' ');
        auto sp2 = sp1 == std::string_view::npos ? sp1 : s.find(' ', sp1 + 1);
        if (sp2 == std::string_view::npos || sp2 + 1 >= s.size() || s[sp2 + 1] != '"') {
            out.emplace_back(s);
            return out;
        }
        std::string text;
        size_t i = sp2 + 2;
        for (; i < s.size() && s[i] != '"'; ++i) {
            if (s[i] == '\\' && i + 1 < s.size()) {
                ++i;
            }
            text += s[i];
        }
        out.push_back(text);
        s = i < s.size() ? s.substr(i + 1) : std::string_view();
        // skip an optional quoted date, then the separating comma
        s = util::trim(s);
        if (!s.empty() && s.front() == '"') {
            auto close = s.find('"', 1);
            s = close == std::string_view::npos ? std::string_view() : s.substr(close + 1);
        }
        s = util::trim(s);
        if (!s.empty() && s.front() == ',') {
            s = util::trim(s.substr(1));
        }
    }
    return out;
}

} // namespace ichor::kube
