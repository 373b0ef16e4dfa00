package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebhookMaxEndpointsSetting: WEBHOOK_MAX_ENDPOINTS reaches the
// operation that creates endpoints: with 1, an owner's second endpoint
// is a CONFLICT naming the limit.
func TestWebhookMaxEndpointsSetting(t *testing.T) {
	env := map[string]string{"DEMO": "false", "STORAGE_URL": "file://" + t.TempDir(),
		"DATABASE_URL": "sqlite://" + filepath.Join(t.TempDir(), "configurator.db"), "WEBHOOK_MAX_ENDPOINTS": "1"}
	cliOut(t, env, "seed", "--demo")
	token := cliOut(t, env, "token", "create", "--dashboard", "--owner", "1")
	base, _ := serveInProcess(t, env)
	create := func() string {
		body, _ := json.Marshal(map[string]any{"query": `mutation { createWebhookEndpoint(input: {url: "https://93.184.216.34/hook"}) { endpoint { id } } }`})
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return send(t, http.DefaultClient, withAuth(req, token, "")).body
	}
	if got := create(); strings.Contains(got, `"errors"`) {
		t.Fatalf("the first endpoint: %s", got)
	}
	if got := create(); !strings.Contains(got, `"CONFLICT"`) || !strings.Contains(got, "at most 1 webhook endpoints") {
		t.Errorf("the second endpoint with WEBHOOK_MAX_ENDPOINTS=1: %s; want a CONFLICT naming the limit", got)
	}
}
