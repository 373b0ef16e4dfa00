package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/testkit"
)

// TestWebhookMaxEndpointsSetting: WEBHOOK_MAX_ENDPOINTS reaches the
// operation that creates endpoints: with 1, an owner's second endpoint
// is a CONFLICT naming the limit.
func TestWebhookMaxEndpointsSetting(t *testing.T) {
	env := map[string]string{"ADDR": "127.0.0.1:0", "DEMO": "false", "STORAGE_URL": "file://" + t.TempDir(),
		"DATABASE_URL": "sqlite://" + filepath.Join(t.TempDir(), "configurator.db"), "WEBHOOK_MAX_ENDPOINTS": "1"}
	getenv := func(k string) string { return env[k] }
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"seed", "--demo"}, getenv, &out, &errs); code != 0 {
		t.Fatalf("seed: %d %s", code, errs.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"token", "create", "--dashboard", "--owner", "1"}, getenv, &out, &errs); code != 0 {
		t.Fatalf("token: %d %s", code, errs.String())
	}
	token := strings.TrimSpace(out.String())
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, getenv, &stdout, &stderr) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	var addr string
	for addr == "" {
		if m := listeningRE.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not listen:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	create := func() string {
		body, _ := json.Marshal(map[string]any{"query": `mutation { createWebhookEndpoint(input: {url: "https://93.184.216.34/hook"}) { endpoint { id } } }`})
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		return string(raw)
	}
	if got := create(); strings.Contains(got, `"errors"`) {
		t.Fatalf("the first endpoint: %s", got)
	}
	if got := create(); !strings.Contains(got, `"CONFLICT"`) || !strings.Contains(got, "at most 1 webhook endpoints") {
		t.Errorf("the second endpoint with WEBHOOK_MAX_ENDPOINTS=1: %s; want a CONFLICT naming the limit", got)
	}
}
