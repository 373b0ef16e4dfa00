package endpoint

import "testing"

// TestNegotiate: the answer chosen from Accept, by q values, then
// specificity, then the client's order; JSON whenever it is accepted at
// least as much as an event stream.
func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		accept    string
		media     string
		canStream bool
		stream    bool
	}{
		{"", mediaJSON, false, false},
		{"*/*", mediaJSON, false, false},
		{"application/*", mediaJSON, false, false},
		{"application/json", mediaJSON, false, false},
		{"application/graphql-response+json", mediaGraphQLResponse, false, false},
		{"APPLICATION/GRAPHQL-RESPONSE+JSON; charset=utf-8", mediaGraphQLResponse, false, false},
		{"application/graphql-response+json, application/json", mediaGraphQLResponse, false, false},
		{"application/json, application/graphql-response+json", mediaJSON, false, false},
		{"application/json;q=0.9, application/graphql-response+json", mediaGraphQLResponse, false, false},
		{"application/graphql-response+json;q=0, application/json", mediaJSON, false, false},
		{"application/graphql-response+json;q=0, */*", mediaJSON, false, false},
		{"application/graphql-response+json, */*", mediaGraphQLResponse, false, false},
		{"application/json;q=0", "", false, false},
		{"application/json;q=0, */*", mediaGraphQLResponse, false, false},
		{urqlAccept, mediaGraphQLResponse, true, false},
		{"text/event-stream", "", true, true},
		{"text/*", "", true, true},
		{"text/event-stream, application/json", mediaJSON, true, false},
		{"application/json;q=0.5, text/event-stream", mediaJSON, true, true},
		{"application/json, text/event-stream;q=0", mediaJSON, false, false},
		{"text/event-stream;q=0.5, */*;q=0.4", mediaJSON, true, true},
		{"application/json;q=1.5", "", false, false},
		{"application/json;q=x, text/event-stream", "", true, true},
		{"text/html", "", false, false},
		{"nonsense, ,;", "", false, false},
	} {
		a := negotiate(tc.accept)
		if a.media != tc.media || a.canStream != tc.canStream || a.stream != tc.stream {
			t.Errorf("negotiate(%q) = %+v; want media %q, canStream %v, stream %v", tc.accept, a, tc.media, tc.canStream, tc.stream)
		}
	}
}

const urqlAccept = "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed"
