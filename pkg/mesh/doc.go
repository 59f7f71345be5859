// Package mesh is meshcp's mesh configuration: Istio's MeshConfig
// (istio.io/api mesh/v1alpha1), built as istiod builds it, from Istio's
// defaults and a user file, validated, and watched as a krt singleton.
//
// # Defaults
//
// Default returns what istiod runs with when its mesh config is empty:
// connectTimeout 10s, trustDomain "cluster.local", rootNamespace
// "istio-system", outboundTrafficPolicy ALLOW_ANY, the prometheus,
// stackdriver and envoy extension providers, and a defaultConfig
// (DefaultProxyConfig) with discoveryAddress
// "istiod.istio-system.svc:15012", proxyAdminPort 15000, statusPort 15020,
// drainDuration 45s and so on. Each value's source (the MeshConfig and
// ProxyConfig reference, or istiod's code defaults) is noted next to it.
// Each call returns a fresh message; nothing is shared.
//
// # The file and how it merges
//
// The file is the content of the "mesh" key of Istio's ConfigMap, in YAML
// or JSON, with fields spelled as protojson and istiod accept them
// (proxyAdminPort or proxy_admin_port). Apply merges it over a base
// (normally Default()) with istiod's rules:
//
//   - a top-level field the file gives replaces the base's, even with a
//     zero value (enableTracing: false turns tracing off); a null or absent
//     field keeps the base's;
//   - defaultConfig is merged field by field: each ProxyConfig field the
//     file gives replaces the base's and the others keep their defaults;
//     proxyMetadata merges key by key and proxyHeaders field by field,
//     other nested messages are replaced whole;
//   - defaultProviders merges field by field;
//   - extensionProviders merge by name: a provider with the name of a
//     default one replaces it in place, a new name is added at the end,
//     in the file's order;
//   - trustDomainAliases is the sorted union of both lists.
//
// An unknown field is a warning, with its path ("defaultConfig.foo"), and
// is ignored. A value of the wrong type is an error with its path and what
// the field wants ("defaultConfig.proxyAdminPort: want an integer (int32),
// got string "abc""), as is giving two fields of a oneof. A file that is
// not a YAML or JSON object is an error wrapping ErrNotYAML.
//
// # Validation
//
// Validate checks a merged config as istiod's ValidateMeshConfig does, plus
// what Envoy would reject: ports in 1..65535, durations in range and in
// whole milliseconds (connectTimeout 1ms..1h, dnsRefreshRate over 1ms,
// drainDuration in whole seconds), discoveryAddress and other addresses in
// host:port form, trust domains and their aliases, the default exportTo
// lists ("*", ".", "~" or namespaces), enum values that exist (protojson
// lets any number through), locality load balancing (distribute and
// failover not both, weights adding up to 100), serviceSettings hosts,
// label selectors, client TLS settings, proxyStatsMatcher regular
// expressions. Findings are validation.Result entries with JSON field
// paths; errors reject the config, warnings do not. Deprecated fields and
// broken extension providers are warnings: istiod only logs a broken
// provider, and a provider nobody uses should not take the mesh config
// down.
//
// # Watching
//
// NewWatcher watches the file (through pkg/krt/files, so in-place writes,
// renames and ConfigMap "..data" swaps are all seen) and holds the config
// in force as a krt.Singleton[MeshConfigResource]; transformations read it
// with krt.FetchOne(ctx, watcher.AsCollection()). MeshConfigResource
// compares with proto.Equal, so a rewrite that changes nothing recomputes
// nothing.
//
// What is in force, by case:
//
//   - At start-up, a missing or empty file means Istio's defaults, and so
//     does a file that Apply rejects: the control plane starts either way,
//     and the log, the metrics and Status say why.
//   - At run time, a file that Apply rejects changes nothing: the last
//     good config stays in force (or the defaults, if the file was never
//     good), the rejection is logged, meshcp_mesh_config_valid drops to 0
//     and meshcp_mesh_config_rejected_loads_total counts it. Fixing the
//     file brings the gauge back to 1.
//   - A file removed at run time brings the defaults back, as in istiod:
//     no file means no overrides.
//
// Status and DebugHandler (for /debug/mesh) show the config in force in
// protojson, the file's path, where the config comes from and why, when
// the file was last loaded and read, the last rejection with the path of
// each field at fault, and the warnings.
package mesh
