package dcgm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/promscrape"
	"github.com/prewarm/prewarm/store"
)

// FuzzConvert feeds arbitrary pages through the parser and the DCGM mapping:
// no panics, and a page is either parsed or refused as malformed.
// Run: go test ./collector/dcgm -run=^$ -fuzz=FuzzConvert -fuzztime=20s
func FuzzConvert(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.prom"))
	for _, file := range files {
		page, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(page)
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		fams, err := promscrape.Parse(bytes.NewReader(page))
		if err != nil {
			if !errors.Is(err, collector.ErrMalformed) {
				t.Fatalf("parse error not marked malformed: %v", err)
			}
			return
		}
		points, err := Convert(fams)
		if err != nil && !errors.Is(err, collector.ErrMalformed) {
			t.Fatalf("convert error not marked malformed: %v", err)
		}
		for _, p := range points {
			if p.Measurement == "" || p.Tags[store.TagSource] != "dcgm" {
				t.Fatalf("bad point %+v", p)
			}
		}
	})
}
