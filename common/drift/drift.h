// Drift of one machine: its live configuration against a render of its cluster, normalized,
// diffed, classified by the rules table, with class A captured into one machine-layer patch and
// verified by rendering again with it. Pure: the render is a function the caller passes in.
#pragma once

#include "common/drift/diff.h"
#include "common/drift/normalize.h"
#include "common/drift/rules.h"
#include "common/util/result.h"

#include <functional>
#include <string>
#include <vector>

namespace ichor::drift {

struct Finding {
    Change change;
    Verdict verdict;
};

// A credential a capture carries outside its patch's text (registry auth, a WireGuard key, an
// OIDC client secret, ...): the patch document it belongs to (`kind` empty for v1alpha1; `name`
// for a named kind), the keys from that document's root (a list index as its decimal text), and
// the sha256 digest of the value, which is all the plan knows of it. A TalosConfigPatch carries
// it as spec.secretValues, its value in a Secret (docs/stream.md, "Credentials").
struct CapturedSecret {
    std::string kind;
    std::string name;
    std::vector<std::string> path;
    std::string digest;
};

struct Capture {
    std::string text;     // the patch without its credentials; empty when there is no change
    std::string resolved; // the same with each credential's digest in place, for the round trip
    std::vector<CapturedSecret> secrets;
};

struct Analysis {
    std::vector<Finding> findings; // every change but Ignored ones, in diff order
    std::string capture;           // the class A patch (multi-document YAML); empty when none
    std::vector<CapturedSecret> capture_secrets; // what the capture carries outside its text
    std::string capture_error; // why a capture did not round-trip, when it did not
};

// The render of the machine with an extra machine-layer patch appended (the capture).
using Rerender = std::function<Result<std::vector<doc::Value>>(const std::string& patch)>;

// Layout moves (docs/drift-rules.md, "Layout moves"): each document of the layout table that
// `rendered` writes and `live` (the node's documents) does not have, while the node holds the same
// settings in its v1alpha1 document. Only a document with one v1alpha1 home is taken: a named one
// (RegistryMirrorConfig docker.io: machine.registries.mirrors.docker.io) or one that moves or is
// due for one subtree (KubeAPIServerCAConfig: cluster.ca); never the install's (its fields come
// from the node, class -). "The same": no change of `changes` (the diff of the two fact trees)
// overlaps a path the document holds. Each move is one Change at that home, `layout` the
// document, `current` "v1alpha1", `proposed` the document; classify() gives its class.
std::vector<Change> layout_moves(const std::vector<doc::Value>& live,
                                 const std::vector<doc::Value>& rendered,
                                 const std::vector<Change>& changes, const Context& context);
// Whether normalized rendered facts hold an install disk (Context::install_disk_rendered): every
// classification of a render's changes sets it from that render.
bool renders_install_disk(const doc::Value& rendered_facts);

// What analyze worked from, kept when asked for (`worked`): the render's normalized facts and
// every change it found before classifying them (layout moves included), with the context it
// classified them under. The whole cluster's layering goes on from them instead of rendering
// and diffing each machine a second time.
struct Worked {
    doc::Value rendered_facts;
    std::vector<Change> changes;
    Context context;
};

// `live`: the node's documents, secrets already digested (machineconfig::digest_secrets);
// `rerender` is given the capture with its credentials' digests in place (Capture::resolved);
// `rendered`: the render's, secrets in the clear (they never leave this function: values of
// secret findings are digests). When there is class A drift, the capture is applied through
// `rerender`; if render + capture does not equal the live configuration on the captured paths
// (or changes another path), each class A finding becomes class C, code CaptureDoesNotRoundTrip.
// `worked`, when given, gets what analyze worked from (Worked). `live_facts`, when given, is
// normalize(live), which the caller has already.
Analysis analyze(const std::vector<doc::Value>& live, const std::vector<doc::Value>& rendered,
                 const Context& context, const Rerender& rerender, Worked* worked = nullptr,
                 const doc::Value* live_facts = nullptr);

// The machine-layer patch that turns `rendered_facts` into `live_facts` on the given class A
// changes: a changed list or a value the node lacks is deleted (`$patch: delete`) and then set,
// as Talos's merge needs; registry mirrors and registry configuration become the Registry*Config
// documents of contracts 1.12 and later. A fact that a typed document of `rendered` (the render's
// documents) holds by the layout table goes into that document, as Talos's own contract 1.14
// holds the Kubernetes settings (KubeNetworkConfig's podSubnets, KubeAPIServerConfig's
// certExtraSANs, ...): Talos refuses the v1alpha1 field beside such a document. Secret values are
// never written into the text: each is a CapturedSecret, and `resolved` holds its digest where
// the value goes (what a render that resolves it by digest applies). Empty when `changes` is.
// A class A layout move (Change::layout) deletes the render's document and sets the node's
// v1alpha1 values at the paths the document holds, as the node has them.
// `live` (the node's documents, when given) adds the typed documents the node holds its facts in:
// a fact a 1.14 document of the node holds (a SysctlConfig's params) is captured into that
// document, even when the render has none, so that the node is given back its own layout.
Capture capture(const std::vector<Change>& changes, const doc::Value& live_facts,
                const doc::Value& rendered_facts, const std::vector<doc::Value>& rendered = {},
                const std::vector<doc::Value>& live = {});

} // namespace ichor::drift
