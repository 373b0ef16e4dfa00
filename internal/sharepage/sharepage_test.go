package sharepage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/imaging"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/sharepage"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/testkit"
)

// fixture is a shared configuration served by the share page and the
// storage, as serve mounts them (/share/ and /files/).
type fixture struct {
	base, key string
	// The variations by name, and their options by title.
	variation map[string]*ent.OptionVariation
	option    map[string]*ent.ConfiguratorOption
	// The materials by name; oak's texture has a stored thumbnail, suede's
	// one on another host, chrome none.
	oak, suede, chrome *ent.Material
}

// longName is one word wider than a phone: the page must wrap it.
const longName = "Handstitchedfullgrainvegetabletannedsaddleleatherwithcontrastpiping"

// newFixture seeds a configurator of owner A (a select, a material and a
// text option; materials with and without a texture thumbnail), shares it
// with overrides through share.Links.Create as the integrator's Open API
// token would, and serves the share page and the files.
func newFixture(t *testing.T, c *ent.Client) *fixture {
	t.Helper()
	ctx := dbtest.Sys
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	files := &storage.Files{Store: storage.NewMemory(), BaseURL: srv.URL + "/files/"}
	links := share.New(srv.URL + "/share/")
	mux.Handle("/files/", http.StripPrefix("/files/", files.Handler()))
	mux.Handle("/share/", http.StripPrefix("/share/", sharepage.Handler(func(ctx context.Context, key string) (*share.Configurator, error) {
		return links.Open(ctx, c, key)
	}, c, files)))

	saved := dbtest.Must(files.SaveBytes(ctx, testkit.PNG(100, 100, 60), imaging.PNG))

	a := dbtest.NewTenant(t, c, "A", "Oslo Lounge Chair")
	conf := a.Confs[0]
	cat := dbtest.Must(c.MaterialCategory.Create().SetOwnerID(a.ID).SetTitle("Woods").Save(ctx))
	grain := dbtest.Must(c.Texture.Create().SetOwnerID(a.ID).SetName("Oak Grain").SetCategoryID(cat.ID).
		SetTextureThumbnail100(saved.URL).Save(ctx))
	nap := dbtest.Must(c.Texture.Create().SetOwnerID(a.ID).SetName("Suede Nap").SetCategoryID(cat.ID).
		SetTextureThumbnail50("https://assets.configurator.example/demo/textures/suede-nap-50.png").Save(ctx))
	f := &fixture{base: srv.URL, variation: map[string]*ent.OptionVariation{}, option: map[string]*ent.ConfiguratorOption{}}
	f.oak = dbtest.Must(c.Material.Create().SetOwnerID(a.ID).SetName("Natural Oak").SetColor("#C8A165").
		SetCategoryID(cat.ID).SetTextureID(grain.ID).Save(ctx))
	f.suede = dbtest.Must(c.Material.Create().SetOwnerID(a.ID).SetName("Navy Suede").SetColor("#1F2A44").
		SetCategoryID(cat.ID).SetTextureID(nap.ID).Save(ctx))
	f.chrome = dbtest.Must(c.Material.Create().SetOwnerID(a.ID).SetName("Polished Chrome").SetColor("#DADDE1").
		SetCategoryID(cat.ID).Save(ctx))

	type variation struct {
		name     string
		selected bool
		material *ent.Material
		text     string
	}
	for i, o := range []struct {
		title      string
		typ        configuratoroption.Type
		variations []variation
	}{
		{"Frame Size", configuratoroption.TypeSelect, []variation{{name: "Compact"}, {name: "Standard", selected: true}, {name: "Grand"}}},
		{"Frame Wood", configuratoroption.TypeMaterial, []variation{
			{name: "Oak frame", selected: true, material: f.oak},
			{name: "Suede frame", material: f.suede},
			{name: longName, material: f.oak},
		}},
		{"Engraving", configuratoroption.TypeText, []variation{{name: "Backrest Plaque", text: "Made for you"}}},
	} {
		opt := dbtest.Must(c.ConfiguratorOption.Create().SetOwnerID(a.ID).SetConfiguratorID(conf.ID).
			SetTitle(o.title).SetType(o.typ).SetPosition(i).Save(ctx))
		f.option[o.title] = opt
		for j, v := range o.variations {
			create := c.OptionVariation.Create().SetOwnerID(a.ID).SetConfiguratorOptionID(opt.ID).
				SetName(v.name).SetPosition(j).SetSelected(v.selected)
			if v.material != nil {
				create.SetMaterialID(v.material.ID).SetMaterialCategoryID(cat.ID).SetModelID(101)
			}
			if v.text != "" {
				create.SetTextValue(v.text).SetTextFontFamily("Inter").SetTextFontSize("14px").SetCustomColor(false)
			}
			f.variation[v.name] = dbtest.Must(create.Save(ctx))
		}
	}

	// The shopper picked Grand, had the long-named variation made in
	// chrome and the plaque engraved with their name.
	_, rec := dbtest.OpenAPI(t, dbtest.Tokens(c), conf.ID)
	overrides := map[string]any{
		fmt.Sprint(f.option["Frame Size"].ID): map[string]any{"id": f.variation["Grand"].ID},
		fmt.Sprint(f.option["Frame Wood"].ID): map[string]any{"id": f.variation[longName].ID, "material_id": f.chrome.ID},
		fmt.Sprint(f.option["Engraving"].ID):  map[string]any{"id": f.variation["Backrest Plaque"].ID, "text_value": "Ada <3"},
	}
	raw, _ := json.Marshal(overrides)
	link, err := links.Create(a.Open(0, rec.ID), c, raw)
	if err != nil {
		t.Fatalf("create share link: %v", err)
	}
	f.key = link.Key
	return f
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// TestPage checks the HTML and headers the page answers: the Content
// Security Policy allows images from the storage only, and only the
// thumbnail stored there is on the page.
func TestPage(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		wantCSP := "default-src 'none'; style-src 'unsafe-inline'; img-src " + f.base + "/files/"

		res, body := get(t, f.base+"/share/"+f.key)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET /share/{key} = %d %s:\n%s", res.StatusCode, res.Header.Get("Content-Type"), body)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != wantCSP {
			t.Errorf("Content-Security-Policy = %q; want %q", got, wantCSP)
		}
		for _, want := range []string{
			"<h1>Oslo Lounge Chair</h1>", "<h2>Frame Size</h2>", "<h2>Frame Wood</h2>", "<h2>Engraving</h2>",
			`<img class="thumb" src="` + f.base + `/files/`,
			`style="background-color: #C8A165"`, `style="background-color: #DADDE1"`,
			`<dd data-field="text_value">Ada &lt;3</dd>`,
			fmt.Sprintf(`<dd data-field="material_id" data-material-id="%d">Polished Chrome</dd>`, f.chrome.ID),
		} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %s:\n%s", want, body)
			}
		}
		if n := strings.Count(body, "<img "); n != 1 {
			t.Errorf("page has %d images; want 1, oak's thumbnail (suede's is on another host, chrome has none):\n%s", n, body)
		}
		if strings.Contains(body, "assets.configurator.example") || strings.Contains(body, "<script") {
			t.Errorf("page refers to another host or has a script:\n%s", body)
		}

		for _, key := range []string{"0123456789abcdef0123456789abcdef", "nope"} {
			res, body := get(t, f.base+"/share/"+key)
			if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Link not found") || res.Header.Get("Content-Security-Policy") != wantCSP {
				t.Errorf("GET /share/%s = %d (CSP %q):\n%s\nwant the 404 page", key, res.StatusCode, res.Header.Get("Content-Security-Policy"), body)
			}
		}
		res, err := http.Post(f.base+"/share/"+f.key, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST = %d, Allow %q; want 405 with GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
		}
	})
}

