package remote

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sync"

	"github.com/prewarm/prewarm/store"
)

// Handler serves the query API (see the package doc) over q. Mount it at
// Path. It only reads: nothing sent to it can change the store.
func Handler(q store.Querier) http.Handler {
	return &handler{q: q, bufs: sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}}
}

type handler struct {
	q store.Querier
	// bufs recycles response buffers: an answer is built whole before it
	// is sent, so that a store error can still become a proper status.
	bufs sync.Pool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "", "method "+r.Method+" not allowed: the query API is read-only (GET)")
		return
	}
	// Not r.URL.Query(): it silently drops pairs it cannot unescape.
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "malformed query string: "+err.Error())
		return
	}
	q, perr := parseQuery(values)
	if perr != nil {
		writeError(w, http.StatusBadRequest, perr.param, perr.Error())
		return
	}
	series, err := h.q.Query(r.Context(), q)
	if err != nil {
		status := http.StatusInternalServerError
		switch {
		case errors.Is(err, store.ErrInvalidQuery):
			status = http.StatusBadRequest
		case errors.Is(err, store.ErrUnavailable):
			status = http.StatusServiceUnavailable
		case r.Context().Err() != nil:
			return // the client has gone; nobody reads an answer
		}
		writeError(w, status, "", err.Error())
		return
	}
	bp := h.bufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 4<<20 { // do not pin huge buffers
			h.bufs.Put(bp)
		}
	}()
	body, err := appendResponse((*bp)[:0], series)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "encoding the answer: "+err.Error())
		return
	}
	*bp = body
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// errorBody is the JSON of a refused request.
type errorBody struct {
	Error string `json:"error"`
	// Parameter names the query parameter at fault, when one is.
	Parameter string `json:"parameter,omitempty"`
}

func writeError(w http.ResponseWriter, status int, param, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorBody{Error: msg, Parameter: param})
}
