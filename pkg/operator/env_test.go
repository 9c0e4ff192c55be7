package operator_test

import (
	"os"
	"testing"
)

// unsetenv removes key for the test; t.Setenv has already arranged its restoration.
func unsetenv(t *testing.T, key string) {
	t.Helper()
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
