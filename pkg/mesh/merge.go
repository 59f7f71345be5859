package mesh

import (
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	meshconfig "istio.io/api/mesh/v1alpha1"

	"github.com/meshcp/meshcp/pkg/config/validation"
)

// Apply merges a mesh config file (YAML or JSON, the content of the "mesh"
// key of Istio's ConfigMap) over base, validates the result and returns it
// with what was found. base is not modified; nil means Default().
//
// The merge follows istiod (ApplyMeshConfig in istio/istio
// pkg/config/mesh): a field the file gives replaces the base's field,
// except for these, which combine with it:
//
//   - defaultConfig: each ProxyConfig field the file gives replaces the
//     base's field and the others are kept, so a file setting only
//     defaultConfig.proxyAdminPort keeps every other proxy default.
//     Within it, proxyMetadata is merged key by key and proxyHeaders field
//     by field; other nested messages (tracing, say) are replaced whole.
//   - defaultProviders: merged field by field.
//   - extensionProviders: merged by name. A provider named like one of the
//     base's replaces it in place; a new name is added after the base's, in
//     the file's order. Of two providers of the file with one name, the
//     later wins (a warning).
//   - trustDomainAliases: the union of both lists, sorted.
//
// A field given as null counts as not given. An unknown field is a warning
// (with its path) and is ignored: the rest of the file still applies. A
// value of the wrong type is an error naming the field and what it wants.
//
// The error is nil when the result has no errors (Result.OK); warnings are
// returned either way. Otherwise the returned config is nil and the error
// lists every finding as "path: message", or wraps ErrNotYAML when the
// file is not a YAML or JSON object. Apply does not panic, whatever the
// input.
func Apply(base *meshconfig.MeshConfig, file []byte) (*meshconfig.MeshConfig, validation.Result, error) {
	var res validation.Result
	if base == nil {
		base = Default()
	}
	doc, err := decode(file, &res)
	if err != nil {
		return nil, res, err
	}
	if !res.OK() {
		return nil, res, invalid(res)
	}
	out := proto.Clone(base).(*meshconfig.MeshConfig)
	merge(out, doc, &res)
	res.Merge(Validate(out))
	if !res.OK() {
		return nil, res, invalid(res)
	}
	return out, res, nil
}

// maxErrorsInMessage bounds how many findings the error of Apply spells
// out, so that a file with thousands of bad entries makes a log line, not
// a log flood. The Result has them all.
const maxErrorsInMessage = 20

// invalid is the error of a config with errors: "invalid mesh config:
// path: message; path: message".
func invalid(res validation.Result) error {
	if len(res.Errors) <= maxErrorsInMessage {
		return fmt.Errorf("invalid mesh config: %w", res.Err())
	}
	head := validation.Result{Errors: res.Errors[:maxErrorsInMessage]}
	return fmt.Errorf("invalid mesh config: %w; and %d more errors", head.Err(), len(res.Errors)-maxErrorsInMessage)
}

// merge applies doc to dst, which it owns, with the rules of Apply.
func merge(dst *meshconfig.MeshConfig, doc *document, res *validation.Result) {
	user := doc.mesh
	fields := dst.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() { // in schema order, for stable warnings
		fd := fields.Get(i)
		given, ok := doc.given[fd.JSONName()]
		if !ok {
			continue
		}
		switch fd.Name() {
		case "default_config":
			if dst.DefaultConfig == nil {
				dst.DefaultConfig = &meshconfig.ProxyConfig{}
			}
			mergeProxyConfig(dst.DefaultConfig, user.GetDefaultConfig(), asObject(given))
		case "default_providers":
			if dst.DefaultProviders == nil {
				dst.DefaultProviders = &meshconfig.MeshConfig_DefaultProviders{}
			}
			replaceGiven(dst.DefaultProviders.ProtoReflect(), user.GetDefaultProviders().ProtoReflect(), asObject(given))
		case "extension_providers":
			dst.ExtensionProviders = mergeProviders(dst.ExtensionProviders, user.GetExtensionProviders(), res)
		case "trust_domain_aliases":
			dst.TrustDomainAliases = union(dst.TrustDomainAliases, user.GetTrustDomainAliases())
		default:
			replaceField(dst.ProtoReflect(), user.ProtoReflect(), fd)
		}
	}
}

// mergeProxyConfig applies the fields of src that the file gives to dst.
func mergeProxyConfig(dst, src *meshconfig.ProxyConfig, given map[string]any) {
	d, s := dst.ProtoReflect(), src.ProtoReflect()
	fields := d.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		sub, ok := given[fd.JSONName()]
		if !ok {
			continue
		}
		switch fd.Name() {
		case "proxy_metadata":
			// istiod merges the metadata maps (mergeMap): the file adds and
			// overrides keys, it cannot remove one.
			if dst.ProxyMetadata == nil {
				dst.ProxyMetadata = map[string]string{}
			}
			maps.Copy(dst.ProxyMetadata, src.GetProxyMetadata())
		case "proxy_headers":
			// istiod keeps the base's header settings the file leaves out
			// (correctProxyHeaders).
			if dst.ProxyHeaders == nil || src.GetProxyHeaders() == nil {
				replaceField(d, s, fd)
				continue
			}
			replaceGiven(dst.ProxyHeaders.ProtoReflect(), src.ProxyHeaders.ProtoReflect(), asObject(sub))
		default:
			replaceField(d, s, fd)
		}
	}
}

// replaceGiven replaces each field of dst that given names with src's.
func replaceGiven(dst, src protoreflect.Message, given map[string]any) {
	fields := dst.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if _, ok := given[fd.JSONName()]; ok {
			replaceField(dst, src, fd)
		}
	}
}

// replaceField makes field fd of dst what it is in src, zero and empty
// values included.
func replaceField(dst, src protoreflect.Message, fd protoreflect.FieldDescriptor) {
	if src.IsValid() && src.Has(fd) {
		dst.Set(fd, src.Get(fd))
		return
	}
	dst.Clear(fd)
}

// mergeProviders merges the file's extension providers into the base's by
// name, as istiod does.
func mergeProviders(base, user []*meshconfig.MeshConfig_ExtensionProvider, res *validation.Result) []*meshconfig.MeshConfig_ExtensionProvider {
	out := slices.Clone(base)
	at := make(map[string]int, len(out)) // name -> index in out
	for i, p := range out {
		if _, dup := at[p.GetName()]; !dup {
			at[p.GetName()] = i
		}
	}
	seen := map[string]int{} // name -> index in user
	for i, p := range user {
		name := p.GetName()
		if j, dup := seen[name]; dup {
			res.Warnf(fmt.Sprintf("extensionProviders[%d].name", i),
				"duplicate name %q (also extensionProviders[%d]); the later provider replaces the earlier", name, j)
		}
		seen[name] = i
		if k, ok := at[name]; ok {
			out[k] = p
			continue
		}
		at[name] = len(out)
		out = append(out, p)
	}
	return out
}

// union returns the sorted set of the strings of a and b.
func union(a, b []string) []string {
	set := make(map[string]struct{}, len(a)+len(b))
	for _, s := range a {
		set[s] = struct{}{}
	}
	for _, s := range b {
		set[s] = struct{}{}
	}
	return slices.Sorted(maps.Keys(set))
}

// asObject returns a JSON object of the document, or an empty one.
func asObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}
