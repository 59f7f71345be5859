package envoy

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// Validate checks a resource with go-control-plane's generated rules
// (ValidateAll, which covers nested messages but not what Any fields
// pack), then unpacks every Any inside it, at any depth, and checks each
// packed message the same way. Envoy checks the same rules and rejects
// what fails them; an Any whose type is not linked into this binary is an
// error too.
func Validate(m proto.Message) error {
	return validateRoot(m, string(m.ProtoReflect().Descriptor().FullName()))
}

type allValidator interface{ ValidateAll() error }

// validateRoot validates a resource or a message unpacked from an Any.
func validateRoot(m proto.Message, path string) error {
	var errs []error
	if v, ok := m.(allValidator); ok {
		if err := v.ValidateAll(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
	}
	forEachAny(m.ProtoReflect(), path, func(a *anypb.Any, at string) {
		inner, err := a.UnmarshalNew()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: unpacking %s: %w", at, a.GetTypeUrl(), err))
			return
		}
		if err := validateRoot(inner, at+"<"+string(inner.ProtoReflect().Descriptor().FullName())+">"); err != nil {
			errs = append(errs, err)
		}
	})
	return errors.Join(errs...)
}

// forEachAny calls f with every Any reachable from m without passing
// through another Any, and its field path.
func forEachAny(m protoreflect.Message, path string, f func(a *anypb.Any, at string)) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		f(a, path)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := path + "." + string(fd.Name())
		switch {
		case fd.IsList():
			if fd.Message() != nil {
				for i := 0; i < v.List().Len(); i++ {
					forEachAny(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", name, i), f)
				}
			}
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
					forEachAny(mv.Message(), fmt.Sprintf("%s[%v]", name, k.Interface()), f)
					return true
				})
			}
		case fd.Message() != nil:
			forEachAny(v.Message(), name, f)
		}
		return true
	})
}
