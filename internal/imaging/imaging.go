// Package imaging decides what an uploaded image is. Clients upload order
// snapshots, print maps and textures; the service accepts only PNG, JPEG and
// WebP, identifies them by their content (never by a file name or a
// client-declared type, both of which lie), and refuses images whose
// dimensions would make decoding them exhaust memory.
//
// Importing the package registers the PNG, JPEG and WebP decoders with the
// image package, so image.Decode elsewhere in the service reads all three.
package imaging

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // registered with the image package
	"image/png"
	"io"

	"golang.org/x/image/draw"
	"golang.org/x/image/riff"
	"golang.org/x/image/vp8"
	"golang.org/x/image/vp8l"
	_ "golang.org/x/image/webp" // registered with the image package
)

// Format is an accepted image format. Its value is the lower-case name of
// the format, so it can be shown to clients and stored as it is.
type Format string

// The accepted formats.
const (
	PNG  Format = "png"
	JPEG Format = "jpeg"
	WebP Format = "webp"
)

// formats holds, for each accepted format, the media type a stored file is
// served with, the extension it is stored under and the name people write.
var formats = map[Format]struct{ contentType, ext, name string }{
	PNG:  {"image/png", ".png", "PNG"},
	JPEG: {"image/jpeg", ".jpg", "JPEG"},
	WebP: {"image/webp", ".webp", "WebP"},
}

// ContentType returns the media type a file of this format is served with,
// so a stored file is labelled by what its content was found to be. An
// unknown format answers application/octet-stream, which no browser renders
// or executes.
func (f Format) ContentType() string {
	if i, ok := formats[f]; ok {
		return i.contentType
	}
	return "application/octet-stream"
}

// Ext returns the file name extension, with its dot, under which a file of
// this format is stored, so the stored name alone says how to serve it. An
// unknown format answers "", so callers can tell it is not one to store.
func (f Format) Ext() string { return formats[f].ext }

// Limits on the images Check accepts. A small compressed file can declare an
// enormous image (a decompression bomb); decoding one allocates about four
// bytes per pixel, so these bound what a single upload can cost.
const (
	// MaxSide is the largest width or height accepted, in pixels.
	MaxSide = 8192
	// MaxPixels is the largest width×height accepted.
	MaxPixels = 40_000_000
)

var (
	// ErrUnsupported is wrapped by the errors for data that is not a PNG,
	// JPEG or WebP image, or is damaged, so callers can answer it as a bad
	// upload (for example HTTP 415) rather than as a failure of the service.
	ErrUnsupported = errors.New("the file is not a PNG, JPEG or WebP image")
	// ErrTooBig is wrapped by the errors for images whose dimensions are
	// over MaxSide or MaxPixels, so callers can answer it as a bad upload
	// (for example HTTP 413 or 422) naming the limit.
	ErrTooBig = errors.New("the image is too big")
)

// imageError is an error whose message is safe to show a client and which
// wraps one of the exported sentinels, so callers can both classify it with
// errors.Is and show its text as it is.
type imageError struct {
	msg  string
	kind error
}

func (e *imageError) Error() string { return e.msg }
func (e *imageError) Unwrap() error { return e.kind }

func unsupported(format string, args ...any) error {
	return &imageError{msg: fmt.Sprintf(format, args...), kind: ErrUnsupported}
}