// TestImageSource: the img-src of the policy is the storage's public base,
// path included, and no images at all when it cannot be written into the
// header safely.
func TestImageSource(t *testing.T) {
	notFound := func(context.Context, string) (*share.Configurator, error) { return nil, share.ErrNotFound }
	for _, tc := range []struct {
		name  string
		files *storage.Files
		want  string
	}{
		{"none", nil, "default-src 'none'; style-src 'unsafe-inline'"},
		{"same host", &storage.Files{BaseURL: "http://localhost:8080/files/"}, "default-src 'none'; style-src 'unsafe-inline'; img-src http://localhost:8080/files/"},
		{"no trailing slash", &storage.Files{BaseURL: "https://shop.example.com/cat/files"}, "default-src 'none'; style-src 'unsafe-inline'; img-src https://shop.example.com/cat/files/"},
		{"escaped path", &storage.Files{BaseURL: "https://shop.example.com/my files/"}, "default-src 'none'; style-src 'unsafe-inline'; img-src https://shop.example.com/my%20files/"},
		{"separator in path", &storage.Files{BaseURL: "https://shop.example.com/a;script-src *;/"}, "default-src 'none'; style-src 'unsafe-inline'"},
		{"comma in path", &storage.Files{BaseURL: "https://shop.example.com/a,b/"}, "default-src 'none'; style-src 'unsafe-inline'"},
		{"other scheme", &storage.Files{BaseURL: "ftp://shop.example.com/files/"}, "default-src 'none'; style-src 'unsafe-inline'"},
		{"relative", &storage.Files{BaseURL: "/files/"}, "default-src 'none'; style-src 'unsafe-inline'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			sharepage.Handler(notFound, nil, tc.files).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/0123456789abcdef0123456789abcdef", nil))
			if got := rec.Header().Get("Content-Security-Policy"); got != tc.want {
				t.Errorf("Content-Security-Policy = %q; want %q", got, tc.want)
			}
			if rec.Code != http.StatusNotFound {
				t.Errorf("status = %d; want 404", rec.Code)
			}
		})
	}
}

