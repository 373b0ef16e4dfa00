package testkit

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
)

// Image is a w×h gradient tinted by seed: images of one size and
// different seeds differ, so that tests which store several files can tell
// them apart, and the same arguments always give the same pixels.
func Image(w, h int, seed uint8) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), seed, 255})
		}
	}
	return img
}

// PNG is Image encoded as PNG, the test images of every package (one
// maker, so that a change of what a valid upload is changes once).
func PNG(w, h int, seed uint8) []byte {
	return encode(func(b io.Writer) error { return png.Encode(b, Image(w, h, seed)) })
}

// SolidPNG is a w×h PNG of the one colour c, for a test that every pixel
// of a transformed image must keep.
func SolidPNG(w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	return encode(func(b io.Writer) error { return png.Encode(b, img) })
}

// JPEG is Image encoded as JPEG.
func JPEG(w, h int, seed uint8) []byte {
	return encode(func(b io.Writer) error { return jpeg.Encode(b, Image(w, h, seed), nil) })
}

// GIF is Image encoded as GIF, a format the service refuses.
func GIF(w, h int) []byte {
	return encode(func(b io.Writer) error { return gif.Encode(b, Image(w, h, 0), nil) })
}

// NoisePNG is a PNG of noise, which does not compress, of more than n
// bytes: an upload over a size limit that is still a valid image.
func NoisePNG(n int) []byte {
	side := 64
	for side*side*4 < 2*n {
		side *= 2
	}
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.UintN(256))
	}
	return encode(func(b io.Writer) error { return png.Encode(b, img) })
}

// encode runs an encoder into memory, where it cannot fail for the images
// above; a failure is a bug of this file.
func encode(f func(io.Writer) error) []byte {
	var b bytes.Buffer
	if err := f(&b); err != nil {
		panic("testkit: encoding a test image: " + err.Error())
	}
	return b.Bytes()
}
