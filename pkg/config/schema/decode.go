package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/meshcp/meshcp/pkg/config"
)

// Source says where an object was read: a file and the line its document
// starts on.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// String is "file:line".
func (s Source) String() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Decoded is one document of a file: the Config it holds, or why it could
// not be read. Documents are decoded one by one, so a bad one never keeps
// the others from being read.
type Decoded struct {
	Config   config.Config
	Source   Source
	Warnings []string
	Err      error
}

// DecodeDocuments reads every document of a YAML or JSON file (YAML
// documents are separated by "---" lines; a "kind: List" document holds
// items). Objects of namespaced kinds without a namespace are put in
// "default", as kubectl does.
func (r *Registry) DecodeDocuments(file string, data []byte, domain string) []Decoded {
	var out []Decoded
	for _, doc := range splitDocuments(data) {
		src := Source{File: file, Line: doc.contentLine}
		js, err := yaml.YAMLToJSON(doc.data)
		if err != nil {
			out = append(out, Decoded{Source: src, Err: fmt.Errorf("%s: %w", src, shiftLines(err, doc.firstLine-1))})
			continue
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // only comments
		}
		out = append(out, r.decodeJSON(js, src, domain)...)
	}
	return out
}

// decodeJSON decodes one document, or each item of a List.
func (r *Registry) decodeJSON(js []byte, src Source, domain string) []Decoded {
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
		Domain     string            `json:"domain"` // written by Config.MarshalJSON
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &head); err != nil {
		return []Decoded{{Source: src, Err: fmt.Errorf("%s: not an object: %w", src, err)}}
	}
	if head.Kind == "List" {
		var out []Decoded
		for _, item := range head.Items {
			out = append(out, r.decodeJSON(item, src, domain)...)
		}
		return out
	}
	if head.APIVersion == "" || head.Kind == "" {
		return []Decoded{{Source: src, Err: fmt.Errorf("%s: apiVersion and kind are required", src)}}
	}
	s, ok := r.ByKind(head.APIVersion, head.Kind)
	if !ok || s.ObjectType == nil {
		return []Decoded{{Source: src, Err: fmt.Errorf("%s: unsupported kind %s %s", src, head.APIVersion, head.Kind)}}
	}
	if head.Domain != "" {
		domain = head.Domain
		js = withoutField(js, "domain")
	}
	c, warnings, err := s.decodeObject(js, domain)
	if err != nil {
		return []Decoded{{Source: src, Err: fmt.Errorf("%s: %s %s: %w", src, head.Kind, objectName(js), err)}}
	}
	return []Decoded{{Config: c, Source: src, Warnings: warnings}}
}

// decodeObject decodes a document into the kind's typed object and converts
// it, exactly as objects from the API server are.
func (s *Schema) decodeObject(js []byte, domain string) (config.Config, []string, error) {
	var warnings []string
	// Field names are matched case-sensitively, as the API server does:
	// "speC" is an unknown field, not the spec. Unknown and duplicate
	// fields are warnings; the rest of the object is still read.
	obj := reflect.New(s.ObjectType.Elem()).Interface()
	strictErrs, err := kjson.UnmarshalStrict(js, obj)
	if err != nil {
		return config.Config{}, nil, err
	}
	for _, e := range strictErrs {
		warnings = append(warnings, unknownFieldWarning(e))
	}
	meta := obj.(metav1.Object)
	if meta.GetName() == "" {
		return config.Config{}, nil, errNoName
	}
	switch {
	case s.ClusterScoped && meta.GetNamespace() != "":
		warnings = append(warnings, fmt.Sprintf("metadata.namespace %q ignored: %s is cluster-scoped", meta.GetNamespace(), s.GVK.Kind))
		meta.SetNamespace("")
	case !s.ClusterScoped && meta.GetNamespace() == "":
		meta.SetNamespace("default")
	}
	c, err := s.FromObject(meta, domain)
	if err != nil {
		return config.Config{}, nil, err
	}
	// Istio's JSON decoders drop unknown spec fields silently; a typo in a
	// spec deserves the same warning as anywhere else.
	if m, ok := c.Spec.(proto.Message); ok {
		var raw struct {
			Spec json.RawMessage `json:"spec"`
		}
		if json.Unmarshal(js, &raw) == nil && len(raw.Spec) > 0 {
			strict := proto.Clone(m)
			proto.Reset(strict)
			// Only unknown fields: the typed decoder accepts forms protojson
			// does not (Go durations such as "30ms", which Istio users write).
			if err := protojson.Unmarshal(raw.Spec, strict); err != nil && strings.Contains(err.Error(), "unknown field") {
				warnings = append(warnings, "spec: "+unknownFieldWarning(err))
			}
		}
	}
	return c, warnings, nil
}

// withoutField removes a top-level field from a JSON object.
func withoutField(js []byte, field string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(js, &m) != nil {
		return js
	}
	delete(m, field)
	out, err := json.Marshal(m)
	if err != nil {
		return js
	}
	return out
}

// objectName names the object a document describes, for error messages,
// as well as can be read from it.
func objectName(js []byte) string {
	var m struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(js, &m)
	switch {
	case m.Metadata.Name == "":
		return "(unnamed)"
	case m.Metadata.Namespace == "":
		return m.Metadata.Name
	default:
		return m.Metadata.Namespace + "/" + m.Metadata.Name
	}
}

// document is one YAML document of a file, with the line it starts on and
// the line of its first content (what a user looks for), both 1-based.
type document struct {
	data        []byte
	firstLine   int
	contentLine int
}

// splitDocuments splits a file at "---" lines; documents holding nothing
// but blank lines and comments are dropped.
func splitDocuments(data []byte) []document {
	var docs []document
	var cur document
	var buf bytes.Buffer
	flush := func() {
		if cur.contentLine != 0 {
			cur.data = bytes.Clone(buf.Bytes())
			docs = append(docs, cur)
		}
		buf.Reset()
	}
	n := 0
	cur.firstLine = 1
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), len(data)+1)
	for sc.Scan() {
		n++
		line := sc.Text()
		if isSeparator(line) {
			flush()
			cur = document{firstLine: n + 1}
			continue
		}
		if trimmed := strings.TrimSpace(line); cur.contentLine == 0 && trimmed != "" && !strings.HasPrefix(trimmed, "#") {
			cur.contentLine = n
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	flush()
	return docs
}

func isSeparator(line string) bool {
	line = strings.TrimRight(line, " \t\r")
	return line == "---" || strings.HasPrefix(line, "--- #")
}

// shiftLines rewrites "line N" in a YAML error to the line in the file.
func shiftLines(err error, offset int) error {
	msg := err.Error()
	const marker = "line "
	i := strings.Index(msg, marker)
	if i < 0 || offset == 0 {
		return err
	}
	j := i + len(marker)
	k := j
	for k < len(msg) && msg[k] >= '0' && msg[k] <= '9' {
		k++
	}
	var line int
	if _, scanErr := fmt.Sscan(msg[j:k], &line); scanErr != nil {
		return err
	}
	return fmt.Errorf("%s%d%s", msg[:j], line+offset, msg[k:])
}
