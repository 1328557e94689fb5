package actuatortest

import (
	"bytes"
	"io"
	"net/http"
)

// Reply is an http.RoundTripper that answers every request with one
// status and body (as JSON), without a network: the fuzz targets of the
// HTTP back-ends use it so that each input costs a decoding, not a
// connection.
type Reply struct {
	Status int
	Body   []byte
}

// RoundTrip implements http.RoundTripper.
func (rt Reply) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{StatusCode: rt.Status, Body: io.NopCloser(bytes.NewReader(rt.Body)),
		Header: http.Header{"Content-Type": {"application/json"}}, Request: r}, nil
}
