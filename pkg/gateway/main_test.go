package gateway_test

import (
	"testing"

	"github.com/meshcp/meshcp/pkg/krt/krttest"
)

func TestMain(m *testing.M) { krttest.Main(m) }