// sniff names the format data starts like, from its magic bytes, or "".
func sniff(data []byte) Format {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return JPEG
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

// Check identifies data by its content (its magic bytes, never a file name
// or a client-declared type) and verifies that its header decodes as that
// format, with positive dimensions of at most MaxSide per side and MaxPixels
// in all, so the service stores only images it can serve and thumbnail.
//
// Check reads headers only (image.DecodeConfig), so it is cheap and a bomb
// costs nothing to refuse; a file whose header is sound but whose pixel data
// is damaged passes, and fails later in Thumbnail. For WebP it also refuses
// animations (which the decoder does not support) and an extended-format
// canvas whose size differs from the size of the image inside it, so the
// checked dimensions are the ones a decoder allocates.
//
// Errors wrap ErrUnsupported or ErrTooBig and their messages are safe to
// show a client, for example "the file is not a PNG, JPEG or WebP image" or
// "the image is 20000×20000 pixels; the limit is 8192 per side".
func Check(data []byte) (Format, error) {
	if len(data) == 0 {
		return "", unsupported("the file is empty; expected a PNG, JPEG or WebP image")
	}
	format := sniff(data)
	if format == "" {
		return "", ErrUnsupported
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err == nil && format == WebP {
		err = webpImage(data, cfg)
	}
	if err != nil {
		var ie *imageError
		if errors.As(err, &ie) {
			return "", err
		}
		return "", unsupported("the file is not a valid %s image", formats[format].name)
	}
	if err := checkSize(cfg.Width, cfg.Height); err != nil {
		return "", err
	}
	return format, nil
}

func checkSize(w, h int) error {
	tooBig := func(limit string) error {
		return &imageError{msg: fmt.Sprintf("the image is %d×%d pixels; the limit is %s", w, h, limit), kind: ErrTooBig}
	}
	switch {
	case w <= 0 || h <= 0:
		return unsupported("the image is %d×%d pixels; both sides must be positive", w, h)
	case w > MaxSide || h > MaxSide:
		return tooBig(fmt.Sprintf("%d per side", MaxSide))
	case int64(w)*int64(h) > MaxPixels:
		return tooBig(fmt.Sprintf("%d pixels in all", MaxPixels))
	}
	return nil
}

var (
	fccVP8  = riff.FourCC{'V', 'P', '8', ' '}
	fccVP8L = riff.FourCC{'V', 'P', '8', 'L'}
	fccVP8X = riff.FourCC{'V', 'P', '8', 'X'}
)

// webpImage checks the image inside a WebP file whose header declared
// cfg. webp.DecodeConfig answers the canvas size of an extended (VP8X)
// file without looking at the image inside, which the decoder then
// allocates by its own header; so this walks the chunks to the image and
// insists both sizes agree.
func webpImage(data []byte, cfg image.Config) error {
	_, chunks, err := riff.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	for {
		id, n, chunk, err := chunks.Next()
		if err == io.EOF {
			return unsupported("the file is not a valid WebP image")
		}
		if err != nil {
			return err
		}
		var w, h int
		switch id {
		case fccVP8X:
			var flags [1]byte
			if _, err := io.ReadFull(chunk, flags[:]); err != nil {
				return err
			}
			const animation = 1 << 1
			if flags[0]&animation != 0 {
				return unsupported("animated WebP images are not supported")
			}
			continue
		case fccVP8:
			d := vp8.NewDecoder()
			d.Init(chunk, int(n))
			fh, err := d.DecodeFrameHeader()
			if err != nil {
				return err
			}
			w, h = fh.Width, fh.Height
		case fccVP8L:
			c, err := vp8l.DecodeConfig(chunk)
			if err != nil {
				return err
			}
			w, h = c.Width, c.Height
		default:
			continue
		}
		if w != cfg.Width || h != cfg.Height {
			return unsupported("the file is not a valid WebP image: its canvas is %d×%d pixels but its image is %d×%d",
				cfg.Width, cfg.Height, w, h)
		}
		return nil
	}
}

// Thumbnail decodes data (a PNG, JPEG or WebP image, checked first with
// Check so a bomb is never decoded) and returns a PNG of it scaled to fit
// in size×size, keeping its aspect ratio, so previews have a predictable
// footprint whatever was uploaded.
//
// The longer side of the result is always exactly size and the shorter one
// is rounded, and at least one pixel: a large image is scaled down and a
// small one is scaled up, so callers can lay thumbnails out without
// measuring them. Scaling uses Catmull-Rom, which stays sharp when
// shrinking photographs and textures. size must be between 1 and MaxSide.
func Thumbnail(data []byte, size int) ([]byte, error) {
	if size < 1 || size > MaxSide {
		return nil, fmt.Errorf("thumbnail size %d: must be between 1 and %d", size, MaxSide)
	}
	format, err := Check(data)
	if err != nil {
		return nil, err
	}
	// Check has named the format; the image package picks its decoder by
	// the same magic bytes.
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, unsupported("the file is not a valid %s image", formats[format].name)
	}
	sb := src.Bounds()
	w, h := fit(sb.Dx(), sb.Dy(), size)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, sb, draw.Src, nil)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return nil, fmt.Errorf("encode thumbnail: %w", err)
	}
	return out.Bytes(), nil
}

// fit returns the size of a w×h image scaled so its longer side is size.
func fit(w, h, size int) (int, int) {
	if w >= h {
		return size, max(1, int((int64(h)*int64(size)*2+int64(w))/(2*int64(w))))
	}
	return max(1, int((int64(w)*int64(size)*2+int64(h))/(2*int64(h)))), size
}
