package service

import (
	"strings"
	"testing"
)

// decodeBody takes one JSON object with each key once and nothing after
// it; anything a lax decoder would settle by guessing is an error.
func TestDecodeBody(t *testing.T) {
	type inner struct {
		A int `json:"a"`
	}
	type body struct {
		Mode  string  `json:"mode"`
		Inner inner   `json:"inner"`
		List  []inner `json:"list"`
	}
	tests := []struct {
		name, in, err string
	}{
		{"plain", `{"mode":"active"}`, ""},
		{"nested", `{"mode":"a","inner":{"a":1},"list":[{"a":1},{"a":2}]}`, ""},
		{"same key in sibling objects", `{"list":[{"a":1},{"a":1}]}`, ""},
		{"whitespace after", "{\"mode\":\"a\"}\n\t ", ""},
		{"duplicate", `{"mode":"a","mode":"b"}`, `key "mode" given twice`},
		{"duplicate nested", `{"inner":{"a":1,"a":2}}`, `key "a" given twice`},
		{"duplicate in a list", `{"list":[{"a":1,"a":2}]}`, `key "a" given twice`},
		{"duplicate after a nested value", `{"inner":{"a":1},"inner":{"a":2}}`, `key "inner" given twice`},
		{"second object", `{"mode":"a"}{"mode":"b"}`, "after the JSON object"},
		{"garbage after", `{"mode":"a"} x`, "after the JSON object"},
		{"unknown field", `{"mode":"a","force":true}`, "unknown field"},
		{"not an object", `"active"`, "cannot unmarshal"},
		{"empty", " ", "empty body"},
		{"too large", `{"mode":"` + strings.Repeat("a", 100) + `"}`, "over 64 bytes"},
		{"unterminated", `{"mode":"a"`, "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b body
			err := decodeBody(strings.NewReader(tt.in), 64, &b)
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want one saying %q", err, tt.err)
			}
		})
	}
}
