package awsemu_test

import (
	"io"
	"net/http"
	"testing"
)

// send sends req and returns the answer's status and whole body; a request that cannot be sent,
// or an answer that cannot be read, fails the test.
func send(t *testing.T, req *http.Request) (status int, body []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// call sends an unsigned request (as the inspection endpoints take) with method and body (nil
// for none) to path on the emulator, and returns the answer's status and whole body.
func (e *env) call(t *testing.T, method, path string, body io.Reader) (status int, answer []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}
