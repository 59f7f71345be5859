package logging_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/meshcp/meshcp/pkg/logging"
)

func TestScopeLevels(t *testing.T) {
	t.Setenv("KRT_LOG_LEVEL", "debug")
	t.Setenv("LOG_LEVEL", "")
	levels, err := logging.ParseLevels("warn,xds=error")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	base := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError}) // scopes decide, not this
	for _, tc := range []struct {
		scope     string
		debug, ok bool // whether debug and warn records are written
	}{
		{"krt", true, true},      // from KRT_LOG_LEVEL
		{"xds", false, false},    // from the spec
		{"gateway", false, true}, // the spec's default
	} {
		buf.Reset()
		log := levels.Logger(base, tc.scope)
		log.Debug("d")
		log.Warn("w")
		out := buf.String()
		if strings.Contains(out, "msg=d") != tc.debug || strings.Contains(out, "msg=w") != tc.ok {
			t.Errorf("scope %s wrote %q", tc.scope, out)
		}
		if out != "" && !strings.Contains(out, "scope="+tc.scope) {
			t.Errorf("scope %s: records lack the scope attribute: %q", tc.scope, out)
		}
	}
	levels.Set("xds", slog.LevelDebug)
	buf.Reset()
	levels.Logger(base, "xds").Debug("now")
	if !strings.Contains(buf.String(), "msg=now") {
		t.Errorf("Set did not change the xds level: %q", buf.String())
	}
}

func TestParseLevelsRejectsBadInput(t *testing.T) {
	for _, spec := range []string{"krt=loud", "verbose"} {
		if _, err := logging.ParseLevels(spec); err == nil || !strings.Contains(err.Error(), "want debug, info, warn or error") {
			t.Errorf("ParseLevels(%q) error = %v", spec, err)
		}
	}
}
