// Package xdsclient is a small ADS client that prints what an xDS server
// sends: the logic of `controlplane xds watch`. It subscribes to one type
// URL (every resource, or the names given) over state-of-the-world or
// delta, ACKs each response and writes it as one JSON line, resources
// decoded (config distribution resources as metadata plus spec, Envoy
// resources in their proto3 JSON form), so its output can go through jq.
package xdsclient
