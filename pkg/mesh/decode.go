package mesh

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	meshconfig "istio.io/api/mesh/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/meshcp/meshcp/pkg/config/validation"
)

// ErrNotYAML is wrapped by the error Apply returns when a file cannot be
// read as a YAML or JSON object of MeshConfig fields. Every other error
// Apply returns names the field at fault.
var ErrNotYAML = errors.New("mesh config is not a YAML or JSON object")

// document is a mesh config file read against the MeshConfig schema.
type document struct {
	// mesh holds what the file says; the fields it does not give are unset.
	mesh *meshconfig.MeshConfig
	// given is the file's content as JSON values (objects are
	// map[string]any, keyed by the fields' JSON names), without unknown
	// fields and nulls. It tells which fields the file gives, at every
	// level, including those it sets to their zero value, which the message
	// cannot tell from unset ones: `enableTracing: false` overrides the
	// default, an absent enableTracing does not.
	given map[string]any
}

// decode reads a mesh config file. Unknown fields are warnings, recorded
// in res with their path and dropped; values of the wrong type are errors,
// recorded in res with their path and what the field wants. A null value
// counts as not given, as it does in istiod. The returned error, wrapping
// ErrNotYAML, is only for a file that is not a YAML or JSON object at all;
// when res has errors the document is nil.
func decode(data []byte, res *validation.Result) (*document, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotYAML, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber() // numbers are handed to protojson as written
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotYAML, err)
	}
	if top == nil { // an empty file, or one holding only comments
		return &document{mesh: &meshconfig.MeshConfig{}, given: map[string]any{}}, nil
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the file holds %s, want an object of MeshConfig fields", ErrNotYAML, describeJSON(top))
	}

	d := decoder{res: res}
	given := d.object("", (&meshconfig.MeshConfig{}).ProtoReflect().Descriptor(), obj)
	if !res.OK() {
		return nil, nil
	}
	clean, err := json.Marshal(given)
	if err == nil {
		m := &meshconfig.MeshConfig{}
		if err = protojson.Unmarshal(clean, m); err == nil {
			return &document{mesh: m, given: given}, nil
		}
	}
	// Every value was checked on its own above; a failure here is a case
	// the checks do not know. Name the top-level fields it could be.
	res.Errorf(strings.Join(slices.Sorted(maps.Keys(given)), ","), "cannot be read: %v", err)
	return nil, nil
}

// decoder walks a file's JSON along the MeshConfig schema, checking each
// value and keeping what can be used.
type decoder struct {
	res *validation.Result
}

// object checks the fields of one JSON object against message md and
// returns the object to keep: known fields under their JSON names, values
// that protojson accepts.
func (d decoder) object(path string, md protoreflect.MessageDescriptor, obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	givenAs := map[string]string{}               // JSON name -> key as written
	oneofs := map[protoreflect.FullName]string{} // oneof -> key as written
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		p := fieldPath(path, key)
		fd := fieldByName(md, key)
		if fd == nil {
			d.res.Warnf(p, "unknown field of %s; ignored", md.Name())
			continue
		}
		v := obj[key]
		if v == nil {
			continue // null: not given
		}
		name := fd.JSONName()
		if first, dup := givenAs[name]; dup {
			d.res.Errorf(p, "is the same field as %q, given twice", first)
			continue
		}
		givenAs[name] = key
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			if other, set := oneofs[od.FullName()]; set {
				d.res.Errorf(p, "cannot be given together with %q: only one of %s may be set", other, oneofNames(od))
				continue
			}
			oneofs[od.FullName()] = key
		}
		if cv, ok := d.value(p, md, fd, v); ok {
			out[name] = cv
		}
	}
	return out
}

// value checks the value v of field fd of message md, and returns what to
// keep of it.
func (d decoder) value(path string, md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, v any) (any, bool) {
	switch {
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			d.typeError(path, "an object (each value "+want(fd.MapValue())+")", v)
			return nil, false
		}
		vd := fd.MapValue()
		out := make(map[string]any, len(obj))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ep := keyPath(path, k)
			ev := obj[k]
			switch {
			case ev == nil && !nullable(vd):
				d.typeError(ep, want(vd), ev)
			case isObject(vd):
				sub, ok := ev.(map[string]any)
				if !ok {
					d.typeError(ep, want(vd), ev)
					continue
				}
				if d.accepts(md, fd, map[string]any{k: map[string]any{}}) {
					out[k] = d.object(ep, vd.Message(), sub)
				} else {
					d.res.Errorf(ep, "invalid key %q", k)
				}
			case d.accepts(md, fd, map[string]any{k: ev}):
				out[k] = ev
			default:
				d.typeError(ep, want(vd), ev)
			}
		}
		return out, true
	case fd.IsList():
		list, ok := v.([]any)
		if !ok {
			d.typeError(path, "a list (each item "+want(fd)+")", v)
			return nil, false
		}
		out := make([]any, 0, len(list))
		for i, ev := range list {
			ep := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case ev == nil && !nullable(fd):
				d.typeError(ep, want(fd), ev)
			case isObject(fd):
				sub, ok := ev.(map[string]any)
				if !ok {
					d.typeError(ep, want(fd), ev)
					continue
				}
				out = append(out, d.object(ep, fd.Message(), sub))
			case d.accepts(md, fd, []any{ev}):
				out = append(out, ev)
			default:
				d.typeError(ep, want(fd), ev)
			}
		}
		return out, true
	case isObject(fd):
		sub, ok := v.(map[string]any)
		if !ok {
			d.typeError(path, want(fd), v)
			return nil, false
		}
		return d.object(path, fd.Message(), sub), true
	case d.accepts(md, fd, v):
		return v, true
	default:
		d.typeError(path, want(fd), v)
		return nil, false
	}
}

