// Package examples holds the configuration the daemon serves when it is
// given none: a bookinfo-like mesh (config/) and a mesh config (mesh.yaml).
// A checkout serves the folder itself, so edits show up live; a binary run
// elsewhere serves a copy of these embedded files.
package examples

import "embed"

// FS holds mesh.yaml and the config folder.
//
//go:embed mesh.yaml config
var FS embed.FS
