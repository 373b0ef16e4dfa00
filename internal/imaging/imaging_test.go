package imaging

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/configurator/catalogue/internal/testkit"
)

// webp1x1 is a valid 1×1 transparent lossless WebP (simple RIFF layout:
// "RIFF", size, "WEBP", then one VP8L chunk). No WebP encoder exists in the
// standard library or x/image, so the tests carry its bytes.
var webp1x1 = []byte{
	'R', 'I', 'F', 'F', 0x1a, 0x00, 0x00, 0x00, 'W', 'E', 'B', 'P',
	'V', 'P', '8', 'L', 0x0d, 0x00, 0x00, 0x00,
	0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00,
}

// vp8lPayload returns the VP8L chunk payload of webp1x1 with its declared
// size changed to w×h. Its prefix codes each hold a single symbol, which
// costs no bits per pixel, so the result is a valid solid image of any size
// VP8L allows (up to 16384 per side).
func vp8lPayload(t *testing.T, w, h int) []byte {
	t.Helper()
	p := bytes.Clone(webp1x1[20:33])
	bits := binary.LittleEndian.Uint32(p[1:5])
	bits = bits&^(1<<28-1) | uint32(w-1) | uint32(h-1)<<14
	binary.LittleEndian.PutUint32(p[1:5], bits)
	return p
}

// riffWebP assembles a WebP file from its chunks, each given as a FourCC
// followed by its payload.
func riffWebP(chunks ...[]byte) []byte {
	var body bytes.Buffer
	body.WriteString("WEBP")
	for _, c := range chunks {
		body.Write(c[:4])
		_ = binary.Write(&body, binary.LittleEndian, uint32(len(c)-4))
		body.Write(c[4:])
		if (len(c)-4)%2 == 1 {
			body.WriteByte(0)
		}
	}
	var out bytes.Buffer
	out.WriteString("RIFF")
	_ = binary.Write(&out, binary.LittleEndian, uint32(body.Len()))
	out.Write(body.Bytes())
	return out.Bytes()
}

// webpSimple is a simple-layout lossless WebP of w×h.
func webpSimple(t *testing.T, w, h int) []byte {
	return riffWebP(append([]byte("VP8L"), vp8lPayload(t, w, h)...))
}

// webpExtended is an extended-layout (VP8X) WebP whose canvas is cw×ch,
// with the given VP8X flags, around a lossless image of iw×ih.
func webpExtended(t *testing.T, flags byte, cw, ch, iw, ih int) []byte {
	x := []byte("VP8X")
	x = append(x, flags, 0, 0, 0,
		byte(cw-1), byte((cw-1)>>8), byte((cw-1)>>16),
		byte(ch-1), byte((ch-1)>>8), byte((ch-1)>>16))
	return riffWebP(x, append([]byte("VP8L"), vp8lPayload(t, iw, ih)...))
}

// pngHeader is a PNG signature and an IHDR chunk (8-bit truecolour)
// declaring w×h, with no pixel data: enough for a decoder to learn the size.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	data := binary.BigEndian.AppendUint32(nil, w)
	data = binary.BigEndian.AppendUint32(data, h)
	data = append(data, 8, 2, 0, 0, 0)
	_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
	typed := append([]byte("IHDR"), data...)
	b.Write(typed)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(typed))
	return b.Bytes()
}

func TestEmbeddedWebPDecodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		w, h int
	}{
		{"1x1 bytes", webp1x1, 1, 1},
		{"rebuilt 1x1", webpSimple(t, 1, 1), 1, 1},
		{"400x200", webpSimple(t, 400, 200), 400, 200},
		{"extended 3x5", webpExtended(t, 0, 3, 5, 3, 5), 3, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, format, err := image.Decode(bytes.NewReader(tc.data))
			if err != nil {
				t.Fatalf("image.Decode: %v", err)
			}
			if format != "webp" {
				t.Errorf("format = %q, want webp", format)
			}
			if got := m.Bounds().Size(); got != image.Pt(tc.w, tc.h) {
				t.Errorf("size = %v, want %dx%d", got, tc.w, tc.h)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	validPNG := testkit.PNG(10, 5, 1)
	tests := []struct {
		name    string
		data    []byte
		want    Format
		wantErr error
		wantMsg string
	}{
		{name: "png", data: validPNG, want: PNG},
		{name: "jpeg", data: testkit.JPEG(10, 5, 2), want: JPEG},
		{name: "webp lossless 1x1", data: webp1x1, want: WebP},
		{name: "webp lossless 400x200", data: webpSimple(t, 400, 200), want: WebP},
		{name: "webp extended", data: webpExtended(t, 0, 7, 9, 7, 9), want: WebP},
		{name: "png header at the limits", data: pngHeader(MaxSide, MaxPixels/MaxSide), want: PNG},

		{name: "gif", data: testkit.GIF(4, 4), wantErr: ErrUnsupported,
			wantMsg: "the file is not a PNG, JPEG or WebP image"},
		{name: "bmp", data: append([]byte("BM"), make([]byte, 60)...), wantErr: ErrUnsupported},
		{name: "text", data: []byte("hello, this is not an image\n"), wantErr: ErrUnsupported,
			wantMsg: "the file is not a PNG, JPEG or WebP image"},
		{name: "html pretending", data: []byte("<html><script>alert(1)</script>"), wantErr: ErrUnsupported},
		{name: "empty", data: []byte{}, wantErr: ErrUnsupported},
		{name: "nil", data: nil, wantErr: ErrUnsupported},
		{name: "png signature then garbage", data: append([]byte("\x89PNG\r\n\x1a\n"), []byte("garbage garbage garbage")...),
			wantErr: ErrUnsupported, wantMsg: "the file is not a valid PNG image"},
		{name: "png truncated in header", data: validPNG[:20], wantErr: ErrUnsupported},
		{name: "png signature only", data: validPNG[:8], wantErr: ErrUnsupported},
		{name: "jpeg marker then garbage", data: append([]byte{0xff, 0xd8, 0xff}, []byte("garbage garbage")...),
			wantErr: ErrUnsupported, wantMsg: "the file is not a valid JPEG image"},
		{name: "riff webp then garbage", data: []byte("RIFF\x10\x00\x00\x00WEBPgarbage!"), wantErr: ErrUnsupported},
		{name: "riff but wave", data: []byte("RIFF\x04\x00\x00\x00WAVE"), wantErr: ErrUnsupported},
		{name: "png zero width", data: pngHeader(0, 5), wantErr: ErrUnsupported},
		{name: "webp animated", data: webpExtended(t, 1<<1, 4, 4, 4, 4), wantErr: ErrUnsupported,
			wantMsg: "animated WebP images are not supported"},
		{name: "webp canvas smaller than its image", data: webpExtended(t, 0, 10, 10, 16384, 16384), wantErr: ErrUnsupported},

		{name: "png declaring 100000x100000", data: pngHeader(100000, 100000), wantErr: ErrTooBig,
			wantMsg: "the image is 100000×100000 pixels; the limit is 8192 per side"},
		{name: "png one pixel too wide", data: pngHeader(MaxSide+1, 1), wantErr: ErrTooBig},
		{name: "png too many pixels", data: pngHeader(MaxSide, MaxSide), wantErr: ErrTooBig,
			wantMsg: "the image is 8192×8192 pixels; the limit is 40000000 pixels in all"},
		{name: "webp 16384x16384", data: webpSimple(t, 16384, 16384), wantErr: ErrTooBig},
		{name: "webp extended 16384x16384", data: webpExtended(t, 0, 16384, 16384, 16384, 16384), wantErr: ErrTooBig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(tc.data)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Check() error = %v, want one wrapping %v", err, tc.wantErr)
				}
				if tc.wantMsg != "" && err.Error() != tc.wantMsg {
					t.Errorf("message = %q, want %q", err.Error(), tc.wantMsg)
				}
				if got != "" {
					t.Errorf("format = %q with an error, want none", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check() error = %v", err)
			}
			if got != tc.want {
				t.Errorf("format = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name        string
		format      Format
		contentType string
		ext         string
	}{
		{"png", PNG, "image/png", ".png"},
		{"jpeg", JPEG, "image/jpeg", ".jpg"},
		{"webp", WebP, "image/webp", ".webp"},
		{"unknown", Format("gif"), "application/octet-stream", ""},
		{"empty", Format(""), "application/octet-stream", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.format.ContentType(); got != tc.contentType {
				t.Errorf("ContentType() = %q, want %q", got, tc.contentType)
			}
			if got := tc.format.Ext(); got != tc.ext {
				t.Errorf("Ext() = %q, want %q", got, tc.ext)
			}
		})
	}
}

func TestThumbnail(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		size int
		w, h int
	}{
		{"landscape png", testkit.PNG(400, 200, 1), 50, 50, 25},
		{"portrait png", testkit.PNG(200, 400, 1), 50, 25, 50},
		{"square png", testkit.PNG(300, 300, 1), 50, 50, 50},
		{"tiny png is scaled up", testkit.PNG(4, 2, 1), 50, 50, 25},
		{"exact size unchanged", testkit.PNG(50, 20, 1), 50, 50, 20},
		{"thin strip keeps one pixel", testkit.PNG(1000, 3, 1), 50, 50, 1},
		{"jpeg rounds half up", testkit.JPEG(640, 480, 2), 50, 50, 38},
		{"webp landscape", webpSimple(t, 400, 200), 50, 50, 25},
		{"webp 1x1", webp1x1, 64, 64, 64},
		{"size one", testkit.PNG(30, 10, 1), 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Thumbnail(tc.data, tc.size)
			if err != nil {
				t.Fatalf("Thumbnail() error = %v", err)
			}
			if f, err := Check(out); err != nil || f != PNG {
				t.Fatalf("output is %q, %v; want a PNG", f, err)
			}
			m, err := png.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Bounds(); got != image.Rect(0, 0, tc.w, tc.h) {
				t.Errorf("bounds = %v, want %dx%d", got, tc.w, tc.h)
			}
		})
	}
}

func TestThumbnailKeepsColour(t *testing.T) {
	// One colour throughout, so that every pixel of the thumbnail must
	// keep it exactly.
	out, err := Thumbnail(testkit.SolidPNG(400, 200, color.RGBA{R: 200, G: 30, B: 30, A: 255}), 50)
	if err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, a := m.At(25, 12).RGBA()
	if r>>8 != 200 || g>>8 != 30 || b>>8 != 30 || a>>8 != 255 {
		t.Errorf("centre pixel = %d,%d,%d,%d, want 200,30,30,255", r>>8, g>>8, b>>8, a>>8)
	}
}

func TestThumbnailErrors(t *testing.T) {
	valid := testkit.PNG(40, 20, 1)
	// A PNG whose header is sound but whose pixel data is cut off passes
	// Check (headers only) and must fail when decoded.
	truncated := valid[:len(valid)-20]
	if _, err := Check(truncated); err != nil {
		t.Fatalf("Check(truncated) = %v; the case needs a file that passes Check", err)
	}
	tests := []struct {
		name    string
		data    []byte
		size    int
		wantErr error
	}{
		{"size zero", valid, 0, nil},
		{"size negative", valid, -5, nil},
		{"size over MaxSide", valid, MaxSide + 1, nil},
		{"text", []byte("not an image"), 50, ErrUnsupported},
		{"gif", testkit.GIF(4, 4), 50, ErrUnsupported},
		{"bomb", pngHeader(100000, 100000), 50, ErrTooBig},
		{"truncated pixel data", truncated, 50, ErrUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Thumbnail(tc.data, tc.size)
			if err == nil {
				t.Fatalf("Thumbnail() = %d bytes, want an error", len(out))
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error = %v, want one wrapping %v", err, tc.wantErr)
			}
		})
	}
}