// accepts reports whether protojson reads v as the value of field fd of
// message md: the check for scalars, enums and well-known types, whose
// rules (ranges, enum names, duration syntax) protojson knows best.
func (d decoder) accepts(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, v any) bool {
	b, err := json.Marshal(map[string]any{fd.JSONName(): v})
	if err != nil {
		return false
	}
	return protojson.Unmarshal(b, dynamicpb.NewMessage(md)) == nil
}

func (d decoder) typeError(path, want string, got any) {
	d.res.Errorf(path, "want %s, got %s", want, describeJSON(got))
}

// fieldByName finds a field by its JSON name (proxyAdminPort) or its proto
// name (proxy_admin_port), the two spellings protojson and istiod accept.
func fieldByName(md protoreflect.MessageDescriptor, key string) protoreflect.FieldDescriptor {
	fields := md.Fields()
	if fd := fields.ByJSONName(key); fd != nil {
		return fd
	}
	return fields.ByTextName(key)
}

// isObject reports whether fd (or, for a list, its items) holds a message
// that is written as a JSON object of its fields: not a well-known type,
// which has a JSON form of its own.
func isObject(fd protoreflect.FieldDescriptor) bool {
	return fd.Message() != nil && !isWellKnown(fd.Message())
}

// nullable reports whether null is a value of fd, rather than its absence.
func nullable(fd protoreflect.FieldDescriptor) bool {
	if m := fd.Message(); m != nil {
		return m.FullName() == "google.protobuf.Value"
	}
	if e := fd.Enum(); e != nil {
		return e.FullName() == "google.protobuf.NullValue"
	}
	return false
}

func isWellKnown(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile() != nil && md.ParentFile().Package() == "google.protobuf"
}

// want says what a value of fd (one item, for a list) looks like in a file.
func want(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "true or false"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "an integer (int32)"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "an integer (int64)"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "a non-negative integer (uint32)"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "a non-negative integer (uint64)"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a number"
	case protoreflect.StringKind:
		return "a string"
	case protoreflect.BytesKind:
		return "base64-encoded bytes"
	case protoreflect.EnumKind:
		return "one of " + enumNames(fd.Enum())
	}
	md := fd.Message()
	switch md.FullName() {
	case "google.protobuf.Duration":
		return `a duration such as "10s" or "0.5s"`
	case "google.protobuf.Timestamp":
		return `an RFC 3339 timestamp such as "2024-05-01T10:00:00Z"`
	case "google.protobuf.BoolValue":
		return "true or false"
	case "google.protobuf.Int32Value", "google.protobuf.Int64Value":
		return "an integer"
	case "google.protobuf.UInt32Value", "google.protobuf.UInt64Value":
		return "a non-negative integer"
	case "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		return "a number"
	case "google.protobuf.StringValue":
		return "a string"
	case "google.protobuf.BytesValue":
		return "base64-encoded bytes"
	case "google.protobuf.Struct":
		return "an object"
	case "google.protobuf.ListValue":
		return "a list"
	case "google.protobuf.Value":
		return "a JSON value"
	}
	if isWellKnown(md) {
		return "a " + string(md.FullName())
	}
	return "an object (" + string(md.Name()) + ")"
}

// enumNames lists the names of an enum's values, as a file spells them.
func enumNames(ed protoreflect.EnumDescriptor) string {
	values := ed.Values()
	names := make([]string, values.Len())
	for i := range values.Len() {
		names[i] = strconv.Quote(string(values.Get(i).Name()))
	}
	return strings.Join(names, ", ")
}

// oneofNames lists the JSON names of a oneof's fields.
func oneofNames(od protoreflect.OneofDescriptor) string {
	fields := od.Fields()
	names := make([]string, fields.Len())
	for i := range fields.Len() {
		names[i] = fields.Get(i).JSONName()
	}
	return strings.Join(names, ", ")
}

// describeJSON names a JSON value for an error message, shortening long
// strings.
func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return "number " + shorten(string(x))
	case string:
		return "string " + strconv.Quote(shorten(x))
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func shorten(s string) string {
	const maxLen = 64
	if len(s) <= maxLen {
		return s
	}
	// Cut on a rune boundary so the quoted form stays readable.
	cut := maxLen
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// fieldPath appends a field to a path: "defaultConfig" + "proxyAdminPort".
// A name that would make the path ambiguous (empty, or holding a dot, a
// bracket, a space...) is appended quoted, in brackets: `foo["a.b"]`.
func fieldPath(parent, field string) string {
	if !isPlainName(field) {
		return parent + "[" + strconv.Quote(field) + "]"
	}
	if parent == "" {
		return field
	}
	return parent + "." + field
}

// keyPath appends a map key to a path:
// "proxyMetadata[ISTIO_META_DNS_CAPTURE]", "to[us-east/zone1/*]". A key
// that is empty or holds brackets, quotes, spaces or control characters
// is quoted: `proxyMetadata["a b"]`.
func keyPath(parent, key string) string {
	if key == "" || strings.ContainsFunc(key, func(c rune) bool {
		return c == '[' || c == ']' || c == '"' || c <= ' ' || c == 0x7f || !unicode.IsPrint(c)
	}) {
		key = strconv.Quote(key)
	}
	return parent + "[" + key + "]"
}

// isPlainName reports whether s needs no quoting in a path: letters,
// digits, '_', '-' and '/' (as in label keys).
func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '/':
		default:
			return false
		}
	}
	return true
}
