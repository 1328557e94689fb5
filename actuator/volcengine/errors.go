package volcengine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/volcengine/volcengine-go-sdk/volcengine/request"
	"github.com/volcengine/volcengine-go-sdk/volcengine/volcengineerr"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/redact"
)

// APIError is a failed OpenAPI call: the provider's code, message and
// request ID, and the HTTP status. It unwraps to one of the actuator
// sentinels (ErrThrottled, ErrTransient, ErrRejected), so the safety layer
// decides on retries with errors.Is while people read the provider's own
// words.
type APIError struct {
	// Action is the OpenAPI action, e.g. "StopInstances".
	Action string
	// Code and Message are ResponseMetadata.Error (or, for batch calls,
	// the per-instance OperationDetails error).
	Code, Message string
	// RequestID is ResponseMetadata.RequestId, for support tickets.
	RequestID string
	// HTTPStatus is the reply's status code (200 for per-instance errors
	// of a successful batch call; 0 when no reply arrived).
	HTTPStatus int
	// Kind is actuator.ErrThrottled, ErrTransient or ErrRejected.
	Kind error
}

// Error reads "volcengine Action: kind: Code: Message (HTTP status,
// RequestId id)", the provider's own words first.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "volcengine %s: %v: %s", e.Action, e.Kind, e.Code)
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d", e.HTTPStatus)
	} else {
		b.WriteString(" (")
	}
	if e.RequestID != "" {
		if e.HTTPStatus != 0 {
			b.WriteString(", ")
		}
		b.WriteString("RequestId " + e.RequestID)
	}
	b.WriteString(")")
	return strings.Replace(b.String(), " ()", "", 1)
}

// Unwrap returns the sentinel.
func (e *APIError) Unwrap() error { return e.Kind }

// throttleCodes are error codes meaning "slow down". Volcengine's gateway
// answers HTTP 429 with AccountFlowLimitExceeded; the rest are the codes
// the SDK's own retryer treats as throttling, plus prefixes seen in
// Volcengine products (RateLimitExceeded.*, FlowLimitExceeded).
var throttleCodes = map[string]bool{
	"Throttling": true, "ThrottlingException": true, "RequestLimitExceeded": true,
	"RequestThrottled": true, "RequestThrottledException": true, "TooManyRequests": true,
	"TooManyRequestsException": true, "AccountFlowLimitExceeded": true, "FlowLimitExceeded": true,
	"APIFlowLimitExceeded": true, "RateLimitExceeded": true,
}

// codeMalformedResponse marks a reply that was not an OpenAPI envelope.
const codeMalformedResponse = "MalformedResponse"

// transientCodes are error codes of server-side trouble worth a retry even
// when the status is not 5xx.
var transientCodes = map[string]bool{
	"InternalError": true, "InternalServiceError": true, "InternalServerError": true,
	"ServiceUnavailable": true, "ServiceUnavailableException": true,
	"InternalServiceTimeout": true, "RequestTimeout": true, "GatewayTimeout": true,
	codeMalformedResponse: true,
}

// classify maps an HTTP status and error code to a sentinel.
func classify(status int, code string) error {
	switch {
	case status == http.StatusTooManyRequests, throttleCodes[code],
		strings.HasPrefix(code, "RateLimitExceeded."), strings.Contains(code, "FlowLimit"), strings.HasPrefix(code, "Throttling."):
		return actuator.ErrThrottled
	case code == codeMalformedResponse && status >= 400 && status < 500:
		// A 4xx page that is not an envelope (a WAF, a misrouted proxy):
		// retrying will not fix the route.
		return actuator.ErrRejected
	case status >= 500, transientCodes[code], strings.HasPrefix(code, "InternalError."):
		return actuator.ErrTransient
	default:
		return actuator.ErrRejected
	}
}

// send runs an SDK request under ctx and turns any failure into an error
// wrapping an actuator sentinel (or ctx's error when the caller gave up).
// It returns the reply's RequestId, when one arrived, for audit.
func (a *Actuator) send(ctx context.Context, action string, req *request.Request) (string, error) {
	req.SetContext(ctx)
	err := req.Send()
	requestID := req.RequestID
	if md := req.Metadata; md.RequestId != "" {
		requestID = md.RequestId
	}
	requestID = a.red.Snippet(requestID, 128) // the reply's words, like any other
	if err == nil {
		return requestID, nil
	}
	status := 0
	if req.HTTPResponse != nil {
		status = req.HTTPResponse.StatusCode
	}
	return requestID, wrapSDKError(ctx, action, status, requestID, err, a.red)
}

// maxMessageBytes bounds the provider's message kept in an APIError.
const maxMessageBytes = 1024

// wrapSDKError classifies a failed SDK request: the caller's context
// first, then an error envelope, then a reply that was no envelope, then no
// reply at all. The provider's message is redacted by red, then cut to
// maxMessageBytes on one line.
func wrapSDKError(ctx context.Context, action string, status int, requestID string, err error, red *redact.Redactor) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("volcengine %s: %w", action, ctxErr)
	}
	var reqFail volcengineerr.RequestFailure
	if errors.As(err, &reqFail) && reqFail.Code() != "" {
		if s := reqFail.StatusCode(); s != 0 {
			status = s
		}
		if id := reqFail.RequestID(); id != "" {
			requestID = red.Snippet(id, 128)
		}
		return &APIError{
			Action: action, Code: red.Snippet(reqFail.Code(), 128), Message: red.Snippet(reqFail.Message(), maxMessageBytes),
			RequestID: requestID, HTTPStatus: status, Kind: classify(status, reqFail.Code()),
		}
	}
	if status != 0 {
		// A reply arrived but was not an envelope (a proxy's HTML page,
		// truncated JSON): the status decides.
		code := http.StatusText(status)
		if status < 300 {
			code = codeMalformedResponse
		}
		kind := classify(status, "")
		if status < 300 {
			kind = actuator.ErrTransient
		}
		return &APIError{Action: action, Code: code, Message: "the reply is not an OpenAPI envelope", RequestID: requestID, HTTPStatus: status, Kind: kind}
	}
	// No reply: connection refused, reset, timeout.
	var netErr net.Error
	var sdkErr volcengineerr.Error
	reason := err.Error()
	if errors.As(err, &sdkErr) {
		reason = sdkErr.Message()
		if orig := sdkErr.OrigErr(); orig != nil {
			reason = orig.Error()
		}
	}
	reason = red.Snippet(reason, maxMessageBytes)
	timedOut := errors.As(err, &netErr) && netErr.Timeout()
	if sdkErr != nil && sdkErr.OrigErr() != nil && errors.As(sdkErr.OrigErr(), &netErr) && netErr.Timeout() {
		timedOut = true
	}
	if timedOut {
		return fmt.Errorf("volcengine %s: %w: timed out: %s", action, actuator.ErrTransient, reason)
	}
	return fmt.Errorf("volcengine %s: %w: %s", action, actuator.ErrTransient, reason)
}
