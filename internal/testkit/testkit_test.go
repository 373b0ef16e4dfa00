package testkit

import (
	"bytes"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"net"
	"strconv"
	"sync"
	"testing"
)

func TestFreeAddrCanBeBound(t *testing.T) {
	addr := FreeAddr(t)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("FreeAddr %s cannot be bound: %v", addr, err)
	}
	ln.Close()
	port := FreePort(t)
	if port <= 0 || port > 65535 {
		t.Fatalf("FreePort = %d", port)
	}
	ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("FreePort %d cannot be bound: %v", port, err)
	}
	ln.Close()
}

func TestSyncBufferConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Fatalf("%d bytes; want 800", n)
	}
}

func TestImagesDecode(t *testing.T) {
	for name, c := range map[string]struct {
		data   []byte
		format string
		w, h   int
	}{
		"png":   {PNG(30, 20, 1), "png", 30, 20},
		"jpeg":  {JPEG(16, 40, 2), "jpeg", 16, 40},
		"gif":   {GIF(8, 8), "gif", 8, 8},
		"noise": {NoisePNG(10000), "png", 128, 128},
	} {
		cfg, format, err := image.DecodeConfig(bytes.NewReader(c.data))
		if err != nil || format != c.format || cfg.Width != c.w || cfg.Height != c.h {
			t.Errorf("%s: %s %dx%d, %v; want %s %dx%d", name, format, cfg.Width, cfg.Height, err, c.format, c.w, c.h)
		}
	}
	if n := len(NoisePNG(100000)); n <= 100000 {
		t.Errorf("NoisePNG(100000) has %d bytes", n)
	}
	if bytes.Equal(PNG(8, 8, 1), PNG(8, 8, 2)) || !bytes.Equal(PNG(8, 8, 1), PNG(8, 8, 1)) {
		t.Error("PNG: seeds do not tell images apart, or one seed gives two images")
	}
}
