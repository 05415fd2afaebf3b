// talosconfig, read as talosctl reads it (reference/talos-api.md §2).
//
// File: the explicit path when given; else the first that exists of $TALOSCONFIG,
// $TALOS_HOME/config (when TALOS_HOME is absolute) or $HOME/.talos/config, and
// /var/run/secrets/talos.dev/config. Every error is ErrorKind::Config and names the file, and where
// it applies the context and the field.
#pragma once

#include "common/util/env.h"
#include "common/util/result.h"

#include <string>
#include <vector>

namespace ichor::talos {

// One context with its credentials decoded from base64 to PEM.
struct TalosContext {
    std::string name;
    std::vector<std::string> endpoints; // as written ("host" or "host:port")
    std::vector<std::string> nodes;
    std::string ca_pem;  // the OS CA the server certificates are checked against
    std::string crt_pem; // the client certificate
    std::string key_pem; // the client key, relabelled to "PRIVATE KEY" for OpenSSL
};

struct TalosConfig {
    std::string path;
    std::string current;                // `context:`; may be empty
    std::vector<TalosContext> contexts; // in file order; credentials decoded, not yet checked
};

// The file to read: the explicit path, or the default search above. Error when none exists:
// "no talosconfig: none of A, B exists" with a hint to pass --talosconfig.
Result<std::string> talosconfig_path(const std::string& explicit_path, const Environment& env);

// Parses the YAML text of a talosconfig read from `path`. Fields absent from a context stay
// empty; malformed YAML, a non-mapping `contexts`, or a field that is not valid base64 is an error
// ("PATH: context \"NAME\": ca: not valid base64").
Result<TalosConfig> parse_talosconfig(std::string_view text, const std::string& path);

// talosconfig_path, then read and parse.
Result<TalosConfig> load_talosconfig(const std::string& explicit_path, const Environment& env);

// The named context, or the current one when `name` is empty, with its certificate material
// checked by OpenSSL: ca, crt and key present and parsing, and the key matching crt. Errors name
// the file, the context and the field; "no such context" lists the contexts there are; an empty
// name with no `context:` is "no current context".
Result<TalosContext> select_context(const TalosConfig& config, const std::string& name);

// A checked context and the file it came from: load_talosconfig then select_context, the way
// every tool reads its --talosconfig and context.
struct LoadedContext {
    TalosContext context;
    std::string path;
};
Result<LoadedContext> load_context(const std::string& explicit_path, const std::string& name,
                                   const Environment& env);

} // namespace ichor::talos
