package files

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// fileState is what a collection knows about one file: a digest of the
// content it last parsed, what the last successful parse produced, and why
// the file's current content could not be used, if it could not.
type fileState[V any] struct {
	// digest identifies the content last handed to parse; valid when parsed
	// is true. Content with the same digest is not parsed again.
	digest [sha256.Size]byte
	parsed bool
	// value is the result of the last successful parse. It is kept when
	// later content cannot be read or parsed.
	value V
	// err is the problem with the current content; nil when value reflects
	// it.
	err error
}

// lastGood returns what the last successful parse produced, or the zero
// value when there is none.
func (s *fileState[V]) lastGood() V {
	if s == nil {
		var zero V
		return zero
	}
	return s.value
}

// loadFile brings prev, the state of the file at path (nil if none), up to
// date with the file's content. It returns nil when the file does not exist.
//
//   - Content that cannot be read keeps the last good value, with the error.
//   - An empty file is taken to be in the middle of being written: prev is
//     kept as it is.
//   - Content identical to what was parsed last returns prev: parse is not
//     called and nothing changes.
//   - Content that parse rejects (or panics on) keeps the last good value,
//     with the error.
func loadFile[V any](path string, prev *fileState[V], parse func(path string, data []byte) (V, error)) *fileState[V] {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &fileState[V]{value: prev.lastGood(), err: fmt.Errorf("reading %s: %w", path, err)}
	case len(data) == 0:
		if prev == nil {
			return &fileState[V]{}
		}
		return prev
	}
	digest := sha256.Sum256(data)
	if prev != nil && prev.parsed && prev.digest == digest {
		return prev
	}
	value, err := parseSafely(path, data, parse)
	if err != nil {
		return &fileState[V]{digest: digest, parsed: true, value: prev.lastGood(), err: fmt.Errorf("parsing %s: %w", path, err)}
	}
	return &fileState[V]{digest: digest, parsed: true, value: value}
}

// parseSafely calls parse, turning a panic into an error: a file that
// crashes the parser is a broken file like any other, not a broken process.
func parseSafely[V any](path string, data []byte, parse func(path string, data []byte) (V, error)) (value V, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parser panicked: %v", r)
		}
	}()
	return parse(path, data)
}
