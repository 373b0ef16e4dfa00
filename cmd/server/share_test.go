package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/configurator/catalogue/internal/testkit"
)

// postForm sends a multipart form with text fields and files to the
// running service and decodes the JSON answer into v.
func postForm(t *testing.T, url, token string, fields map[string]string, files map[string][]byte, v any) int {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, val := range fields {
		mw.WriteField(k, val)
	}
	for k, data := range files {
		fw, _ := mw.CreateFormFile(k, k+".png")
		fw.Write(data)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, url, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("POST %s = %d, not JSON: %s", url, res.StatusCode, raw)
	}
	return res.StatusCode
}

// testWrites, run by testServe against the running binary with its demo
// token, places an order with an image stored on disk and opens a share
// link in the default page, in headless Chromium.
func testWrites(t *testing.T, base, token string) {
	api := base + "/api/open-api/v1"
	t.Run("order with a snapshot", func(t *testing.T) {
		snap := testkit.PNG(30, 20, 10)
		var order struct {
			ID                   int
			ConfiguratorSnapshot string `json:"configurator_snapshot"`
		}
		status := postForm(t, api+"/orders", token, map[string]string{
			"price": "249.90", "configurator_id": "1",
			"customer_details": `{"name": "Ada"}`, "configurator_summary": `{"Frame Size": "Grand"}`,
		}, map[string][]byte{"configurator_snapshot": snap}, &order)
		if status != http.StatusCreated || !strings.HasPrefix(order.ConfiguratorSnapshot, base+"/files/") {
			t.Fatalf("POST /orders = %d %+v; want 201 and a snapshot URL under %s/files/", status, order, base)
		}
		res, err := http.Get(order.ConfiguratorSnapshot)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("X-Content-Type-Options") != "nosniff" || !bytes.Equal(got, snap) {
			t.Errorf("GET snapshot = %d %s, %d bytes; want the uploaded PNG with nosniff", res.StatusCode, res.Header.Get("Content-Type"), len(got))
		}
	})

	t.Run("share link in chromium", func(t *testing.T) {
		var opts []struct {
			ID            int
			Title         string
			Type          string
			ParameterList []struct {
				ID   int
				Name string
			} `json:"parameter_list"`
		}
		req, _ := http.NewRequest(http.MethodGet, api+"/configurator-options?per_page=-1", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&opts)
		res.Body.Close()
		overrides := map[string]any{}
		var frameSize, walnut int
		for _, o := range opts {
			for _, v := range o.ParameterList {
				switch {
				case o.Title == "Frame Size" && v.Name == "Grand":
					frameSize = o.ID
					overrides[fmt.Sprint(o.ID)] = map[string]any{"id": v.ID}
				case o.Title == "Frame Wood" && v.Name == "American Walnut":
					walnut = v.ID
					overrides[fmt.Sprint(o.ID)] = map[string]any{"id": v.ID, "material_id": 12}
				}
			}
		}
		if len(overrides) != 2 {
			t.Fatalf("demo options lack Frame Size/Grand or Frame Wood/American Walnut: %+v", opts)
		}
		raw, _ := json.Marshal(overrides)
		var env struct {
			Success bool
			Data    string
		}
		if status := postForm(t, api+"/configurator-options/set/new-options", token, map[string]string{"options": string(raw)}, nil, &env); status != 200 || !env.Success {
			t.Fatalf("POST new-options = %d %+v", status, env)
		}
		if !strings.HasPrefix(env.Data, base+"/share/") {
			t.Fatalf("share link %q is not on the default viewer %s/share/", env.Data, base)
		}

		ctx := testkit.Browser(t)
		var title, selected, material, swatch string
		err = chromedp.Run(ctx,
			chromedp.Navigate(env.Data),
			chromedp.Text("h1", &title, chromedp.ByQuery),
			chromedp.Text(fmt.Sprintf(`[data-option-id="%d"] li.selected`, frameSize), &selected, chromedp.ByQuery),
			chromedp.Text(fmt.Sprintf(`[data-variation-id="%d"] [data-field="material_id"][data-material-id="12"]`, walnut), &material, chromedp.ByQuery),
			chromedp.Evaluate(fmt.Sprintf(`getComputedStyle(document.querySelector('[data-variation-id="%d"] .swatch')).backgroundColor`, walnut), &swatch),
		)
		if err != nil {
			t.Fatalf("open %s in chromium: %v", env.Data, err)
		}
		// Material 12 of the demo is Navy Suede, #1F2A44.
		if title != "Oslo Lounge Chair" || !strings.HasPrefix(selected, "Grand") || material != "Navy Suede" || swatch != "rgb(31, 42, 68)" {
			t.Errorf("share page shows %q, selected %q, material %q with swatch %q; want Oslo Lounge Chair, Grand, Navy Suede with rgb(31, 42, 68)", title, selected, material, swatch)
		}
		for _, key := range []string{"0123456789abcdef0123456789abcdef", "nope", ""} {
			res, err := http.Get(base + "/share/" + key)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page), "Link not found") {
				t.Errorf("GET /share/%s = %d %s; want the 404 page", key, res.StatusCode, res.Header.Get("Content-Type"))
			}
		}
		var n int
		if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll('[data-option-id="%d"] li.selected').length`, frameSize), &n)); err != nil || n != 1 {
			t.Errorf("Frame Size shows %d selected variations (%v); want exactly 1", n, err)
		}
	})
}
