package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/apiserver/pkg/server"
	"skiff.dev/apiserver/pkg/testserver"
)

// raw sends a request with the admin's client certificate and returns the
// status code and body.
func raw(t *testing.T, ts *testserver.TestServer, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	return rawAccept(t, ts, method, path, contentType, "application/json", body)
}

// rawAccept is raw asking for the answer in accept.
func rawAccept(t *testing.T, ts *testserver.TestServer, method, path, contentType, accept string, body []byte) (int, []byte) {
	t.Helper()
	c, err := ts.HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func status(t *testing.T, body []byte) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("not a Status: %v: %s", err, body)
	}
	if s.Kind != "Status" {
		t.Fatalf("kind %q, want Status: %s", s.Kind, body)
	}
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func start(t *testing.T, customize func(*server.Options)) *testserver.TestServer {
	return testserver.Start(t, customize)
}
