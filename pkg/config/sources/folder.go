package sources

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/files"
)

// Document is one document of a file in the configuration folder: an
// object, or why it could not be read.
type Document struct {
	schema.Decoded
}

// ResourceName keys a document by its object ("group/version/Kind/ns/name"),
// so the same object in two files is one key (the first file wins), or, if
// it could not be read, by where it is.
func (d Document) ResourceName() string {
	if d.Err != nil {
		return "unreadable:" + d.Source.String()
	}
	return d.Config.Key()
}

// Equals compares documents.
func (d Document) Equals(o Document) bool {
	return d.Source == o.Source && slices.Equal(d.Warnings, o.Warnings) && errString(d.Err) == errString(o.Err) &&
		(d.Err != nil || d.Config.Equals(o.Config))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// configFile reports whether a file of the folder holds configuration.
func configFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// FromFolder reads configuration from a folder of YAML or JSON files
// (recursively, ConfigMap mounts included), watching it for changes. Each
// document of each file is read on its own: a document that cannot be read
// is reported and skipped, and a file that cannot be split into documents
// keeps what it held before.
func FromFolder(dir string, stop <-chan struct{}, opts Options) (*Sources, error) {
	registry := opts.registry()
	docs, err := files.NewFolderCollectionWithOptions(dir, func(path string, data []byte) ([]Document, error) {
		if !configFile(path) {
			return nil, nil
		}
		decoded := registry.DecodeDocuments(path, data, opts.Domain)
		out := make([]Document, len(decoded))
		for i, d := range decoded {
			out[i] = Document{Decoded: d}
		}
		return out, nil
	}, stop, files.Options{Debounce: opts.Debounce, Logger: opts.logger()}, opts.collection(stop, "config/documents")...)
	if err != nil {
		return nil, fmt.Errorf("reading configuration from %s: %w", dir, err)
	}
	s := &Sources{registry: registry}
	s.unreadable = krt.NewCollection(docs, func(ctx krt.HandlerContext, d Document) *Document {
		if d.Err == nil {
			return nil
		}
		return &d
	}, opts.collection(stop, "config/unreadable")...)
	for _, sch := range registry.All() {
		if !opts.wants(sch.GVK) {
			continue
		}
		gvk := sch.GVK
		inputs := krt.NewCollection(docs, func(ctx krt.HandlerContext, d Document) *Input {
			if d.Err != nil || d.Config.GroupVersionKind != gvk {
				return nil
			}
			return &Input{Config: d.Config, Origin: d.Source.String(), Warnings: d.Warnings}
		}, opts.collection(stop, collectionName(gvk, "/inputs"))...)
		s.kinds = append(s.kinds, newKind(sch, inputs, registry, opts, stop))
	}
	return s, nil
}
