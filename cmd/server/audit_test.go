package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// auditDir holds the graphql-http audit: package.json pins the npm
// package, .ci/run installs it (npm ci), audit.mjs runs it.
const auditDir = "testdata/graphql-http"

// TestGraphQLOverHTTPAudit runs the graphql-http package's auditServer,
// the GraphQL over HTTP specification's conformance audits, against the
// real server with a valid token, and requires no warning and no error.
func TestGraphQLOverHTTPAudit(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(auditDir, "node_modules", "graphql-http", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the audit needs node and npm ci in %s (.ci/run installs them): %v", auditDir, err)
		}
		t.Skipf("the audit needs node and `npm ci --prefix cmd/server/testdata/graphql-http`: %v", err)
	}

	base, token := demoServer(t, map[string]string{"DATABASE_URL": "sqlite://" + filepath.Join(t.TempDir(), "configurator.db")})

	cmd := exec.Command(node, "audit.mjs", base+"/graphql", token)
	cmd.Dir = auditDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node audit.mjs: %v\n%s", err, out)
	}
	var results []struct {
		ID, Name, Status, Reason string
		Response                 struct {
			Status      int
			ContentType string
			Body        string
		}
	}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("audit output is not JSON: %v\n%s", err, out)
	}
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
		switch r.Status {
		case "ok":
		case "notice":
			t.Logf("notice: %s: %s", r.Name, r.Reason)
		default:
			t.Errorf("%s %s: %s: %s\n  answer: %d %s %s", r.Status, r.ID, r.Name, r.Reason, r.Response.Status, r.Response.ContentType, r.Response.Body)
		}
	}
	if len(results) < 50 {
		t.Errorf("the audit ran %d checks; want the whole suite", len(results))
	}
	t.Logf("graphql-http audit: %d checks: %v", len(results), counts)
}