// phoneReport is what TestPhone reads from the page in the browser.
type phoneReport struct {
	Titles []string
	// Chosen maps an option's title to the names of its variations marked
	// chosen (class, aria-current and the visible badge).
	Chosen map[string][]string
	// Swatches maps a variation's name to its swatch's data-color and
	// computed background colour.
	Swatches map[string][2]string
	// Thumbs are the page's images: src, alt and natural width.
	Thumbs []struct {
		Src, Alt string
		Width    int
	}
	ScrollWidth, ClientWidth int
	// Clipped lists the elements whose box ends right of the viewport.
	Clipped []string
}

// TestPhone opens a share link in headless Chromium as a 390 px wide phone
// and checks what the shopper sees; the screenshot is kept as the test's
// artefact (go test -artifacts keeps it under -outputdir).
func TestPhone(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		ctx := testkit.Browser(t)
		rec := testkit.Record(ctx)
		var report phoneReport
		var shot []byte
		err := chromedp.Run(ctx,
			emulation.SetDeviceMetricsOverride(390, 844, 3, true).
				WithScreenOrientation(&emulation.ScreenOrientation{Type: emulation.OrientationTypePortraitPrimary, Angle: 0}),
			chromedp.Navigate(f.base+"/share/"+f.key),
			chromedp.WaitVisible(`#configurator h1`, chromedp.ByQuery),
			// Images load after the document: wait for each to finish (or fail).
			chromedp.Poll(`document.images.length > 0 && Array.from(document.images).every(i => i.complete)`, nil),
			chromedp.Evaluate(`(() => {
				const visible = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
				const name = li => li.querySelector('.name').textContent;
				const report = {Titles: [], Chosen: {}, Swatches: {}, Thumbs: [], Clipped: [],
					ScrollWidth: document.documentElement.scrollWidth, ClientWidth: document.documentElement.clientWidth};
				for (const s of document.querySelectorAll('section.option')) {
					const h = s.querySelector('h2');
					if (visible(h)) report.Titles.push(h.textContent);
					report.Chosen[h.textContent] = Array.from(s.querySelectorAll('li'))
						.filter(li => li.classList.contains('selected') && li.getAttribute('aria-current') === 'true' &&
							li.querySelector('.chosen') && visible(li.querySelector('.chosen')))
						.map(name);
				}
				for (const li of document.querySelectorAll('li')) {
					const sw = li.querySelector('.swatch');
					if (sw && visible(sw)) report.Swatches[name(li)] = [sw.dataset.color, getComputedStyle(sw).backgroundColor];
				}
				for (const i of document.images) report.Thumbs.push({Src: i.currentSrc, Alt: i.alt, Width: i.naturalWidth});
				for (const e of document.querySelectorAll('body *')) {
					if (e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5) report.Clipped.push(e.tagName + '.' + e.className);
				}
				return report;
			})()`, &report),
			chromedp.FullScreenshot(&shot, 100), // 100: PNG
		)
		if err != nil {
			t.Fatalf("open the share page as a phone: %v", err)
		}
		path := filepath.Join(t.ArtifactDir(), "share-page-390.png")
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)

		if got := strings.Join(report.Titles, ", "); got != "Frame Size, Frame Wood, Engraving" {
			t.Errorf("visible option titles: %s; want Frame Size, Frame Wood, Engraving", got)
		}
		for title, want := range map[string]string{"Frame Size": "Grand", "Frame Wood": "Oak frame", "Engraving": ""} {
			if got := strings.Join(report.Chosen[title], ", "); got != want {
				t.Errorf("%s: marked chosen %q; want %q", title, got, want)
			}
		}
		for name, m := range map[string]*ent.Material{"Oak frame": f.oak, "Suede frame": f.suede, longName: f.chrome} {
			sw, ok := report.Swatches[name]
			if want := rgb(t, m.Color); !ok || sw[0] != m.Color || sw[1] != want {
				t.Errorf("%s: swatch %q; want %s shown as %s", name, sw, m.Color, want)
			}
		}
		// Oak's stored thumbnail, on the oak frame: the long-named variation
		// was oak too until the link made it chrome, which has none, and
		// suede's thumbnail is on another host.
		if len(report.Thumbs) != 1 {
			t.Errorf("images: %+v; want oak's thumbnail once", report.Thumbs)
		}
		for _, th := range report.Thumbs {
			if !strings.HasPrefix(th.Src, f.base+"/files/") || th.Alt != "Texture of Natural Oak" || th.Width != 100 {
				t.Errorf("image %+v; want oak's stored thumbnail, loaded (100 px wide)", th)
			}
		}
		if report.ScrollWidth > 390 || report.ClientWidth != 390 || len(report.Clipped) > 0 {
			t.Errorf("at 390 px: scrollWidth %d, clientWidth %d, clipped %q; want no horizontal scroll", report.ScrollWidth, report.ClientWidth, report.Clipped)
		}
		rec.CheckOffline(t)
	})
}

// rgb is how a browser computes the colour #RRGGBB.
func rgb(t *testing.T, hex string) string {
	t.Helper()
	var r, g, b uint8
	if _, err := fmt.Sscanf(hex, "#%02X%02X%02X", &r, &g, &b); err != nil {
		t.Fatalf("colour %q: %v", hex, err)
	}
	return fmt.Sprintf("rgb(%d, %d, %d)", r, g, b)
}
