package validation

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshcp/meshcp/pkg/config"
)

func TestHostError(t *testing.T) {
	for _, h := range []string{"*", "example.com", "*.example.com", "Reviews.Prod.svc.cluster.local", "istio.io.", "*-foo.example.com", "reviews"} {
		if msg := hostError(h); msg != "" {
			t.Errorf("hostError(%q) = %q; want valid", h, msg)
		}
	}
	for h, want := range map[string]string{
		"":                "must not be empty",
		"a..b":            "empty label",
		"foo.*.com":       "only allowed as the first label",
		"**.example.com":  "wildcard label",
		"-a.example.com":  "label \"-a\"",
		"example.123":     "must not be all digits",
		"under_score.com": "label \"under_score\"",
	} {
		if msg := hostError(h); msg == "" || !strings.Contains(msg, want) {
			t.Errorf("hostError(%q) = %q; want it to mention %q", h, msg, want)
		}
	}
}

func TestHostMatches(t *testing.T) {
	for _, tc := range []struct {
		a, b    string
		matches bool
		subset  bool
	}{
		{"a.example.com", "a.example.com", true, true},
		{"a.example.com", "*.example.com", true, true},
		{"*.example.com", "a.example.com", true, false},
		{"*.a.example.com", "*.example.com", true, true},
		{"*.com", "*.example.com", true, false},
		{"a.example.com", "b.example.com", false, false},
		{"a.example.com", "*", true, true},
		{"A.Example.com", "a.example.COM", true, true},
	} {
		if got := hostMatches(tc.a, tc.b); got != tc.matches {
			t.Errorf("hostMatches(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.matches)
		}
		if got := hostSubsetOf(tc.a, tc.b); got != tc.subset {
			t.Errorf("hostSubsetOf(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.subset)
		}
	}
}

func TestHeaderValue(t *testing.T) {
	for _, v := range []string{"", "plain", "100%%", "%HOSTNAME%", "prefix %REQ(x-id)% suffix", "%START_TIME(%Y-%m-%d)%", "a\tb"} {
		var r Result
		checkHeaderValue(&r, "p", v)
		if !r.OK() {
			t.Errorf("checkHeaderValue(%q): %v; want valid", v, r.Errors)
		}
	}
	for _, v := range []string{"100%", "%lower%", "%%%", "bad\nvalue", "%REQ(x%"} {
		var r Result
		checkHeaderValue(&r, "p", v)
		if r.OK() {
			t.Errorf("checkHeaderValue(%q) accepted it; want an error", v)
		}
	}
}

func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		d        *durationpb.Duration
		positive bool
		msg      string
	}{
		{"missing", nil, true, ""},
		{"zero where allowed", durationpb.New(0), false, ""},
		{"one millisecond", durationpb.New(time.Millisecond), true, ""},
		{"zero where positive", durationpb.New(0), true, "too short"},
		{"negative", durationpb.New(-time.Second), false, "negative"},
		{"microseconds", durationpb.New(1500 * time.Microsecond), false, "whole number of milliseconds"},
		{"malformed", &durationpb.Duration{Seconds: 1, Nanos: -5}, false, "not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Result
			if tc.positive {
				checkPositiveDuration(&r, "d", tc.d)
			} else {
				checkNonNegativeDuration(&r, "d", tc.d)
			}
			if tc.msg == "" {
				requireClean(t, r)
			} else {
				requireError(t, r, "d", tc.msg)
			}
		})
	}
}

func TestPanicBecomesError(t *testing.T) {
	res := validateSpec(cfg(&durationpb.Duration{}), "Test", namespacedMeta, func(_ config.Config, _ *durationpb.Duration, r *Result) {
		r.Warnf("spec.a", "found before the panic")
		var m map[string]int
		m["boom"]++ // a nil map write panics
	})
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0].Message, internalErrorPrefix) || res.Errors[0].Path != "spec" {
		t.Fatalf("want one internal error at spec, got %v", res.Errors)
	}
	requireWarning(t, Result{Warnings: res.Warnings}, "spec.a", "before the panic")
}
