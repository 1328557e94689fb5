package traceeval

import (
	"fmt"
	"os"
	"strings"
)

// LoadReference reads R's reference scores: the copy built in (path ""),
// none (path "none"), or those of the file path. key names the setting
// that gave path (a flag), for the error of a file that does not open.
func LoadReference(path, key string) ([]RefScore, error) {
	switch path {
	case "none":
		return nil, nil
	case "":
		return ReadReference(strings.NewReader(Reference), "r_reference.csv (built in)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	defer f.Close()
	return ReadReference(f, path)
}

// ExportWindows writes windows to the CSV file path (WriteWindows), for
// testdata/r_reference.R. key names the setting that gave path (a flag),
// for the errors of creating and closing the file.
func ExportWindows(path, key string, windows []Window) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if err := WriteWindows(f, windows); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}
