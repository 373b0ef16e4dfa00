package graph_test

import (
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
)

// TestWebhookEndpointSpecialAddresses: with the strict guard
// (WEBHOOK_ALLOW_PRIVATE=false), createWebhookEndpoint and
// updateWebhookEndpoint refuse the IPv6 forms of loopback, private and
// reserved space with a BAD_REQUEST naming url and the range, and accept
// public addresses, IPv4-embedding forms of public ones included.
func TestWebhookEndpointSpecialAddresses(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		w.withEvents(t, events.NewHub(nil))
		const create = `mutation($url: String!) { createWebhookEndpoint(input: {url: $url}) { endpoint { id url } } }`
		const update = `mutation($id: ID!, $url: String!) { updateWebhookEndpoint(id: $id, input: {url: $url}) { url } }`
		var made struct {
			CreateWebhookEndpoint struct{ Endpoint struct{ ID gid } }
		}
		w.ok(t, w.dashA, create, map[string]any{"url": "https://93.184.216.34/hook"}, &made)
		id := int(made.CreateWebhookEndpoint.Endpoint.ID)
		for _, host := range []string{"::127.0.0.1", "::10.0.0.1", "::ffff:0:127.0.0.1", "2002:7f00:1::1", "fec0::1", "100::1", "2001:db8::1",
			"::ffff:169.254.169.254", "64:ff9b::7f00:1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "fe80::1%25eth0", "198.51.100.7"} {
			url := "https://[" + host + "]/hook"
			if !strings.Contains(host, ":") {
				url = "https://" + host + "/hook"
			}
			for _, op := range []struct {
				q    string
				vars map[string]any
			}{{create, map[string]any{"url": url}}, {update, map[string]any{"id": id, "url": url}}} {
				res := w.query(t, w.dashA, op.q, op.vars)
				if res.code() != "BAD_REQUEST" {
					t.Errorf("%.22s %s: %d %+v; want BAD_REQUEST", op.q, url, res.Status, res.Errors)
					continue
				}
				if field, _ := res.Errors[0].Extensions["field"].(string); field != "url" || !strings.Contains(res.Errors[0].Message, "/") {
					t.Errorf("%.22s %s: field %q, %q; want url and the range named", op.q, url, field, res.Errors[0].Message)
				}
			}
		}
		for _, url := range []string{"https://[2606:4700::1111]/hook", "https://[::ffff:93.184.216.34]/hook", "https://[2002:5db8:d822::1]/hook"} {
			if res := w.query(t, w.dashA, create, map[string]any{"url": url}); len(res.Errors) > 0 {
				t.Errorf("create %s: %+v; want it accepted", url, res.Errors)
			}
			if res := w.query(t, w.dashA, update, map[string]any{"id": id, "url": url}); len(res.Errors) > 0 {
				t.Errorf("update to %s: %+v; want it accepted", url, res.Errors)
			}
		}
	})
}
